"""Walltime (brokerage/checks/walltime.py): the expected walltime cpuTime x nEvents / (C x P x cpuEfficiency) + baseTime
must lie within [mintime, maxtime] (-shortwalltime, -longwalltime); scout jobs (-scout_walltime) and merge jobs
(-min_walltime) need queues with at least 24 hours of maxtime."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import anal_queue, anal_task, grid, queue, task
from tests.core.checks.helpers import assert_codes, assert_seed_codes, codes, run

SCOUT_QUEUES = [
    queue("SHORT", "S1", maxtime=86399),
    queue("DAY", "S1", maxtime=86400),
    queue("NOLIMIT", "S1", maxtime=0),
]


@pytest.mark.parametrize(
    ("task_kw", "expected"),
    [
        pytest.param({"is_scout": True}, {"SHORT": "-scout_walltime", "DAY": None, "NOLIMIT": None},
                     id="-scout_walltime"),
        pytest.param({"is_merge": True}, {"SHORT": "-min_walltime", "DAY": None, "NOLIMIT": None}, id="-min_walltime"),
        pytest.param({}, {"SHORT": None}, id="-min_walltime:neither-scout-nor-merge"),
    ],
)  # fmt: skip
def test_scout_and_merge_need_24_hours(task_kw: dict[str, Any], expected: dict[str, str | None]) -> None:
    """Scout or merge jobs skip queues whose maxtime is less than 24 hours (86400 s)."""
    assert_codes(grid(SCOUT_QUEUES, [task(1, **task_kw)]), expected)


def test_scout_walltime_applies_to_preassigned_queues() -> None:
    """Seed: pre-assigned scout jobs still need 24 hours of maxtime."""
    qs = [queue("SHORT", "S1", maxtime=86399), queue("DAY", "S1", maxtime=86400)]
    assert_seed_codes(grid(qs, [task(1, is_scout=True, site="SHORT,DAY")]), {"SHORT": "-scout_walltime", "DAY": None})


@pytest.mark.parametrize(
    ("task_kw", "queues", "expected"),
    [
        # 100 x 1000 / (1 x 10 x 0.9) + 600 = 11111.1 + 600 = 11711.1 s
        pytest.param(
            {},
            [
                queue("SHORT", "S1", maxtime=11711),
                queue("FITS", "S1", maxtime=11712, mintime=11711),
                queue("LONG", "S1", mintime=11712),
                queue("ANY", "S1", maxtime=0, mintime=0),
            ],
            {"SHORT": "-shortwalltime", "FITS": None, "LONG": "-longwalltime", "ANY": None},
            id="-shortwalltime,-longwalltime:single-core",
        ),
        # C is the queue's coreCount and P its corepower (HS06 per core):
        # 100 x 1000 / (8 x 12.5 x 0.9) + 600 = 1111.1 + 600 = 1711.1 s
        pytest.param(
            {"corecount": 8, "ramcount": 1000},
            [
                queue("SHORT", "S1", corecount=8, corepower=12.5, maxrss=0, maxtime=1711),
                queue("FITS", "S1", corecount=8, corepower=12.5, maxrss=0, maxtime=1712, mintime=1711),
                queue("LONG", "S1", corecount=8, corepower=12.5, maxrss=0, mintime=1712),
            ],
            {"SHORT": "-shortwalltime", "FITS": None, "LONG": "-longwalltime"},
            id="-shortwalltime,-longwalltime:cores-and-corepower",
        ),
    ],
)
def test_walltime_between_mintime_and_maxtime(
    task_kw: dict[str, Any], queues: list[dict[str, Any]], expected: dict[str, str | None]
) -> None:
    """cpuTime x nEvents / (C x P x cpuEfficiency) + baseTime must lie within [mintime, maxtime]."""
    t = task(1, cputime=100.0, chunk_nevents=1000, cpuefficiency=90, basewalltime=600, **task_kw)
    assert_codes(grid(queues, [t]), expected)


def test_analysis_walltime_between_mintime_and_maxtime() -> None:
    """Analysis: cpuTime × nEvents / (C × P × cpuEfficiency) + baseTime must lie within [mintime, maxtime] (here 11111 s)."""
    t = anal_task(1, cputime=100.0, chunk_nevents=1000, cpuefficiency=90)
    qs = [anal_queue("SHORT", "S1", maxtime=11000), anal_queue("LONG", "S2", mintime=11200), anal_queue("OK", "S3")]
    assert codes(run(grid(qs, [t]))) == {"SHORT": "-shortwalltime", "LONG": "-longwalltime"}
