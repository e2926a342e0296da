"""The ended jobs per (task, queue, status, hour) kept as jobs end equal a groupby over the whole job table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.model.gdpconfig import Config
from brokerage.sim.ended_jobs import IS_ENDED, KEYS
from brokerage.sim.engine import Simulation
from brokerage.sim.jobs import STATUSES
from brokerage.synth.demo import demo_snapshot
from tests.core.sim.conftest import add_jobs, small_sim


def _recount(sim: Simulation) -> pd.DataFrame:
    """task_job_counts's groups as the table says: every finished, failed or closed job of a task of the run."""
    j = sim.jobs
    rows = np.flatnonzero(IS_ENDED[j["jobStatus"]] & (j["jediTaskID"] >= 0))
    end = j["modificationTime"][rows]
    df = pd.DataFrame({
        "jeditaskid": j["jediTaskID"][rows], "panda_queue": np.asarray(sim.g.queues, dtype=object)[j["computingSite"][rows]],
        "jobstatus": np.asarray(STATUSES, dtype=object)[j["jobStatus"][rows]], "hour": np.floor(end / 3600.0),
        "end": end, "njobs": 1,
    })  # fmt: skip
    return df.groupby(KEYS, as_index=False).agg(njobs=("njobs", "sum"), end=("end", "max"))


def test_kept_groups_equal_a_groupby_of_the_table() -> None:
    """Every 20 minutes of a 60-queue demo grid's first 3 hours, the kept groups (jobs and last end per task,
    queue, status and hour) equal a groupby over every ended job of the table, row for row."""
    sim = Simulation(demo_snapshot(seed=0, queues=60, tasks=300), Config(), seed=0)
    for i in range(180):
        sim.step(i * 60.0)
        if i % 20 == 19:
            kept = sim.ended_groups.frame(sim.jobs, sim.g.queues)
            pd.testing.assert_frame_equal(kept[[*KEYS, "njobs", "end"]], _recount(sim)[[*KEYS, "njobs", "end"]])
    assert len(kept) > 0


def test_rows_appended_ended_and_a_cut_table_are_read() -> None:
    """Jobs appended as finished (as tests place them) are counted; after the table is cut to empty, only the
    jobs placed since count: 3 finished of task 1 at queue A, then 2 failed after the cut."""
    sim = small_sim()
    sim.jobs.n = 0
    add_jobs(sim, n=3, status="finished", jediTaskID=1)
    got = sim.ended_groups.frame(sim.jobs, sim.g.queues)
    assert got[["jobstatus", "njobs"]].values.tolist() == [["finished", 3]]
    sim.jobs.n = 0
    add_jobs(sim, n=2, status="failed", jediTaskID=1)
    got = sim.ended_groups.frame(sim.jobs, sim.g.queues)
    assert got[["panda_queue", "jobstatus", "njobs"]].values.tolist() == [["A", "failed", 2]]
