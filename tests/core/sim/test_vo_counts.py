"""The simulator's jobs carry their task's VO and the counts the brokers read are kept per VO, as JEDI counts one
VO's jobs (getJobStatisticsByGlobalShare(vo)) and a user is a (USERNAME, VO) pair; hand-computed."""

from __future__ import annotations

from typing import Any

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.sim import brokering, live_counts
from brokerage.sim.engine import Simulation
from brokerage.sim.jobs import FINAL, IS_QUEUED, S
from brokerage.sim.propagate import end_jobs
from tests.builders import anal_queue, anal_task, counts, dataset, sim_grid_snapshot, user_counts
from tests.core.sim.conftest import add_jobs

UA = "User Analysis"


def wlcg(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ROWS as VO wlcg's."""
    return [{**r, "vo": "wlcg"} for r in rows]


def _sim() -> Simulation:
    """Analysis queues AQ and BQ; at AQ the snapshot's 8 running atlas jobs (all atlas bob's) and 4 running wlcg jobs
    (all wlcg bob's, another user); alice's atlas task 1 and her wlcg task 2, 20 inputs each."""
    qs = [anal_queue("AQ", "S1"), anal_queue("BQ", "S2")]
    jc = counts("AQ", gshare=UA, running=8) + wlcg(counts("AQ", gshare=UA, running=4))
    uc = user_counts("AQ", user="bob", running=8) + wlcg(user_counts("AQ", user="bob", running=4))
    kw = {"chunk_nevents": 100, "chunk_njobs": 10, "cputime": 1.0}
    snap = sim_grid_snapshot(
        qs, [anal_task(1, **kw), anal_task(2, vo="wlcg", **kw)], job_counts=jc, user_job_counts=uc,
        datasets=[dataset(1, 1, nfiles=20, nevents=200, neventsused=0),
                  dataset(2, 2, nfiles=20, nevents=200, neventsused=0)],
    )  # fmt: skip
    return Simulation(snap, Config(), seed=0)


def _of(df: Any, **match: Any) -> int:
    m = np.ones(len(df), bool)
    for k, v in match.items():
        m &= (df[k] == v).to_numpy()
    return int(df.loc[m, "njobs"].sum())


def test_the_snapshots_jobs_keep_their_counts_vo() -> None:
    """The 12 jobs the snapshot holds at AQ are 8 of VO atlas and 4 of VO wlcg; refreshed, the brokers' job counts
    are 8 atlas and 4 wlcg running jobs at AQ (not 12 atlas)."""
    sim = _sim()
    assert sim.g.vos == ["atlas", "wlcg"]
    assert np.bincount(sim.jobs["vo"][: sim.jobs.n]).tolist() == [8, 4]
    sim.now = 60.0
    brokering.tick(sim, sim.now)
    jc = sim.brokerage_snap.tables["job_counts"]
    assert _of(jc, vo="atlas", panda_queue="AQ", jobstatus="running") == 8
    assert _of(jc, vo="wlcg", panda_queue="AQ", jobstatus="running") == 4


def test_snapshot_users_are_shared_out_within_their_vo() -> None:
    """4 of the 8 atlas jobs at AQ end: atlas bob holds 8/8 x 4 = 4 running jobs, wlcg bob 4/4 x 4 = 4 (shared out
    over both VOs, 8/12 x 8 = 5 and 4/12 x 8 = 3)."""
    sim = _sim()
    atlas_rows = np.flatnonzero(sim.jobs["vo"][: sim.jobs.n] == 0)[:4]
    sim.move_jobs(atlas_rows, "holding")
    end_jobs(sim, atlas_rows, "finished")
    sim.prune_live()
    u = live_counts.user_job_counts(sim)
    assert _of(u, produsername="bob", vo="atlas") == 4 and _of(u, produsername="bob", vo="wlcg") == 4


def test_generated_jobs_carry_their_tasks_vo() -> None:
    """Jobs the JobGenerator makes for alice's wlcg task are wlcg's, those of her atlas task atlas'; the user
    counts hold each under its VO (two users named alice)."""
    sim = _sim().run(1)
    j, n = sim.jobs, sim.jobs.n
    tid, vo = j["jediTaskID"][:n], j["vo"][:n]
    assert (tid == 2).any() and set(vo[tid == 2].tolist()) == {1} and set(vo[tid == 1].tolist()) == {0}
    live = sim.live[~np.isin(j["jobStatus"][sim.live], FINAL)]
    u = live_counts.user_job_counts(sim)
    for t, name in ((1, "atlas"), (2, "wlcg")):
        assert _of(u, produsername="alice", vo=name) == int((j["jediTaskID"][live] == t).sum()) > 0


def test_live_counts_are_kept_per_vo() -> None:
    """3 activated wlcg jobs at BQ are queued jobs of (wlcg, BQ, User Analysis) in the live counts the weights
    read, none of atlas'; a wlcg job just placed counts for wlcg too."""
    sim = _sim()
    add_jobs(sim, 3, queue="BQ", jediTaskID=2, prodSourceLabel=1, gshare=sim.si[UA], vo=1)
    running, queued = brokering.count_live(sim)
    bq = np.array([sim.qi["BQ"]])
    assert queued[brokering.count_key(sim, 1, bq, sim.si[UA])].tolist() == [3]
    assert queued[brokering.count_key(sim, 0, bq, sim.si[UA])].tolist() == [0]
    sim.live_counts = (running, queued)
    brokering.placed(sim, bq, sim.si[UA], brokering.vo_code(sim, 2))
    assert queued[brokering.count_key(sim, 1, bq, sim.si[UA])].tolist() == [4]
    assert brokering.vo_code(sim, 1) == 0


def test_kept_counts_per_vo_equal_a_recount_every_tick() -> None:
    """Over an hour of the two-VO grid, the counts the brokers read (kept by the moves, per VO, queue and share)
    equal a recount of the live jobs at every tick, running and queued alike (they were recounted for every
    multi-VO run before the status index kept them per VO)."""
    sim = _sim()
    j = sim.jobs
    queued_codes = np.flatnonzero(IS_QUEUED)
    for i in range(60):
        sim.step(i * 60.0)
        live = sim.live[~np.isin(j["jobStatus"][sim.live], FINAL)]
        key = brokering.count_key(sim, j["vo"][live], j["computingSite"][live], j["gshare"][live])
        size = len(sim.g.vos) * len(sim.g.queues) * len(sim.g.shares)
        st = j["jobStatus"][live]
        running, queued = brokering.count_live(sim)
        assert np.array_equal(running, np.bincount(key[st == S["running"]], minlength=size))
        assert np.array_equal(queued, np.bincount(key[np.isin(st, queued_codes)], minlength=size))
    assert j["vo"][sim.live].max() == 1  # the wlcg task's jobs were among them
