"""Session fixtures for every lane: the full demo grid's database, made once by `brokerage db init`."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from brokerage.cli import db as db_cli
from brokerage.crosscheck.panda import PandaEnv, PandaMissing, find_panda


@pytest.fixture(scope="session")
def demo_database(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A SQLite file that `brokerage db init` filled with the full demo grid (700 queues, 3000 tasks, its task
    history), and what init printed. Made once per session (a full init is the slowest store step); tests read it
    or work on a copy, never write it."""
    path = tmp_path_factory.mktemp("demo-db") / "demo.sqlite"
    result = CliRunner().invoke(db_cli.db, ["--database-url", f"sqlite:///{path}", "init"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return path, result.output


@pytest.fixture(scope="session")
def panda() -> PandaEnv:
    """PanDA's environment (scripts/panda.sh), or the test is skipped saying how to get it."""
    try:
        return find_panda()
    except PandaMissing as exc:
        pytest.skip(f"PanDA is not set up: {exc}")
