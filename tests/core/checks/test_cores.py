"""Core count (brokerage/checks/cores.py): multi-core tasks to multi-core queues, single-core tasks to single-core
queues (-cpucore), and no queue over the task's maxCoreCount (-max_cpucore)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import anal_queue, anal_task, grid, queue, task
from tests.core.checks.helpers import assert_codes, codes, run

CORE_QUEUES = [
    queue("S", "S1", corecount=1),
    queue("Z", "S1", corecount=0),
    queue("M", "S1", corecount=8, maxrss=0),
    queue("B", "S1", corecount=16, maxrss=0),
]


@pytest.mark.parametrize(
    ("task_kw", "expected"),
    [
        pytest.param({"corecount": 1}, {"S": None, "Z": None, "M": "-cpucore", "B": "-cpucore"},
                     id="-cpucore:single-core"),
        pytest.param({"corecount": 8}, {"S": "-cpucore", "Z": "-cpucore", "M": None, "B": None},
                     id="-cpucore:multi-core"),
        pytest.param({"corecount": 8, "maxcorecount": 8}, {"S": "-cpucore", "M": None, "B": "-max_cpucore"},
                     id="-max_cpucore"),
        # coreCount 0 = any, but multi-core only at priority >= 900 (or scouts)
        pytest.param({"corecount": 0}, dict.fromkeys("SZMB"), id="-cpucore:any-core"),
        pytest.param({"corecount": 0, "currentpriority": 900}, {"S": "-cpucore", "Z": "-cpucore", "M": None, "B": None},
                     id="-cpucore:any-core-priority-900"),
    ],
)  # fmt: skip
def test_core_count(task_kw: dict[str, Any], expected: dict[str, str | None]) -> None:
    """Single-core tasks need corecount <= 1, multi-core ones corecount > 1, and corecount <= maxCoreCount."""
    assert_codes(grid(CORE_QUEUES, [task(1, **task_kw)]), expected)


def test_analysis_core_count_matching() -> None:
    """Analysis: multi-core tasks need corecount > 1, single-core tasks corecount <= 1, and maxCoreCount caps the queue."""
    qs = [
        anal_queue("S", "S1"),
        anal_queue("M8", "S2", corecount=8, maxrss=64000),
        anal_queue("M16", "S3", corecount=16, maxrss=64000),
    ]
    assert codes(run(grid(qs, [anal_task(1)]))) == {"M8": "-cpucore", "M16": "-cpucore"}
    assert codes(run(grid(qs, [anal_task(1, corecount=8, maxcorecount=8)]))) == {"S": "-cpucore", "M16": "-max_cpucore"}


def test_analysis_core_count_zero_accepts_any_queue_at_any_priority() -> None:
    """Analysis: coreCount 0 accepts any queue; analysis has no priority/scout rule that forces multi-core."""
    qs = [anal_queue("S", "S1"), anal_queue("M8", "S2", corecount=8, maxrss=64000)]
    snap = grid(qs, [anal_task(1, corecount=0, currentpriority=5000, is_scout=True)])
    assert sorted(run(snap).ranked_names) == ["M8", "S"]
