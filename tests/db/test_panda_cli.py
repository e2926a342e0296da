"""The from-panda and pull commands check their arguments before touching any database."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from brokerage.cli.main import main
from brokerage.cli.panda import parse_every


def test_every_takes_seconds_minutes_hours() -> None:
    """--every accepts 30s, 10m, 1h and a bare number of seconds; zero or words are refused."""
    assert [parse_every(t) for t in ("30s", "10m", "1h", "45")] == [30, 600, 3600, 45]
    for bad in ("0m", "ten minutes", "5w"):
        with pytest.raises(click.BadParameter):
            parse_every(bad)


def test_only_postgresql_panda_databases_are_read(tmp_path: object) -> None:
    """A SQLite URL is refused with exit 2 and a clear line; --out and --store are exclusive."""
    out = CliRunner().invoke(main, ["snapshot", "from-panda", "--url", "sqlite:///x.sqlite", "--out", "g.json"])
    assert out.exit_code == 2 and "only PostgreSQL PanDA databases are read" in out.output
    both = CliRunner().invoke(main, ["snapshot", "from-panda", "--url", "postgresql://r@h/p", "--out", "g", "--store"])
    assert both.exit_code == 2 and "exactly one of --out FILE or --store" in both.output
