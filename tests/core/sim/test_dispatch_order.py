"""Dispatch sorts only the candidates that can be taken: the same jobs, in the same order, as sorting all."""

from __future__ import annotations

import numpy as np

from brokerage.sim.jobs import JobTable
from brokerage.sim.pilots import MAX_PRIORITY, _first_per_queue, pack, within_reach


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


def test_first_per_queue_sorts_one_share_and_takes_the_same_jobs() -> None:
    """Per queue the free slots go by (share rank, priority, PandaID); counting each queue x share's candidates and
    sorting only the share the slots run out in takes the same jobs as sorting every candidate (random shares,
    ranks, priorities and free slots, the counts from the candidates themselves)."""
    rng = np.random.default_rng(11)
    for _ in range(60):
        n, nq, ns = int(rng.integers(1, 2000)), int(rng.integers(1, 30)), int(rng.integers(1, 9))
        queue, share = rng.integers(0, nq, n), rng.integers(0, ns, n)
        prio = rng.integers(0, 4, n) * 100
        table = JobTable.empty(n)
        table.append(computingSite=queue, gshare=share, currentPriority=prio)
        share_rank = rng.permutation(ns).astype(np.int64)
        free = rng.integers(0, 60, nq)
        waiting = np.zeros((nq, ns), np.int64)
        np.add.at(waiting, (queue, share), 1)
        level = (share_rank[share] << 14) | (MAX_PRIORITY - prio)
        full = np.sort(_first(queue, level, free))
        rows = np.arange(n)
        got = np.flatnonzero(_first_per_queue(rows, queue, share_rank, waiting, free, table))
        assert got.tolist() == full.tolist()


def test_first_per_queue_hand_case() -> None:
    """One queue, 3 free slots, share B served before share A: both B jobs, then A's higher-priority job (the older
    of two at equal priority would go first)."""
    table = JobTable.empty(8)
    table.append(computingSite=np.zeros(5, np.int64), gshare=np.array([0, 1, 0, 1, 0]),
                 currentPriority=np.array([100, 50, 300, 60, 300]))  # fmt: skip
    waiting = np.array([[3, 2]])
    got = _first_per_queue(np.arange(5), np.zeros(5, np.int64), np.array([1, 0]), waiting, np.array([3]), table)
    assert np.flatnonzero(got).tolist() == [1, 2, 3]
