"""Issue 30, "the demo grid is built so that its counts are ones the simulator sustains", on a smaller grid made by
the same generator (seed 3, 40 queues, 100 tasks)."""

from __future__ import annotations

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.sim.engine import Simulation
from brokerage.synth.demo import demo_snapshot


def test_the_sustained_demo_grid_keeps_its_running_jobs_for_18_hours() -> None:
    """Issue 30: "under the stored config its running jobs ... stay within ±15 % of the start": the demo-like grid
    (13,945 running at the start, its jobs where its tasks' brokerage sends them) runs within ±15 % of that at 6,
    12 and 18 h (measured 13,605, 13,217 and 13,061); the same grid drawn without the placement
    (``sustained=False``) fell from 17,468 to 6,270 by 12 h. Only the grid total is held here: per share the goal
    is not met yet, and by 21 h this small grid falls 25 % as its MC Event Generation and Reprocessing tasks run
    dry (docs/lifecycle.md, "Steady state")."""
    snap = demo_snapshot(seed=3, queues=40, tasks=100)
    jc = snap.tables["job_counts"]
    start = int(jc.loc[jc["jobstatus"] == "running", "njobs"].sum())
    sim = Simulation(snap, Config(), seed=0).run(18.0)
    times = np.asarray(sim.series.times) / 3600.0
    running = np.asarray(sim.series.share["running"]).sum(axis=1)
    for hour in (6, 12, 18):
        now = int(running[int(np.argmin(np.abs(times - hour)))])
        assert abs(now - start) <= 0.15 * start, (hour, now, start)
