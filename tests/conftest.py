"""Session fixtures for every lane: the full demo grid's database, made once by `brokerage db init`."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from brokerage.cli import db as db_cli


@pytest.fixture(scope="session")
def demo_database(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A SQLite file that `brokerage db init` filled with the full demo grid (700 queues, 3000 tasks, its task
    history), and what init printed. Made once per session (a full init is the slowest store step); tests read it
    or work on a copy, never write it."""
    path = tmp_path_factory.mktemp("demo-db") / "demo.sqlite"
    result = CliRunner().invoke(db_cli.db, ["--database-url", f"sqlite:///{path}", "init"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return path, result.output
