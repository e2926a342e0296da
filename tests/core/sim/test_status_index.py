"""The live counts and rows per status the moves keep equal a recount of the whole job table at every tick."""

from __future__ import annotations

from typing import Any

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.sim.engine import Simulation
from brokerage.sim.jobs import FINAL, STATUSES, S
from brokerage.sim.status_index import RT_SLOTS, StatusIndex
from brokerage.synth.demo import demo_snapshot


def test_hand_case() -> None:
    """Rows 0-3 added (0, 2 activated at queue 1; 1, 3 running at queue 0), rows 2 then 0 moved to running: running
    holds rows 0-3 in row order, activated none, and the counts per (status, queue x share) follow each move."""
    idx = StatusIndex(len(STATUSES), 2, 1, 1)
    a, r = S["activated"], S["running"]
    zeros = np.zeros(4, np.int64)
    idx.added(np.arange(4), np.array([a, r, a, r]), np.array([1, 0, 1, 0]), zeros, zeros, zeros, zeros)
    st = np.array([a, r, a, r])
    assert idx.rows(a, st).tolist() == [0, 2]
    assert idx.by_qs[a].tolist() == [0, 2] and idx.by_qs[r].tolist() == [2, 0]
    for row in (2, 0):
        rows = np.array([row])
        one = np.zeros(1, np.int64)
        idx.moved(rows, st[rows], r, np.array([1]), one, one, one, one)
        st[row] = r
    assert idx.rows(r, st).tolist() == [0, 1, 2, 3]
    assert idx.rows(a, st).tolist() == []
    assert idx.by_qs[a].tolist() == [0, 0] and idx.by_qs[r].tolist() == [2, 2]
    assert idx.by_wr[r, 0] == 4 and idx.by_wr[a].sum() == 0


def _qs_key(idx: StatusIndex, j: Any) -> np.ndarray:
    """Each job's flat (status, VO x queue x share) key, recomputed from the table's columns."""
    place = j["vo"].astype(np.int64) * idx.nq + j["computingSite"].astype(np.int64)
    return j["jobStatus"].astype(np.int64) * idx.qs_size + place * idx.ns + j["gshare"]


def test_two_vos_are_counted_apart() -> None:
    """Rows 0-2 running at queue 1, share 0: rows 0 and 2 of VO 0, row 1 of VO 1. The kept running jobs of (VO 0,
    queue 1) are 2 and of (VO 1, queue 1) 1, and the all-VO view (what pilots read) has 3 at queue 1."""
    idx = StatusIndex(len(STATUSES), 2, 1, 1, nvo=2)
    r, zeros = S["running"], np.zeros(3, np.int64)
    idx.added(np.arange(3), np.full(3, r), np.ones(3, np.int64), zeros, zeros, zeros, np.array([0, 1, 0]))
    assert idx.by_qs[r].tolist() == [0, 2, 0, 1]  # (vo * 2 + queue) * 1 + share
    assert idx.queue_share()[r].tolist() == [0, 3]


def test_kept_counts_equal_a_recount_every_tick() -> None:
    """Every tick of a 60-queue demo grid's first 90 minutes, the kept jobs per (status, queue x share) and per
    (status, work queue x resource type) equal a bincount over the whole job table, the pruned index of live jobs
    holds exactly the rows not final, and each status's rows equal the live index filtered by status (what the
    agents read before the counts were kept)."""
    sim = Simulation(demo_snapshot(seed=0, queues=60, tasks=300), Config(), seed=0)
    j, idx = sim.jobs, sim.index
    for i in range(90):
        sim.step(i * 60.0)
        st = j["jobStatus"].astype(np.int64)
        qs = _qs_key(idx, j)
        wr = st * idx.wr_size + j["workQueue"].astype(np.int64) * RT_SLOTS + j["resource_type"]
        assert np.array_equal(idx.by_qs.reshape(-1), np.bincount(qs, minlength=idx.by_qs.size))
        assert np.array_equal(idx.by_wr.reshape(-1), np.bincount(wr, minlength=idx.by_wr.size))
        sim.prune_live()  # as the next tick does after its commands: the index drops exactly the final rows
        assert np.array_equal(sim.live, np.flatnonzero(~np.isin(j["jobStatus"], FINAL)))
        live = sim.live
        for name in ("activated", "running", "holding", "transferring", "assigned", "sent", "starting", "throttled"):
            assert np.array_equal(sim.live_rows(name), live[j["jobStatus"][live] == S[name]]), (i, name)
