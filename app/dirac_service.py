"""DIRAC matching for the app: one GridCache per loaded snapshot (task queues built once per config)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from app import data
from brokerage.cache import GridCache
from brokerage.dirac.matcher import DiracMatch, match, task_queues
from brokerage.dirac.taskqueues import TaskQueues

_lock = threading.Lock()
_held: dict[str, GridCache] = {}  # snapshot key -> cache; only the current snapshot's is kept


def grid_cache() -> GridCache:
    """The cache of the current snapshot (a new snapshot drops the old cache)."""
    snap = data.snapshot()
    with _lock:
        cache = _held.get(snap.key)
        if cache is None or cache.snap is not snap:
            _held.clear()
            cache = _held[snap.key] = GridCache(snap)
        return cache


def run_match(pilot: str, overrides: Mapping[str, Any], seed: int = 0) -> DiracMatch:
    """Match PILOT under the stored config plus OVERRIDES (PilotError / ConfigError on bad input)."""
    cache = grid_cache()
    return match(cache.snap, pilot, data.effective_config(overrides), seed=seed, cache=cache)


def queues(overrides: Mapping[str, Any]) -> TaskQueues:
    """The task queues under the stored config plus OVERRIDES."""
    cache = grid_cache()
    return task_queues(cache.snap, data.effective_config(overrides), cache)
