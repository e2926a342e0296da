"""The job brokers as the simulated JEDI sees them: their view of the grid, refreshed every JOB_BROKERAGE_REFRESH,
and each task's (and retried chunk's) candidate queues with their draw probabilities."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.brokers.router import run_job_brokerage
from brokerage.model.cache import derived_cache
from brokerage.model.explain import Decision
from brokerage.sim import live_counts
from brokerage.sim.jobs import STATUSES, S
from brokerage.sim.state import SimState


def tick(state: SimState, now: float) -> None:
    """Give the brokers the simulated job counts (JEDI reads pre-aggregated job statistics that lag too): per queue,
    share and status, per user (caps, Analysis Stabilizer) and per task's ended jobs (failed/closed-jobs filter);
    the kept decisions are dropped, so every task is brokered anew on them.

    Usage: ``brokering.tick(state, state.now)``
    """
    j = state.jobs
    live = state.live[j["jobStatus"][state.live] != S["holding"]]
    if now > 0:
        g = state.g
        df = pd.DataFrame({
            "panda_queue": np.asarray(g.queues, dtype=object)[j["computingSite"][live]],
            "gshare": np.asarray(g.shares, dtype=object)[j["gshare"][live]],
            "resource_type": np.asarray(g.rtypes, dtype=object)[j["resource_type"][live]],
            "jobstatus": np.asarray(STATUSES, dtype=object)[j["jobStatus"][live]],
        })  # fmt: skip
        counts = df.value_counts().rename("njobs").reset_index()
        tables = {
            "job_counts": counts[state.snap.tables["job_counts"].columns],
            "user_job_counts": live_counts.user_job_counts(state),
            "task_job_counts": live_counts.task_job_counts(state),
        }
        if state.scouted:  # the scouts' estimates reach the brokers at their next refresh
            tasks = state.snap.tables["tasks"].copy()
            at = {int(tid): i for i, tid in enumerate(tasks["jeditaskid"])}
            for tid, values in state.scouted.items():
                for col, v in values.items():
                    tasks.iat[at[tid], tasks.columns.get_loc(col)] = v
            tables["tasks"] = tasks
        state.brokerage_snap = state.snap.replace(**tables)
        state.cache = derived_cache(state.base_cache, state.brokerage_snap)
        state.fresh.clear()  # the new snapshot holds them
    state.hp_stats = live_counts.hp_stats(state)  # JOB_STATS_HP, refreshed with the other job statistics
    state.decisions.clear()
    state.choices.clear()


def decision(state: SimState, tid: int) -> Decision:
    """Task TID's job brokerage, kept until the next refresh or until its estimates change.

    Usage: ``brokering.decision(state, 42).message``
    """
    d = state.decisions.get(tid)
    if d is None:
        d = state.decisions[tid] = broker(state, tid)
    return d


def broker(state: SimState, tid: int, **fields: float) -> Decision:
    """Job brokerage of TID with its estimates changed since the brokers' snapshot, and FIELDS (a chunk's).

    Usage: ``brokering.broker(state, 42, ramcount=3000.0)``
    """
    changed = {**state.fresh.get(tid, {}), **fields}
    scout = is_scouting(state, tid)
    if scout != state.snap_is_scout.get(tid, False):  # the brokers' snapshot says otherwise: scouts as scouts
        changed["is_scout"] = scout
    return run_job_brokerage(state.brokerage_snap, tid, state.config, cache=state.cache, task_fields=changed or None)


def is_scouting(state: SimState, tid: int) -> bool:
    """Whether TID's next jobs are scouts (a task that has not run past its scouts: useScout, ready or scouting);
    the brokers then apply the scout rules (nucleus only, active queues, maxtime >= 24 h).

    Usage: ``brokering.is_scouting(state, 42)``
    """
    t = state.tasks
    return bool(t.at[tid, "useScout"]) and str(t.at[tid, "status"]) in ("ready", "scouting")


def choices(state: SimState, tid: int, ram: float | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """The task's candidate queues (indices) and their draw probabilities (weight shares), None if none; RAM: a
    chunk's ramCount above the task's (inputs retried with more memory), brokered with it (getMaxRamCount).

    Usage: ``queues, p = brokering.choices(state, 42)``
    """
    key = tid if ram is None else (tid, ram)
    got = state.choices.get(key)
    if got is None:
        d = decision(state, tid) if ram is None else broker(state, tid, ramcount=ram)
        kept = [(state.qi[c.name], max(c.weight, 0.0)) for c in d.candidates if c.name in state.qi]
        w = np.array([k[1] for k in kept], dtype=float)
        got = (np.array([k[0] for k in kept], np.int64), w / w.sum()) if kept and w.sum() > 0 else (
            np.zeros(0, np.int64), w)  # fmt: skip
        state.choices[key] = got
    return got if len(got[0]) else None
