"""Store fixtures: every test runs on a fresh SQLite file, and on a fresh PostgreSQL database when one is given."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from brokerage.model.snapshot import GridSnapshot
from brokerage.store.database import make_engine
from brokerage.store.schema import upgrade
from brokerage.synth.history import simulate_task_history


def postgres_url() -> str | None:
    """TEST_POSTGRES_URL, else DATABASE_URL when it points at PostgreSQL (see scripts/services.sh)."""
    url = os.environ.get("TEST_POSTGRES_URL") or os.environ.get("DATABASE_URL") or ""
    return url if url.startswith(("postgresql", "postgres:")) else None


BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgresql",
        id="postgresql",
        marks=[
            pytest.mark.postgres,
            pytest.mark.skipif(postgres_url() is None, reason="set TEST_POSTGRES_URL (scripts/services.sh start)"),
        ],
    ),
]


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[str]:
    """URL of an empty database without schema: a temporary SQLite file or a new PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.sqlite'}"
        return
    name = f"brokerage_test_{uuid.uuid4().hex[:12]}"
    try:
        yield _create_database(name)
    finally:
        _drop_database(name)


@pytest.fixture(scope="session")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Per backend, a database migrated to head once per session, which each test's database is a copy of
    (``upgrade`` takes about a second on SQLite and three on PostgreSQL; a copy a fraction of that)."""
    made: dict[str, str] = {}
    yield made
    if "postgresql" in made:
        _drop_database(made["postgresql"])


def _template(backend: str, made: dict[str, str], folder: Path) -> str:
    """The migrated template of BACKEND (a SQLite file path or a PostgreSQL database name), made on first use."""
    if backend not in made:
        if backend == "sqlite":
            url, made[backend] = f"sqlite:///{folder / 'migrated.sqlite'}", str(folder / "migrated.sqlite")
        else:
            made[backend] = f"brokerage_template_{uuid.uuid4().hex[:12]}"
            url = _create_database(made[backend])
        upgrade(url)  # disposes its engine: a template must have no open connection when it is copied
    return made[backend]


def _create_database(name: str, template: str | None = None) -> str:
    base = postgres_url()
    assert base is not None
    admin = make_engine(base).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    admin.engine.dispose()
    return base.rsplit("/", 1)[0] + "/" + name


def _drop_database(name: str) -> None:
    base = postgres_url()
    assert base is not None
    admin = make_engine(base).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin.engine.dispose()


@pytest.fixture
def engine(db_url: str, migrated: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """An engine on a fresh database with the schema created: db_url's database, made a copy of the session's
    migrated one (the same tables, indexes and alembic revision as ``upgrade`` gives)."""
    if db_url.startswith("sqlite"):
        template = _template("sqlite", migrated, tmp_path_factory.getbasetemp())
        shutil.copyfile(template, db_url.removeprefix("sqlite:///"))
    else:
        template = _template("postgresql", migrated, tmp_path_factory.getbasetemp())
        name = db_url.rsplit("/", 1)[1]
        _drop_database(name)  # db_url made it empty; it comes back as a copy of the template, under the same name
        _create_database(name, template)
    eng = make_engine(db_url)
    yield eng
    eng.dispose()


@pytest.fixture(scope="session")
def small_grid() -> GridSnapshot:
    """A small generated grid (brokerage.synth.demo) with a simulated task status history."""
    from brokerage.synth.demo import demo_snapshot

    snap = demo_snapshot(seed=3, queues=40, tasks=60)
    log = simulate_task_history(snap.tables["tasks"], snap.taken_at, seed=3)
    return GridSnapshot({**snap.tables, "task_status_log": log}, snap.taken_at, snap.snapshot_id, snap.version)


PANDA = Path(__file__).parents[1] / "data" / "panda"  # the subset of PanDA's schema read, and rows made for it


def make_panda(schema: str, meta: str) -> tuple[str, Any]:
    """A new database with PanDA's tables in SCHEMA and SiteData in META, rows of rows.sql; (url, drop function)."""
    name = f"panda_test_{uuid.uuid4().hex[:12]}"
    url = _create_database(name)
    panda = make_engine(url)
    with panda.begin() as conn:
        conn.exec_driver_sql(f"CREATE SCHEMA {schema}; SET search_path = {schema}")
        conn.exec_driver_sql((PANDA / "schema_subset.sql").read_text().replace("doma_pandameta", meta))
        conn.exec_driver_sql((PANDA / "rows.sql").read_text().replace("doma_pandameta", meta))
    panda.dispose()

    def drop() -> None:
        _drop_database(name)

    return url, drop
