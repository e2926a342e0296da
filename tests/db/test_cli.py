"""The `brokerage db` commands: init never overwrites, config editing, import/export, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from brokerage.cli import db as db_cli
from brokerage.model.snapshot import GridSnapshot
from brokerage.store import database, repository
from brokerage.store.schema import head_revision, upgrade
from tests.db.helpers import edge_grid, frames_equal


def run(url: str, *args: str) -> Result:
    return CliRunner().invoke(db_cli.db, ["--database-url", url, *args], catch_exceptions=False)


@pytest.fixture
def small_demo(monkeypatch: pytest.MonkeyPatch) -> GridSnapshot:
    """`db init` fills with the edge grid instead of the full demo (speed); the full demo has its own test."""
    monkeypatch.setattr(db_cli, "demo_grid", lambda seed=0: edge_grid())
    return edge_grid()


def test_init_fills_an_empty_database_once(db_url: str, small_demo: GridSnapshot) -> None:
    """init creates the schema and stores the demo grid; a second init leaves the stored grid untouched."""
    first = run(db_url, "init")
    assert first.exit_code == 0, first.output
    assert "created the schema" in first.output and "stored the demo grid" in first.output
    eng = database.make_engine(db_url)
    try:
        repository.append_status(eng, 7, "prepared", edge_grid().taken_at)  # a change init must keep
        before = repository.table_contents(eng)
        second = run(db_url, "init")
        assert second.exit_code == 0 and "left unchanged" in second.output
        assert repository.table_contents(eng) == before
    finally:
        eng.dispose()


def test_init_with_the_real_demo_grid(demo_database: tuple[Path, str]) -> None:
    """The full demo grid (700 queues, 3000 tasks) with its simulated history passes every store check (`db init`
    of the session's demo database, tests/conftest.py)."""
    path, output = demo_database
    assert "700 queues" in output and "3000 tasks" in output
    eng = database.make_engine(f"sqlite:///{path}")
    try:
        snap = repository.load_snapshot(eng)
        assert len(snap.tables["task_status_log"]) > len(snap.tables["tasks"])
    finally:
        eng.dispose()


def test_config_set_show_history_restore(db_url: str) -> None:
    """config-set stores a version, config-show and config-history print it, config-restore undoes it."""
    upgrade(db_url)
    res = run(db_url, "config-set", "NQUEUED_SAT_CAP=300", "NW_ACTIVE=false", "--who", "alice", "--comment", "try")
    assert res.exit_code == 0 and "saved gdpconfig version 1" in res.output
    show = run(db_url, "config-show")
    assert "version 1" in show.output and "NQUEUED_SAT_CAP" in show.output and "300" in show.output
    hist = run(db_url, "config-history")
    assert "version 1 (from 0) by alice" in hist.output and "NQUEUED_SAT_CAP@atlas: (unset) -> 300" in hist.output
    assert "NW_ACTIVE: (unset) -> False" in run(db_url, "config-diff", "0", "1").output
    restored = run(db_url, "config-restore", "0", "--who", "bob")
    assert restored.exit_code == 0 and "version 2" in restored.output
    assert "no stored values" in run(db_url, "config-show").output
    assert run(db_url, "config-set", "NW_THRESHOLD=2", "--who", "carol").exit_code == 0
    assert "version 4" in run(db_url, "config-set", "--unset", "NW_THRESHOLD").output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["config-set", "NQUEUED_SAT_CAP=abc"], "NQUEUED_SAT_CAP: cannot read 'abc' as int"),
        (["config-set", "NW_QUEUE_IMPORTANCE=7"], "NW_QUEUE_IMPORTANCE: 7.0 is above the maximum"),
        (["config-set", "NO_SUCH=1"], "NO_SUCH: unknown gdpconfig key"),
        (["config-set", "NOEQUALS"], "NOEQUALS: expected KEY=VALUE"),
        (["config-restore", "9"], "version: 9 does not exist"),
    ],
)
def test_config_errors_are_one_line_with_exit_2(db_url: str, args: list[str], needle: str) -> None:
    """A bad key or value gives exit code 2 and one stderr line naming the field; nothing is written."""
    upgrade(db_url)
    res = run(db_url, *args)
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], res.stderr
    assert "no gdpconfig versions" in run(db_url, "config-history").output


def test_config_conflict_is_refused_with_exit_2(db_url: str) -> None:
    """config-set with a stale --base-version that lost a race on the same key exits 2 naming key and version."""
    upgrade(db_url)
    assert run(db_url, "config-set", "NQUEUED_SAT_CAP=300").exit_code == 0
    res = run(db_url, "config-set", "NQUEUED_SAT_CAP=400", "--base-version", "0")
    assert res.exit_code == 2 and "NQUEUED_SAT_CAP (changed in version 1)" in res.stderr


def test_export_then_import_round_trips(db_url: str, small_demo: GridSnapshot, tmp_path: Path) -> None:
    """export writes the stored grid as snapshot JSON; importing that file stores the same grid."""
    assert run(db_url, "init").exit_code == 0
    out = tmp_path / "grid.json"
    res = run(db_url, "export", str(out))
    assert res.exit_code == 0 and out.exists()
    exported = GridSnapshot.from_json(out)
    imported = run(db_url, "import", str(out))
    assert imported.exit_code == 0 and "grid snapshot" in imported.output
    eng = database.make_engine(db_url)
    try:
        frames_equal(exported, repository.load_snapshot(eng))
    finally:
        eng.dispose()


def test_import_of_a_broken_file_lists_problems_and_exits_2(
    db_url: str, small_demo: GridSnapshot, tmp_path: Path
) -> None:
    """A broken file prints each problem, then one error line, exits 2 and leaves the database unchanged."""
    assert run(db_url, "init").exit_code == 0
    eng = database.make_engine(db_url)
    try:
        before = repository.table_contents(eng)
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({"Q": {"atlas_site": "S", "type": "unified", "status": "online", "maxrss": "x",
                                         "corecount": "y"}}))  # fmt: skip
        res = run(db_url, "import", str(bad))
        assert res.exit_code == 2
        lines = res.stderr.strip().splitlines()
        assert lines[-1] == f"error: {bad}: 2 problems; nothing imported"
        assert any("Q.maxrss" in ln for ln in lines) and any("Q.corecount" in ln for ln in lines)
        assert repository.table_contents(eng) == before
    finally:
        eng.dispose()


def test_export_of_an_empty_database_explains_what_to_do(db_url: str, tmp_path: Path) -> None:
    """Exporting before anything was stored fails with exit code 2 and points at `db init`."""
    res = run(db_url, "export", str(tmp_path / "x.json"))
    assert res.exit_code == 2 and "db init" in res.stderr


def test_info_reports_schema_grid_and_config(db_url: str, small_demo: GridSnapshot) -> None:
    """info names the schema revision, the stored grid key and the gdpconfig version."""
    assert "schema: none" in run(db_url, "info").output
    run(db_url, "init")
    out = run(db_url, "info").output
    assert f"revision {head_revision()}" in out and "grid: edge@4" in out and "gdpconfig: version 0" in out


def test_unreachable_database_is_one_line() -> None:
    """A database server that cannot be reached gives exit code 2 and one error line, not a traceback."""
    res = run("postgresql+psycopg://nobody@127.0.0.1:1/none", "config-show")
    assert res.exit_code == 2 and res.stderr.startswith("error: database error:")
    assert len(res.stderr.strip().splitlines()) == 1
