"""DIRAC 9.1.22's own TaskQueueDB and Matcher on MariaDB against ours (skipped with the reason when either is absent)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from brokerage.cli.crosscheck import crosscheck as crosscheck_command
from brokerage.crosscheck.dirac_grids import random_dirac_grid
from brokerage.crosscheck.dirac_run import crosscheck_dirac
from brokerage.model.gdpconfig import Config
from tests.core.dirac.helpers import CERN, CNAF, job, snapshot


def test_dirac_builds_the_task_queues_and_matches_a_hand_grid(dirac_env) -> None:
    """Hand case: jobs 1-3 alike (alice) fill TQ1 and, with DIRAC_MAX_JOBS_IN_TQ=2, job 3 opens TQ2 (DIRAC's split);
    bob's job at CNAF is TQ3. Priorities: alice's share 1000/2 splits by mean RealPriority (1 and 9: 50 and 450), and
    queues of one definition each get the sum (calculate_priority's grouping): 500 and 500; bob 500. A CERN pilot
    matches TQ1 and TQ2, not TQ3 (Site)."""
    snap = snapshot([job(1), job(2), job(3, Priority=9), job(4, owner="bob", Sites=[CNAF])])
    config = Config().with_overrides({"DIRAC_MAX_JOBS_IN_TQ": 2})
    report = crosscheck_dirac([(snap, config, [{"Site": CERN, "CPUTime": 500}])], dirac_env)
    tq, pilot = report.comparisons
    assert tq.identical and pilot.identical, [r for c in report.comparisons for r in c.differing()]
    assert tq.jedi.candidates == pytest.approx({"TQ1": 500.0, "TQ2": 500.0, "TQ3": 500.0}, rel=1e-6)
    assert [(r.name, r.jedi) for r in pilot.rows if r.name.startswith("TQ")] == [
        ("TQ1", "+use"), ("TQ2", "+use"), ("TQ3", "-excluded")]  # fmt: skip


def test_random_dirac_grids_agree_fully(dirac_env) -> None:
    """Every task queue, Priority, normalised resource and match of 6 random grids agrees (the 300-grid figures are
    in docs/crosscheck.md)."""
    grids = []
    for s in range(1, 7):
        snap, pilots, drawn = random_dirac_grid(s)
        grids.append((snap, Config().with_overrides(drawn), pilots))
    report = crosscheck_dirac(grids, dirac_env)
    assert report.panda_version == "DIRAC 9.1.22" and report.against == "DIRAC"
    assert report.not_allowed() == 0, [(c.task, r) for c in report.comparisons for r in c.differing()][:5]
    assert report.totals["dirac"].tasks > 50 and report.totals["dirac_tq"].tasks == 6


def test_cli_runs_dirac_alone(dirac_env) -> None:
    """`brokerage crosscheck --brokers dirac --random-grids 2` prints the DIRAC summary and exits 0 under --strict."""
    result = CliRunner().invoke(crosscheck_command, ["--brokers", "dirac", "--random-grids", "2", "--strict"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("crosscheck against DIRAC 9.1.22 (rule profile panda-1.0.4), 2 grid(s)")
