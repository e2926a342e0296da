"""SQLite file faults (issue #19): a deleted, replaced, missing or locked database never loses a save silently."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from brokerage.cli import db as db_cli
from brokerage.store import config_store as cs
from brokerage.store import database, errors
from brokerage.store.schema import upgrade


@pytest.fixture
def db_file(tmp_path: Path) -> Path:
    """A SQLite file with the schema and one saved gdpconfig version."""
    path = tmp_path / "grid.sqlite"
    engine = database.make_engine(f"sqlite:///{path}")
    upgrade(engine)
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": 300}, "alice", "first", 0)
    engine.dispose()
    return path


def test_a_save_into_a_deleted_file_is_refused(db_file: Path) -> None:
    """After the file is deleted under a running engine, a save raises a clear error instead of saving into it."""
    engine = database.make_engine(f"sqlite:///{db_file}")
    assert cs.current_version(engine) == 1
    db_file.unlink()
    with pytest.raises(errors.DatabaseFileError, match="was deleted"):
        cs.save_changes(engine, {"NQUEUED_SAT_CAP": 301}, "alice", "second", 1)


def test_a_save_into_a_replaced_file_is_refused(db_file: Path, tmp_path: Path) -> None:
    """A file replaced by another (a new inode at the same path) refuses writes until the server restarts."""
    engine = database.make_engine(f"sqlite:///{db_file}")
    assert cs.current_version(engine) == 1
    other = tmp_path / "other.sqlite"
    other.write_bytes(db_file.read_bytes())
    other.replace(db_file)
    with pytest.raises(errors.DatabaseFileError, match="was replaced"):
        cs.save_changes(engine, {"NQUEUED_SAT_CAP": 301}, "alice", "second", 1)


@pytest.mark.parametrize("command", [["config-history"], ["config-show"], ["info"], ["export", "x.json"]])
def test_read_commands_never_create_a_database(tmp_path: Path, command: list[str]) -> None:
    """Read commands on a missing file say so (exit 2, or `info` reports no schema) and create no file."""
    path = tmp_path / "missing.sqlite"
    result = CliRunner().invoke(db_cli.db, ["--database-url", f"sqlite:///{path}", *command])
    assert not path.exists()
    if command == ["info"]:
        assert result.exit_code == 0 and "does not exist" in result.output
    else:
        assert result.exit_code == 2 and "does not exist" in result.output and "no versions yet" not in result.output


def test_a_locked_database_answers_busy_quickly_without_sql(db_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While another writer holds the lock, a save waits at most the short busy timeout and says 'busy' in words."""
    monkeypatch.setattr(database, "SQLITE_BUSY_TIMEOUT_MS", 300)
    holder = sqlite3.connect(db_file, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        engine = database.make_engine(f"sqlite:///{db_file}")
        t0 = time.monotonic()
        with pytest.raises(errors.StoreBusyError) as err:
            cs.save_changes(engine, {"NQUEUED_SAT_CAP": 302}, "alice", "blocked", 1)
        assert time.monotonic() - t0 < 2.0
        assert "BEGIN" not in str(err.value) and "busy" in str(err.value)
    finally:
        holder.rollback()
        holder.close()


def test_the_default_busy_timeout_is_short() -> None:
    """A server thread waits seconds, not half a minute, for another writer's lock."""
    assert database.SQLITE_BUSY_TIMEOUT_MS <= 5000


def test_subcommand_help_needs_no_database(tmp_path: Path) -> None:
    """`db SUBCOMMAND --help` prints the help (exit 0) even when the database file does not exist, and creates none."""
    path = tmp_path / "missing.sqlite"
    result = CliRunner().invoke(db_cli.db, ["--database-url", f"sqlite:///{path}", "config-show", "--help"])
    assert result.exit_code == 0 and "Show the stored gdpconfig" in result.output and not path.exists()
