"""The snapshot source loads the grid from a database, a JSON file or the demo generator, and says what went wrong."""

from __future__ import annotations

import pytest

from app.state import AppState


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch):
    """Forget the loaded grid before and after the test, with no source env set."""
    from brokerage.store import database

    for var in ("DATABASE_URL", "BROKERAGE_SNAPSHOT"):
        monkeypatch.delenv(var, raising=False)
    # a developer's own data/brokerage.sqlite must not leak into these tests
    monkeypatch.setattr(database, "DEFAULT_SQLITE", database.DEFAULT_SQLITE.with_name("absent.sqlite"))
    yield monkeypatch


def test_database_source_round_trip(fresh, tmp_path, snap) -> None:
    """A grid saved through the store is what the dashboard loads from DATABASE_URL, keyed by its snapshot key."""
    state = AppState()
    from brokerage.store import database, repository, schema

    url = f"sqlite:///{tmp_path / 'grid.db'}"
    engine = database.make_engine(url)
    try:
        schema.upgrade(engine)
    except TypeError:
        schema.upgrade(url)
    fresh.setenv("DATABASE_URL", url)
    src = state.source()
    assert src.origin.startswith("database") and "holds no grid" in src.problem
    repository.save_snapshot(engine, snap)
    state.reset()
    src = state.source()
    assert src.problem == "" and len(src.snap.queues) == 12 and src.snap.key == repository.snapshot_key(engine)


def test_broken_snapshot_file_is_a_message(fresh, tmp_path) -> None:
    """A malformed snapshot file gives an empty grid and a message naming the problem, not a crash."""
    state = AppState()
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    fresh.setenv("BROKERAGE_SNAPSHOT", str(bad))
    src = state.source()
    assert len(src.snap.queues) == 0 and "not JSON" in src.problem


def test_embedded_database_is_the_default(fresh, tmp_path, snap) -> None:
    """With no DATABASE_URL and no file, an existing data/brokerage.sqlite is the grid (what setup.sh serves)."""
    state = AppState()
    from brokerage.store import database, repository, schema

    db = tmp_path / "brokerage.sqlite"
    engine = database.make_engine(f"sqlite:///{db}")
    schema.upgrade(engine)
    repository.save_snapshot(engine, snap)
    fresh.setattr(database, "DEFAULT_SQLITE", db)
    src = state.source()
    assert src.origin.startswith("database") and len(src.snap.queues) == 12


def test_demo_grid_when_nothing_is_configured(fresh) -> None:
    """With no database and no file the demo generator supplies the grid."""
    state = AppState()
    fresh.setenv("DEMO_QUEUES", "60")
    fresh.setenv("DEMO_TASKS", "80")
    src = state.source()
    assert src.origin == "demo grid" and len(src.snap.queues) == 60 and len(src.snap.tasks) == 80
