"""ContentsFeeder and TaskBroker (jedi-lifecycle.md §6.1, §9): defined tasks are fed, assigning tasks get a nucleus."""

from __future__ import annotations

import pandas as pd

from brokerage.brokers import router
from brokerage.sim.state import SimState

RETRY_ASSIGNING_S = 1800.0  # a task whose nucleus brokerage failed is tried again 30 min later


def nucleus_seed(state: SimState) -> int:
    """The seed of the nucleus broker's weighted draw in this run: the router's shared seed moved by the run's
    seed, so one run is reproducible and runs of other seeds draw otherwise.

    Usage: ``nucleus_seed(state) == router.NUCLEUS_SEED + state.seed``
    """
    return router.NUCLEUS_SEED + int(state.seed)


def tick(state: SimState, now: float) -> None:
    """ContentsFeeder: defined tasks to assigning (a managed task without a nucleus) or ready; TaskBroker: assigning
    tasks unmodified for 30 min get a nucleus, as one cycle over them (the nucleus broker's many-task entry).

    Usage: ``taskbroker.tick(state, state.now)``
    """
    t = state.tasks
    defined = t.index[t["status"] == "defined"]
    needs = (t.loc[defined, "prodSourceLabel"] != "user") & t.loc[defined, "nucleus"].isna()
    state.move_tasks(defined[needs.to_numpy()], "assigning", "ContentsFeeder: a managed task without a nucleus")
    state.move_tasks(defined[~needs.to_numpy()], "ready", "ContentsFeeder: inputs registered")
    due = t.index[(t["status"] == "assigning") & (t["modificationTime"] <= now - RETRY_ASSIGNING_S)]
    if len(due) == 0:
        return
    decisions = router.NUCLEUS.broker_many(state.brokerage_snap, [int(x) for x in due], state.config,
                                           seed=nucleus_seed(state), cache=state.cache)  # fmt: skip
    chosen = [(d.task, d.extra.get("chosen")) for d in decisions if d.extra.get("chosen")]
    for tid, nuc in chosen:
        t.at[tid, "nucleus"] = nuc
        state.task_nucleus[int(tid)] = state.nucleus_code.get(nuc, 0)  # the broker picks among the nuclei
    state.move_tasks(pd.Index([c[0] for c in chosen]), "ready", "TaskBroker: nucleus chosen")
    t.loc[due, "modificationTime"] = now
