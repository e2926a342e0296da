"""A run's output: headline figures, time series per queue/share/nucleus, task progress and the event counts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from brokerage.sim.datasets import dataset_counts
from brokerage.sim.jobs import S
from brokerage.sim.state import TICK_S, SimState

TOP_QUEUES = 50  # queues kept in the output's series: the largest change of queued + running over the run
NO_NUCLEUS = "(no nucleus: analysis, or jobs from the snapshot)"
TASK_CHANGES = 50_000  # task status changes kept in the output, oldest first (a 24 h demo run makes about 11,000)
SAMPLE_S = 600.0  # time series resolution


def sample(state: SimState, now: float) -> None:
    """One sample of the time series at NOW: activated and running jobs per queue, share, work queue and nucleus,
    the jobs ended so far, and the work queues the throttler holds back.

    Usage: ``sample(state, state.now)``
    """
    sim = state
    j, nq, ns = sim.jobs, len(sim.g.queues), len(sim.g.shares)
    s = sim.series
    for name in ("activated", "running"):
        rows = sim.live_rows(name)
        s.queue.setdefault(name, []).append(np.bincount(j["computingSite"][rows], minlength=nq))
        s.share.setdefault(name, []).append(np.bincount(j["gshare"][rows], minlength=ns))
        s.work_queue.setdefault(name, []).append(np.bincount(j["workQueue"][rows], minlength=len(sim.g.work_queues)))
        s.nucleus.setdefault(name, []).append(np.bincount(j["nucleus"][rows], minlength=len(sim.nuclei) + 1))
    for name, (by_queue, by_share) in sim.ended.items():
        s.queue.setdefault(name, []).append(by_queue.copy())
        s.share.setdefault(name, []).append(by_share.copy())
    s.times.append(now)
    s.throttled.append(sorted((sh, r, v.rule) for (sh, r), v in sim.verdicts.items() if v.throttled))


def headline(sim: SimState) -> dict[str, Any]:
    """The figures two runs are compared by.

    Usage: ``headline(sim)["jobs_finished"]``
    """
    j, log = sim.jobs, sim.log  # the log's counts, kept as the run went: no frame of every event is built
    made = j["activationTime"]
    start = j["startTime"]
    both = ~np.isnan(made) & ~np.isnan(start) & (made >= 0)
    throttled = {(s, r) for sample in sim.series.throttled for s, r, _ in sample}
    t = sim.tasks
    return {
        "hours": sim.now / 3600.0,
        "jobs_generated": log.total(rules=("generate",)),
        "jobs_started": log.total(rules=("dispatch",)),
        "jobs_finished": log.total(to=("finished",)),
        "jobs_failed": log.total(to=("failed",)),
        "jobs_closed_reassigned": log.total(to=("closed",)),
        "mean_queued_minutes": float(np.mean(start[both] - made[both]) / 60.0) if both.any() else None,
        "throttled_work_queues": sorted(f"{s}/{r}" for s, r in throttled),
        "tasks_completed": int(t["status"].isin(["done", "finished", "failed"]).sum()),
        "tasks_pending": int((t["status"] == "pending").sum()),
        "tasks_throttled": int((t["status"] == "throttled").sum()),
        "fast_rebrokerage_dry_runs": len(sim.dry_runs),
        "memory_increases": log.total(rules=("retry_ram", "retry_task_ram")),
    }


def series_frames(sim: SimState) -> dict[str, pd.DataFrame]:
    """Time series as long DataFrames: ``queue`` and ``share`` (time_h, name, metric, value).

    Usage: ``series_frames(sim)["share"].query("metric == 'running'")``
    """
    out: dict[str, pd.DataFrame] = {}
    times = np.asarray(sim.series.times) / 3600.0
    for kind, names, data in (("queue", sim.g.queues, sim.series.queue), ("share", sim.g.shares, sim.series.share)):
        parts = []
        for metric, samples in data.items():
            m = np.vstack(samples)  # samples x names
            parts.append(pd.DataFrame({
                "time_h": np.repeat(times, m.shape[1]), "name": np.tile(np.asarray(names, dtype=object), len(times)),
                "metric": metric, "value": m.ravel(),
            }))  # fmt: skip
        out[kind] = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return out


def _top_queues(sim: SimState) -> list[int]:
    act, run = np.vstack(sim.series.queue["activated"]), np.vstack(sim.series.queue["running"])
    load = act + run
    change = np.abs(load[-1] - load[0])  # change over the run
    return [int(i) for i in np.argsort(-change, kind="stable")[:TOP_QUEUES]]


def _named(samples_by_metric: dict[str, list[np.ndarray]], names: list[str]) -> dict[str, dict[str, list[int]]]:
    """Per name with any job in the run: each metric's samples (activated, running) over time."""
    if not samples_by_metric:
        return {}
    stacked = {m: np.vstack(s) for m, s in samples_by_metric.items()}
    busy = np.flatnonzero(sum(m.max(axis=0) for m in stacked.values()) > 0)
    return {names[i]: {m: [int(x) for x in a[:, i]] for m, a in stacked.items()} for i in busy}


def build_result(sim: SimState) -> dict[str, Any]:
    """Everything a run reports, JSON-ready.

    Usage: ``json.dumps(build_result(sim))``
    """
    times = [round(t / 3600.0, 4) for t in sim.series.times]
    top = _top_queues(sim)
    queues = {
        sim.g.queues[i]: {m: [int(s[i]) for s in samples] for m, samples in sim.series.queue.items()} for i in top
    }
    n_tree = len(sim.g.tree.names)
    shares = {  # jobs sit on the tree's leaves (and on shares the tree lacks): the branches would only repeat them
        name: {m: [int(s[i]) for s in samples] for m, samples in sim.series.share.items()}
        for i, name in enumerate(sim.g.shares)
        if i >= n_tree or sim.g.tree.leaf[i]
    }
    groups = {
        "work_queues": _named(sim.series.work_queue, sim.g.work_queues),
        "nuclei": _named(sim.series.nucleus, [NO_NUCLEUS, *sim.nuclei]),
    }
    t = sim.tasks
    touched = (t["nFilesUsed"] > 0).to_numpy()
    progress = t[touched][["status", "nFiles", "nFilesUsed", "nFilesFinished", "nFilesFailed"]]
    datasets = dataset_counts(sim)[touched]
    events = sim.log.aggregated()  # aggregate(sim.log.frame()), from the counts kept as the run went
    events["from"] = events["from"].astype(str)
    return {
        "meta": {"snapshot": sim.snap.key, "seed": sim.seed, "config_changed": sim.config.changed(),
                 "tick_s": int(TICK_S), "sample_s": int(SAMPLE_S)},
        "headline": headline(sim),
        "times_h": times,
        "queues": queues,
        "shares": shares,
        **groups,
        "throttled": [[f"{s}/{r}:{rule}" for s, r, rule in sample] for sample in sim.series.throttled],
        "tasks": {int(k): {kk: (int(v) if not isinstance(v, str) else v) for kk, v in row.items()}
                  for k, row in progress.iterrows()},
        "events": events.to_dict("records"),
        "datasets": {int(k): {c: (v if isinstance(v, str) else int(v)) for c, v in row.items()}
                     for k, row in datasets.iterrows()},
        "retries": [
            {"source": src, "code": code, "action": action, "jobs": n}
            for (src, code, action), n in sorted(sim.retries.items(), key=lambda kv: -kv[1])
        ],
        "fast_rebrokerage_dry_runs": [
            {"time_h": round(tm / 3600.0, 3), "queue": q, "gshare": s, "would_close": n}
            for tm, q, s, n in sim.dry_runs[:1000]
        ],
        "statuses": {name: int((sim.jobs["jobStatus"] == code).sum()) for name, code in S.items()},
        "task_changes": [
            {"time_h": round(tm / 3600.0, 3), "task": tid, "from": old, "to": new, "cause": why}
            for tm, tid, old, new, why in sim.task_causes[:TASK_CHANGES]
        ],
        "commands": [
            {"time_h": round(tm / 3600.0, 3), "task": tid, "command": cmd, "outcome": outcome, "why": why}
            for tm, tid, cmd, outcome, why in sim.commands
        ],
    }  # fmt: skip
