"""Snapshot storage: round trips, replacement, versions, schema and engine settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brokerage.model.snapshot import GridSnapshot, SnapshotError, frame
from brokerage.model.tables import TABLES
from brokerage.sim.task_states import TransitionError
from brokerage.store import config_store, database, errors, repository
from brokerage.store.models import GRID_MODELS, JSON_TABLES, Base, table_of
from brokerage.store.schema import current_revision, head_revision, upgrade
from tests.db.helpers import edge_grid, frames_equal


def test_generated_grid_round_trips(engine: Any, small_grid: GridSnapshot) -> None:
    """A generated snapshot saved and loaded back has the same tables, row order, taken_at, id and version."""
    repository.save_snapshot(engine, small_grid)
    back = repository.load_snapshot(engine)
    frames_equal(small_grid, back)
    assert back.taken_at == small_grid.taken_at
    assert (back.snapshot_id, back.version) == (small_grid.snapshot_id, small_grid.version)


def test_awkward_values_round_trip(engine: Any) -> None:
    """Nulls, NaN, unicode, lists, JSON documents and sub-second times survive the database unchanged."""
    snap = edge_grid()
    repository.save_snapshot(engine, snap)
    back = repository.load_snapshot(engine)
    frames_equal(snap, back)
    assert back.tables["task_job_counts"]["modificationtime"].iloc[0].microsecond == 250000
    assert back.key == "edge@4"


def test_empty_tables_round_trip(engine: Any) -> None:
    """A grid with only sites and no other rows loads back with every table present and empty where it was."""
    tables = {name: frame(name, []) for name in TABLES}
    tables["sites"] = frame("sites", [{"site_name": "S", "role": "nucleus"}])
    snap = GridSnapshot(tables, edge_grid().taken_at, "bare", 0)
    repository.save_snapshot(engine, snap)
    frames_equal(snap, repository.load_snapshot(engine))


def test_save_replaces_the_grid_and_keeps_gdpconfig(engine: Any, small_grid: GridSnapshot) -> None:
    """Saving a second grid replaces every grid table, leaves CONFIG and its history alone and raises the version."""
    first = repository.save_snapshot(engine, small_grid)
    config_store.save_changes(engine, {"NQUEUED_SAT_CAP": 300}, "alice", "keep me", 0)
    second = repository.save_snapshot(engine, edge_grid())
    back = repository.load_snapshot(engine)
    frames_equal(edge_grid(), back)
    assert second is not None and first is not None and second > first
    assert config_store.load_config(engine).get("NQUEUED_SAT_CAP") == 300
    assert len(config_store.history(engine)) == 1


def test_version_grows_with_every_save(engine: Any, small_grid: GridSnapshot) -> None:
    """The stored version (the cache key) grows on every save even when the same snapshot is saved again."""
    versions = [repository.save_snapshot(engine, small_grid) for _ in range(3)]
    assert versions == [small_grid.version, small_grid.version + 1, small_grid.version + 2]
    assert repository.snapshot_key(engine) == f"{small_grid.snapshot_id}@{small_grid.version + 2}"


def test_is_empty_and_only_if_empty(engine: Any, small_grid: GridSnapshot) -> None:
    """is_empty is true until a grid is stored, and only_if_empty never overwrites a stored grid."""
    assert repository.is_empty(engine)
    assert repository.save_snapshot(engine, small_grid, only_if_empty=True) == small_grid.version
    assert not repository.is_empty(engine)
    before = repository.table_contents(engine)
    assert repository.save_snapshot(engine, edge_grid(), only_if_empty=True) is None
    assert repository.table_contents(engine) == before


def test_database_without_schema_counts_as_empty(db_url: str) -> None:
    """A database that was never initialised is empty, has gdpconfig version 0, and load_snapshot says so."""
    eng = database.make_engine(db_url)
    try:
        assert repository.is_empty(eng)
        assert config_store.current_version(eng) == 0
        with pytest.raises(errors.StoreError, match="db init"):
            repository.load_snapshot(eng)
    finally:
        eng.dispose()


def test_cached_snapshot_reloads_only_after_a_change(engine: Any, small_grid: GridSnapshot) -> None:
    """cached_snapshot hands out the same object until the stored version changes."""
    repository.save_snapshot(engine, small_grid)
    first = repository.cached_snapshot(engine)
    assert repository.cached_snapshot(engine) is first
    repository.save_snapshot(engine, small_grid)
    again = repository.cached_snapshot(engine)
    assert again is not first and again.version == first.version + 1


def test_bad_references_are_refused_and_nothing_is_written(engine: Any, small_grid: GridSnapshot) -> None:
    """A snapshot whose queue names an unknown site is refused with the field path, leaving the database as it was."""
    repository.save_snapshot(engine, small_grid)
    before = repository.table_contents(engine)
    queues = small_grid.tables["queues"].copy()
    queues.loc[0, "atlas_site"] = "NO_SUCH_SITE"
    bad = GridSnapshot({**small_grid.tables, "queues": queues}, small_grid.taken_at, "bad", 9)
    with pytest.raises(SnapshotError) as err:
        repository.save_snapshot(engine, bad)
    assert any("queues[0].atlas_site" in p and "NO_SUCH_SITE" in p for p in err.value.problems)
    assert repository.table_contents(engine) == before


def test_duplicate_natural_keys_are_listed(engine: Any) -> None:
    """Rows repeating a table's key (e.g. a network metric twice) are refused, each duplicate listed."""
    snap = edge_grid()
    net = frame("network", [snap.tables["network"].iloc[0].to_dict()] * 3)
    bad = GridSnapshot({**snap.tables, "network": net}, snap.taken_at, "dup", 0)
    with pytest.raises(SnapshotError) as err:
        repository.save_snapshot(engine, bad)
    assert [p.split(":")[0] for p in err.value.problems] == ["network[1]", "network[2]"]
    assert repository.is_empty(engine)


def test_illegal_status_log_is_refused_in_bulk(engine: Any, small_grid: GridSnapshot) -> None:
    """Saving a status log with an illegal transition raises TransitionError naming the task and both statuses."""
    log = small_grid.tables["task_status_log"].copy()
    first_task = log["jeditaskid"].iloc[0]
    rows = log.index[log["jeditaskid"] == first_task]
    log.loc[rows[1], "status"] = "done"  # registered -> done skips the whole life of the task
    bad = GridSnapshot({**small_grid.tables, "task_status_log": log}, small_grid.taken_at, "bad", 0)
    with pytest.raises(TransitionError) as err:
        repository.save_snapshot(engine, bad)
    assert any(f"task {first_task}" in p and "'registered' cannot change to 'done'" in p for p in err.value.problems)
    assert repository.is_empty(engine)


def test_models_mirror_the_snapshot_tables() -> None:
    """Every snapshot column has a database column of the same name (JSON tables keep them in their data document)."""
    for name, model in GRID_MODELS.items():
        columns = set(table_of(name).columns.keys())
        if name in JSON_TABLES:
            assert {JSON_TABLES[name], "data", "seq"} <= columns
            continue
        assert columns == {c.name for c in TABLES[name]} | {"seq"}, name
        for c in TABLES[name]:
            col = table_of(name).columns[c.name]
            if c.nullable:
                assert col.nullable, f"{name}.{c.name} must accept NULL"
            if c.required and not c.nullable:
                assert not col.nullable, f"{name}.{c.name} must refuse NULL"
        assert model.__tablename__ == table_of(name).name


def test_table_names_follow_panda(engine: Any) -> None:
    """The schema holds PanDA-named tables (lower case, so unquoted SQL works on every backend)."""
    names = {t.name for t in Base.metadata.sorted_tables}
    assert {"config", "config_history", "config_version", "schedconfig_json", "site", "ddm_endpoint",
            "panda_ddm_relation", "network_matrix_kv", "jedi_tasks", "jedi_datasets", "sw_tags",
            "task_status_log", "snapshot_meta"} <= names  # fmt: skip
    assert all(n == n.lower() for n in names)


def test_migration_creates_exactly_the_models(engine: Any) -> None:
    """After `upgrade`, Alembic finds no difference between the database and the models."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []
    assert current_revision(engine) == head_revision() == "maxfiles_0012"


def test_upgrade_twice_is_harmless(engine: Any, small_grid: GridSnapshot) -> None:
    """Running the migrations again on an up-to-date database changes nothing."""
    repository.save_snapshot(engine, small_grid)
    before = repository.table_contents(engine)
    upgrade(engine)
    assert repository.table_contents(engine) == before


def test_upgrade_accepts_a_url(db_url: str) -> None:
    """upgrade() also takes a URL string and builds its own engine."""
    upgrade(db_url)
    eng = database.make_engine(db_url)
    try:
        assert current_revision(eng) == head_revision()
    finally:
        eng.dispose()


def test_sqlite_engine_settings(tmp_path: Path) -> None:
    """SQLite connections use WAL, enforce foreign keys and wait for locks instead of failing at once."""
    eng = database.make_engine(f"sqlite:///{tmp_path / 'sub' / 'x.sqlite'}")
    with eng.connect() as conn:
        pragmas = {p: conn.exec_driver_sql(f"PRAGMA {p}").scalar() for p in ("journal_mode", "foreign_keys")}
        timeout = conn.exec_driver_sql("PRAGMA busy_timeout").scalar()
    eng.dispose()
    assert pragmas == {"journal_mode": "wal", "foreign_keys": 1}
    assert timeout == database.SQLITE_BUSY_TIMEOUT_MS


def test_database_url_default_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """DATABASE_URL wins; without it the embedded data/brokerage.sqlite of the repository is used."""
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert database.database_url() == f"sqlite:///{database.REPO_ROOT / 'data' / 'brokerage.sqlite'}"
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://u@h/db")
    assert database.database_url() == "postgresql+psycopg://u@h/db"


def test_plain_postgresql_url_uses_psycopg() -> None:
    """A postgresql:// URL is served by psycopg 3 (the driver this project installs)."""
    eng = database.make_engine("postgresql://user@127.0.0.1:1/none")
    assert eng.dialect.driver == "psycopg"
    eng.dispose()


def test_brokerage_decides_the_same_from_the_database(engine: Any, small_grid: GridSnapshot) -> None:
    """Job brokerage of a task gives the same decision on the stored grid as on the original snapshot."""
    from brokerage.brokers.router import run_job_brokerage
    from brokerage.model.gdpconfig import Config

    repository.save_snapshot(engine, small_grid)
    back = repository.load_snapshot(engine)
    for tid in small_grid.tables["tasks"]["jeditaskid"].tolist()[:8]:
        expected = run_job_brokerage(small_grid, int(tid), Config()).to_dict()
        assert run_job_brokerage(back, int(tid), Config()).to_dict() == expected


def test_an_outdated_schema_is_named_not_a_missing_table(db_url: str) -> None:
    """A database left at an older revision is refused with both revisions and the command that upgrades it."""
    from brokerage.store.database import make_engine
    from brokerage.store.errors import StoreError
    from brokerage.store.repository import load_snapshot
    from brokerage.store.schema import upgrade

    engine = make_engine(db_url)
    upgrade(engine, "levers_0004")
    with pytest.raises(StoreError, match="schema revision levers_0004 but this version needs maxfiles_0012"):
        load_snapshot(engine)
    engine.dispose()
