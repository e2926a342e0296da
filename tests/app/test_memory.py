"""Memory under many what-ifs (issue #19): every cache is bounded, so distinct edits do not grow the process."""

from __future__ import annotations

import gc
import os

from app.state.decisions import DECISION_CACHE_SIZE


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_two_thousand_distinct_edits_keep_memory_within_a_fixed_margin(app_client) -> None:
    """Once the bounded caches are full, 2,000 more distinct what-if edits grow resident memory by under 25 MB."""
    from app.callbacks.tuning import update_task_view
    from app.main import state

    task = int(state.snapshot().tasks["jeditaskid"].iloc[0])
    for i in range(DECISION_CACHE_SIZE + 100):  # fill every bounded cache first
        update_task_view({"NQUEUED_SAT_CAP": 10 + i}, task)
    gc.collect()
    before = _rss_mb()
    for i in range(2000):
        update_task_view({"NQUEUED_SAT_CAP": 5000 + i}, task)
    gc.collect()
    grown = _rss_mb() - before
    sizes = state.sizes()
    assert grown < 25, f"resident memory grew {grown:.1f} MB; cache sizes {sizes}"
    assert sizes["decisions"] <= DECISION_CACHE_SIZE
