"""JobGenerator's cycle: its draws are rng.choice's, and the jobs it makes join the table and the log at its end."""

from __future__ import annotations

import numpy as np

from brokerage.sim import jobgen
from tests.builders import counts, dataset, task
from tests.core.sim.conftest import small_sim


def test_draw_gives_the_indices_rng_choice_gives() -> None:
    """A queue is drawn by the inverse CDF of the weights on one uniform per job, the numbers rng.choice(p=...)
    returns from the same generator state."""
    p = np.array([0.1, 0.0, 0.6, 0.3])
    a, b = np.random.default_rng(7), np.random.default_rng(7)
    assert jobgen.draw(a, p, 1000).tolist() == b.choice(4, size=1000, p=p).tolist()
    assert a.random() == b.random()  # the same number of uniforms taken


def test_a_cycles_jobs_join_the_table_in_the_order_they_were_made() -> None:
    """Two tasks of 3 one-file jobs each: after one cycle the table holds 6 activated jobs, task 1's rows first (the
    higher priority), each logged once as generated before its task's move to scouting, and the scouts' rows point at
    their own task's jobs."""
    tasks = [task(t, currentpriority=600 - t, chunk_nevents=30, chunk_njobs=3, nfilesperjob=1, cputime=1.0)
             for t in (1, 2)]  # fmt: skip
    ds = [dataset(t, t, nfiles=3, nevents=30, neventsused=0) for t in (1, 2)]
    sim = small_sim(tasks=tasks, datasets=ds, job_counts=counts("A", running=20))
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    jobgen.tick(sim, 0.0)
    j = sim.jobs
    assert j["jediTaskID"].tolist() == [1, 1, 1, 2, 2, 2]
    assert sim.new_jobs == [] and sim.new_n == 0
    assert sorted(sim.live.tolist()) == list(range(6))
    for tid in (1, 2):
        rows = np.concatenate(sim.scout_rows[tid])
        assert (j["jediTaskID"][rows] == tid).all() and j["isScout"][rows].all()
    log = sim.log.frame()
    made = log[log["rule"] == "generate"]
    assert made["id"].tolist() == j["PandaID"].tolist()
    # each task's move to scouting comes right after its jobs, as when they were appended one task at a time
    assert log["rule"].tolist() == ["generate"] * 3 + ["task"] + ["generate"] * 3 + ["task"]
