"""Vectorised checks of a whole task_status_log table against the JEDI transition rules."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.sim.task_states import ALLOWED_PAIRS, PAUSE_COMMAND_EXITS, describe_transition_error


def sort_log(log: pd.DataFrame) -> pd.DataFrame:
    """LOG ordered per task by time; rows with equal times keep their given order.

    Usage: ``sort_log(snap.task_status_log).groupby("jeditaskid").tail(1)``
    """
    return log.sort_values(["jeditaskid", "modificationtime"], kind="stable")


def log_problems(log: pd.DataFrame, tasks: pd.DataFrame | None = None) -> list[str]:
    """Every rule a task_status_log table breaks, one sentence each (empty list = consistent).

    Rules: each task's log starts with registered, every consecutive pair is an allowed transition, a resume
    returns to the status the task was paused in, and (when TASKS is given) every logged task exists there and
    its last logged status equals tasks.status.
    Usage: ``assert not log_problems(snap.task_status_log, snap.tasks)``
    """
    if log.empty:
        return []
    ordered = sort_log(log)
    ids = ordered["jeditaskid"].to_numpy()
    status = ordered["status"].to_numpy(dtype=object)
    times = ordered["modificationtime"]
    same_task = np.zeros(len(ids), dtype=bool)
    same_task[1:] = ids[1:] == ids[:-1]
    prev = np.empty(len(ids), dtype=object)
    prev[0] = None
    prev[1:] = status[:-1]
    prev[~same_task] = None
    ok = np.fromiter(((p, s) in ALLOWED_PAIRS for p, s in zip(prev, status, strict=True)), dtype=bool, count=len(ids))
    problems = []
    for i in np.flatnonzero(~ok):
        problems.append(
            f"task_status_log: task {ids[i]} at {_when(times.iloc[i])}: {describe_transition_error(prev[i], status[i])}"
        )
    before_pause = np.empty(len(ids), dtype=object)
    before_pause[:2] = None
    before_pause[2:] = status[:-2]
    two_back_same = np.zeros(len(ids), dtype=bool)
    two_back_same[2:] = same_task[2:] & same_task[1:-1]
    resumed = (
        ok & (prev == "paused") & two_back_same & (status != before_pause) & ~np.isin(status, list(PAUSE_COMMAND_EXITS))
    )
    for i in np.flatnonzero(resumed):
        problems.append(
            f"task_status_log: task {ids[i]} at {_when(times.iloc[i])}: a resumed task returns to "
            f"{before_pause[i]!r}, the status it was paused in, not {status[i]!r}"
        )
    if tasks is not None:
        known = dict(zip(tasks["jeditaskid"].tolist(), tasks["status"].tolist(), strict=True))
        last = ~np.append(same_task[1:], False)
        for tid, st in zip(ids[last], status[last], strict=True):
            if tid not in known:
                problems.append(f"task_status_log: task {tid} is not in tasks")
            elif known[tid] != st:
                problems.append(f"task_status_log: task {tid} last logged {st!r} but tasks.status is {known[tid]!r}")
    return problems


def _when(t: object) -> str:
    return "an unknown time" if pd.isna(t) else pd.Timestamp(t).strftime("%Y-%m-%dT%H:%M:%SZ")
