"""datasetManager's activator fallback (jedi-lifecycle.md §3.6): assigned jobs whose input transfer was not
confirmed within an hour are activated (the simulator has no transfers: their input is taken as arrived)."""

from __future__ import annotations

import numpy as np

from brokerage.sim.state import SimState

ASSIGNED_H = 1.0  # assigned with prodDBUpdateTime older than 1 h (modificationTime here) -> activateJobs


def tick(state: SimState, now: float) -> None:
    """Assigned jobs unchanged for over ASSIGNED_H are activated (activationTime now).

    Usage: ``activator.tick(state, state.now)``
    """
    j = state.jobs
    rows = state.live_rows("assigned")
    age = (now - j["modificationTime"][rows]) / 3600.0
    rows, age = rows[age > ASSIGNED_H], age[age > ASSIGNED_H]
    if len(rows) == 0:
        return
    state.log.add(now, j["PandaID"][rows], "assigned", "activated", "activator", age, ASSIGNED_H)
    state.move_jobs(rows, "activated")
    j.cols["activationTime"][rows] = np.full(len(rows), now)
