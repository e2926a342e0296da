"""The counts the analysis broker reads follow the simulated jobs (per user, per task), hand-computed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.brokers.analysis_context import failure_history
from brokerage.model import views
from brokerage.model.gdpconfig import Config
from brokerage.sim import brokering, live_counts
from brokerage.sim.engine import Simulation
from brokerage.sim.jobs import STATUSES, S
from brokerage.sim.propagate import end_jobs
from brokerage.synth.demo import demo_snapshot
from tests.builders import anal_queue, anal_task, counts, dataset, sim_grid_snapshot, task_counts, user_counts
from tests.core.sim.conftest import add_jobs

H = 3600.0
TAKEN = "2026-11-20T12:00:00Z"


def _grid(config: Config | None = None, **tables: list) -> Simulation:  # type: ignore[type-arg]
    """Analysis queues AQ and BQ; alice's task 1 (20 inputs); the snapshot's 8 running jobs at AQ: bob 6, carol 2."""
    qs = [anal_queue("AQ", "S1"), anal_queue("BQ", "S2")]
    jc = counts("AQ", gshare="User Analysis", running=8) + counts("BQ", gshare="User Analysis", running=8)
    uc = user_counts("AQ", user="bob", running=6) + user_counts("AQ", user="carol", cores=8, running=2)
    snap = sim_grid_snapshot(
        qs, [anal_task(1, chunk_nevents=100, chunk_njobs=10, cputime=1.0)],
        datasets=[dataset(1, 1, nfiles=20, nevents=200, neventsused=0)], job_counts=jc,
        user_job_counts=tables.pop("user_job_counts", uc), **tables,
    )  # fmt: skip
    return Simulation(snap, config or Config(), seed=0)


def _of(df, **match):  # type: ignore[no-untyped-def]
    m = np.ones(len(df), bool)
    for k, v in match.items():
        m &= (df[k] == v).to_numpy()
    return int(df.loc[m, "njobs"].sum())


def test_user_counts_follow_the_simulated_jobs() -> None:
    """Per user: alice's 3 activated and 2 running simulated jobs at BQ are hers; of the snapshot's 8 running jobs
    at AQ (bob 6, carol 2) 4 ended, so bob holds 6/8 x 4 = 3 and carol 2/8 x 4 = 1 (8 cores each)."""
    sim = _grid()
    at_aq = np.flatnonzero(sim.jobs["computingSite"][: sim.jobs.n] == sim.qi["AQ"])
    sim.move_jobs(at_aq[:4], "holding")
    end_jobs(sim, at_aq[:4], "finished")
    sim.prune_live()
    add_jobs(sim, 3, queue="BQ", jediTaskID=1, prodSourceLabel=1, gshare=sim.si["User Analysis"])
    add_jobs(sim, 2, status="running", queue="BQ", jediTaskID=1, prodSourceLabel=1, gshare=sim.si["User Analysis"])
    u = live_counts.user_job_counts(sim)
    assert _of(u, produsername="alice", jobstatus="activated", panda_queue="BQ") == 3
    assert _of(u, produsername="alice", jobstatus="running") == 2
    assert _of(u, produsername="bob", jobstatus="running") == 3 and _of(u, produsername="carol") == 1
    assert int(u.loc[u["produsername"] == "carol", "ncores"].sum()) == 8


def test_user_caps_read_the_live_counts() -> None:
    """Seed 000, "the number of running jobs is larger than CAP_RUNNING_USER_JOBS" throttles the task: with the cap
    at 4, alice's task is brokered at the start (no job of hers in the snapshot) and throttled once the refreshed
    counts hold her 5 running simulated jobs."""
    sim = _grid(Config().with_overrides({"CAP_RUNNING_USER_JOBS": 4}))
    assert brokering.choices(sim, 1) is not None
    add_jobs(sim, 5, status="running", queue="BQ", jediTaskID=1, prodSourceLabel=1, gshare=sim.si["User Analysis"],
             startTime=0.0)  # fmt: skip
    sim.now = H
    brokering.tick(sim, sim.now)
    assert brokering.choices(sim, 1) is None
    assert "CAP_RUNNING_USER_JOBS" in str(brokering.decision(sim, 1).to_dict())


def test_task_job_counts_age_and_gain_the_runs_ended_jobs() -> None:
    """The failed/closed-jobs filter's history (jobs of the task ended within the last hours): the snapshot's 2
    closed jobs at AQ one hour before it, and 3 of the run closed at BQ at 1 h: at 2 h the 6-hour window holds both;
    at 6.5 h only the run's (the snapshot's are 7.5 h old)."""
    sim = _grid(task_job_counts=task_counts(1, "AQ", when="2026-11-20T11:00:00Z", closed=2))
    rows = add_jobs(sim, 3, queue="BQ", jediTaskID=1, prodSourceLabel=1, gshare=sim.si["User Analysis"])
    sim.now = 1 * H
    end_jobs(sim, rows, "closed")
    for now, want_aq in ((2 * H, 2), (6.5 * H, 0)):
        sim.now = now
        brokering.tick(sim, now)
        hist, at = failure_history(sim.cache, 1, 6.0), views.queue_arrays(sim.cache).index
        assert hist["closed"][at["BQ"]] == 3 and hist["closed"][at["AQ"]] == want_aq
    assert (sim.jobs["jobStatus"][rows] == S["closed"]).all()


def test_job_counts_equal_value_counts_of_the_live_jobs() -> None:
    """The brokers' job_counts (live jobs not holding, per queue, share, resource type, status and VO) equal
    ``DataFrame.value_counts`` over those five name columns, rows in the same order (most jobs first)."""
    sim = Simulation(demo_snapshot(seed=0, queues=60, tasks=300), Config(), seed=0).run(0.5)
    j, g = sim.jobs, sim.g
    live = sim.live[j["jobStatus"][sim.live] != S["holding"]]
    names = lambda vocabulary, col: np.asarray(vocabulary, dtype=object)[j[col][live]]  # noqa: E731
    df = pd.DataFrame({"panda_queue": names(g.queues, "computingSite"), "gshare": names(g.shares, "gshare"),
                       "resource_type": names(g.rtypes, "resource_type"), "jobstatus": names(STATUSES, "jobStatus"),
                       "vo": names(g.vos, "vo")})  # fmt: skip
    expected = df.value_counts().rename("njobs").reset_index()
    pd.testing.assert_frame_equal(brokering.job_counts(sim), expected, check_exact=True)
    assert len(expected) > 100
