"""Memory (brokerage/checks/memory.py): the job's expected memory (baseRamCount + ramCount x coreCount) x 0.9 must lie
within the queue's [minrss, maxrss]: above maxrss is -lowmemory, below minrss -highmemory."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import anal_queue, anal_task, grid, queue, task
from tests.core.checks.helpers import assert_codes, assert_seed_codes, codes, run


@pytest.mark.parametrize(
    ("queues", "task_kw", "expected"),
    [
        # (500 + 2000 x 8) x 0.9 = 14850 MB
        pytest.param(
            [queue("M", "S1", corecount=8, maxrss=14000), queue("OK", "S1", corecount=8, maxrss=14850)],
            {"corecount": 8, "ramcount": 2000, "baseramcount": 500},
            {"M": "-lowmemory", "OK": None},
            id="-lowmemory",
        ),
        # (0 + 2000 x 1) x 0.9 = 1800 MB
        pytest.param(
            [queue("H", "S1", minrss=2000), queue("OK", "S1", minrss=1800)],
            {"ramcount": 2000},
            {"H": "-highmemory", "OK": None},
            id="-highmemory",
        ),
    ],
)
def test_memory_within_minrss_and_maxrss(
    queues: list[dict[str, Any]], task_kw: dict[str, Any], expected: dict[str, str | None]
) -> None:
    """(baseRamCount + ramCount x coreCount) x 0.9 above maxrss gives -lowmemory, below minrss -highmemory."""
    assert_codes(grid(queues, [task(1, **task_kw)]), expected)


@pytest.mark.parametrize(
    ("ramunit", "expected"),
    [
        pytest.param("MB", None, id="-lowmemory:MB"),  # (500 + 8000) x 0.9 = 7650 <= 8000
        pytest.param("MBPerCore", "-lowmemory", id="-lowmemory:MBPerCore"),  # (500 + 8000 x 8) x 0.9 = 58050 > 8000
    ],
)
def test_memory_unit_mb_is_per_job(ramunit: str, expected: str | None) -> None:
    """ramUnit MB is per job (not multiplied by coreCount); MBPerCore is per core."""
    qs = [queue("M", "S1", corecount=8, maxrss=8000)]
    t = task(1, corecount=8, ramcount=8000, ramunit=ramunit, baseramcount=500)
    assert_codes(grid(qs, [t]), {"M": expected})


def test_memory_counts_base_ram_without_ram_count() -> None:
    """Seed: the estimate (baseRamCount + ramCount x coreCount) x 0.9 is checked even when ramCount is 0."""
    # (5000 + 0 x 1) x 0.9 = 4500 MB > maxrss 4000
    snap = grid([queue("A", "S1", maxrss=4000)], [task(1, ramcount=0, baseramcount=5000)])
    assert_seed_codes(snap, {"A": "-lowmemory"})


def test_analysis_memory_mb_per_core_and_mb() -> None:
    """Analysis: memory is (baseRamCount + ramCount × coreCount) × 0.9 for MBPerCore and (baseRamCount + ramCount) × 0.9
    for MB."""
    qs = [
        anal_queue("M", "S1", corecount=4, maxrss=7000),
        anal_queue("H", "S2", corecount=4, maxrss=64000, minrss=8000),
    ]
    per_core = anal_task(1, corecount=4, ramcount=2000, baseramcount=500, ramunit="MBPerCore")  # 7650 MB
    d = run(grid(qs, [per_core]))
    assert codes(d) == {"M": "-lowmemory", "H": "-highmemory"}
    assert "7650" in d.skip_of("M").reason
    flat = anal_task(1, corecount=4, ramcount=6000, baseramcount=500, ramunit="MB")  # 5850 MB
    assert codes(run(grid(qs, [flat]))) == {"H": "-highmemory"}
