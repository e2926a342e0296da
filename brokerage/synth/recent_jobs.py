"""Recent job outcomes of the demo grid's running analysis tasks: finished, failed and closed jobs per task,
queue and hour, some (task, queue) pairs failing badly (``task_job_counts``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from brokerage.synth.common import MIN_BAD_JOBS, TW_DONE_JOB_STAT_H
from brokerage.synth.queues import Queues

_COLUMNS = ("jeditaskid", "panda_queue", "jobstatus", "modificationtime", "njobs")


def task_job_counts(
    rng: np.random.Generator, tid: np.ndarray, active: np.ndarray, q: Queues, taken: pd.Timestamp
) -> dict[str, Any]:
    """finished/failed/closed jobs of running analysis tasks (ACTIVE) per queue and hour; some queues failing badly."""
    anal_q = np.flatnonzero((q.type != "production") & (q.status == "online"))
    tasks = np.flatnonzero(active & (rng.random(len(tid)) < 0.45))
    if not len(anal_q) or not len(tasks):
        return {k: [] for k in _COLUMNS}
    k = rng.integers(1, 5, len(tasks))
    t = np.repeat(tasks, k)
    qi = anal_q[rng.integers(0, len(anal_q), len(t))]
    bad = rng.random(len(t)) < 0.12
    counts = {
        "finished": np.where(bad, rng.integers(0, 3, len(t)), rng.poisson(20, len(t))),
        "failed": np.where(bad, rng.integers(int(MIN_BAD_JOBS) + 1, 40, len(t)), rng.poisson(1.5, len(t))),
        "closed": np.where(bad, rng.integers(0, 5, len(t)), rng.poisson(0.3, len(t))),
    }
    hours_ago = np.where(
        rng.random(len(t)) < 0.85,
        rng.uniform(0, TW_DONE_JOB_STAT_H, len(t)),
        rng.uniform(TW_DONE_JOB_STAT_H, 30, len(t)),
    )
    when = (taken - pd.to_timedelta(hours_ago * 3600.0, unit="s")).floor("h")
    parts = []
    for st, c in counts.items():
        idx = np.flatnonzero(c > 0)
        parts.append((idx, np.full(len(idx), st, dtype=object), c[idx]))
    idx = np.concatenate([p[0] for p in parts])
    order = np.argsort(idx, kind="stable")
    idx = idx[order]
    return {
        "jeditaskid": tid[t[idx]],
        "panda_queue": q.name[qi[idx]],
        "jobstatus": np.concatenate([p[1] for p in parts])[order],
        "modificationtime": when[idx],
        "njobs": np.concatenate([p[2] for p in parts])[order].astype(np.int64),
    }
