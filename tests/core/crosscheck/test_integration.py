"""PanDA 1.0.4's own brokers on random grids (marker ``crosscheck``; skipped with the reason when PanDA is absent)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from brokerage.cli.crosscheck import crosscheck as crosscheck_command
from brokerage.crosscheck.generator import random_grid
from brokerage.crosscheck.panda import PandaEnv
from brokerage.crosscheck.run import crosscheck
from brokerage.model.gdpconfig import Config

pytestmark = pytest.mark.crosscheck


@pytest.fixture(scope="module")
def report(panda: PandaEnv):
    return crosscheck([(random_grid(s), Config()) for s in range(1, 9)], panda, ("prod", "nucleus"))


def test_panda_ran_every_task_without_error(report) -> None:
    assert report.panda_version == "1.0.4"
    assert report.comparisons
    assert [c.task for c in report.comparisons if c.jedi.error and not c.panda_bug] == []


def test_no_crosscheck_meets_an_unmapped_token(report) -> None:
    """A token PanDA writes that is neither mapped nor listed as not modelled fails the crosscheck."""
    assert {b: dict(t.unmapped) for b, t in report.totals.items() if t.unmapped} == {}


def test_verdicts_mostly_agree(report) -> None:
    """A floor under the measured agreement (docs/crosscheck.md has the figures): a regression shows here."""
    prod = report.totals["prod"].to_dict()
    assert prod["verdicts_agree_pct"] >= 98.5
    assert report.totals["nucleus"].to_dict()["verdicts_agree_pct"] >= 98.5


def test_every_difference_is_allowed_on_these_grids(report) -> None:
    """The strict lane's rule: no difference outside the allow-list, no unmapped token, no unknown PanDA error."""
    assert report.not_allowed() == 0


def test_the_command_prints_json_with_the_panda_version(panda: PandaEnv) -> None:
    result = CliRunner().invoke(crosscheck_command, ["--random-grids", "2", "--brokers", "prod", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["panda_version"] == "1.0.4" and out["profile"] == "panda-1.0.4"
    assert {"tasks", "brokers"} <= set(out)
