"""TaskRefiner for the run's new tasks (brokerage.sim.arrivals): the plan's arrivals due join as registered tasks,
and every registered task is refined to defined, where ContentsFeeder takes it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.sim.arrivals import new_tables
from brokerage.sim.state import SimState

REFINER_PERIOD_S = 600.0  # arrivals are taken in batches every 10 simulated minutes


def tick(state: SimState, now: float) -> None:
    """The planned arrivals up to NOW join the run (registered), then registered tasks move to defined.

    Usage: ``refiner.tick(state, state.now)``
    """
    p = state.arrival_plan
    due = int(np.searchsorted(p.at_s, now, side="right"))
    if due > state.arrived:
        templates = p.template[state.arrived : due]
        first_id = int(max(state.task_ids.max(initial=0), 0)) + 1
        ds = state.snap.tables["datasets"]["datasetid"]
        first_ds = int(ds.max()) + 1 if len(ds) else 1
        state.add_tasks(*new_tables(state.snap, templates, first_id, first_ds))
        state.arrived = due
    t = state.tasks
    registered = t.index[t["status"] == "registered"]
    state.move_tasks(pd.Index(registered), "defined", "TaskRefiner: a new task refined")
