"""Dispatch sorts only the candidates that can be taken: the same jobs, in the same order, as sorting all."""

from __future__ import annotations

import numpy as np

from brokerage.sim.pilots import pack, within_reach


def _first(queue: np.ndarray, level: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Rows taken by the full sort: per queue the FREE first by (level, row), in (queue, level, row) order."""
    order = np.argsort(pack(queue, level, np.arange(len(queue))), kind="stable")
    q = queue[order]
    first = np.r_[0, np.flatnonzero(np.diff(q)) + 1]
    pos = np.arange(len(q)) - np.repeat(first, np.diff(np.r_[first, len(q)]))
    return order[pos < free[q]]


def test_within_reach_keeps_exactly_the_taken_rows() -> None:
    """Pilots take per queue its free slots' worth of activated jobs, by share rank, priority, then age (PandaID):
    the rows within_reach keeps, sorted the same way, are the rows the full sort takes (random queues, levels
    with many ties, free slots from 0 to more than the candidates)."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        n, nq = int(rng.integers(1, 3000)), int(rng.integers(1, 40))
        queue = rng.integers(0, nq, n)
        level = rng.integers(0, int(rng.integers(1, 12)), n).astype(np.int64) << 14
        free = rng.integers(0, 80, nq)
        full = _first(queue, level, free)
        near = np.flatnonzero(within_reach(queue, level, free, rounds=int(rng.integers(1, 9))))
        kept = near[_first(queue[near], level[near], free)]
        assert kept.tolist() == full.tolist()


def test_hand_case() -> None:
    """Queue 0 has 2 free slots: its level-0 job, then the older of its two level-1 jobs; queue 1 (1 slot) its
    oldest level-0 job."""
    queue = np.array([0, 0, 1, 0, 1, 0])
    level = np.array([1, 1, 0, 0, 0, 2]) << 14
    keep = within_reach(queue, level, np.array([2, 1]))
    assert np.flatnonzero(keep).tolist() == [0, 2, 3]
