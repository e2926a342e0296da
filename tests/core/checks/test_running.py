"""nRunning (brokerage/checks/running.py) as the job brokers count it: running jobs, bootstrapped by batch jobs,
numSlots and starting jobs."""

from __future__ import annotations

import pytest

from tests.builders import counts, grid, queue, task
from tests.core.checks.helpers import candidate, decide, weights_of


def test_nrunning_bootstrap_rules() -> None:
    """nRunning is the largest of Rreal, min(nBatchJob, 20) if Rreal < 20 and nBatchJob > Rreal, numSlots > 0,
    and nStarting when numSlots = 0."""
    qs = [
        queue("A", "S1", nbatchjob=50),
        queue("B", "S1", nbatchjob=50),
        queue("C", "S1", numslots=7),
        queue("D", "S1", numslots=0),
        queue("E", "S1", nbatchjob=1),
    ]
    jc = counts("A", running=5) + counts("B", running=25) + counts("C", running=3)
    jc += counts("D", running=2, starting=4) + counts("E", running=2)
    d, _ = decide(grid(qs, [task(1)], job_counts=jc))
    w = weights_of(grid(qs, [task(1)], job_counts=jc))
    assert w["A"] == pytest.approx(21 / 10)  # min(50, 20) = 20: (20+1)/(0+0+0+0+10)
    assert w["B"] == pytest.approx(26 / 10)  # Rreal 25 >= 20: (25+1)/10
    assert w["C"] == pytest.approx(8 / 10)  # numSlots 7 > 3: (7+1)/10
    assert w["D"] == pytest.approx(5 / 14)  # numSlots 0: starting 4 > 2: (4+1)/(0+0+4+0+10)
    assert w["E"] == pytest.approx(3 / 10)  # nBatchJob 1 is not above Rreal 2: (2+1)/10
    assert d.ranked_names == ["B", "A", "C", "D", "E"]
    assert candidate(d, "A").details["nRunning_rule"] == "nBatchJob bootstrap"
