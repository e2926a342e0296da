"""The headline measures replicated runs are compared by: one number per measure per finished run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from brokerage.sim.output import headline
from brokerage.sim.state import SimState

SHARE_PREFIX = "share_gap:"  # per leaf share: its mean running share minus its target, in percentage points
# (key, what it is, unit); a higher value is not always better, so the pages say "more" / "fewer", never "better"
MEASURES: tuple[tuple[str, str, str], ...] = (
    ("jobs_finished", "jobs finished", "jobs"),
    ("jobs_failed", "jobs failed", "jobs"),
    ("jobs_closed_reassigned", "jobs closed (reassigned)", "jobs"),
    ("mean_queued_minutes", "mean time queued", "min"),
    ("p95_queued_minutes", "p95 time queued", "min"),
    ("share_gap_pp", "global shares: running vs target (half the sum of |gaps|)", "pp"),
    ("tasks_completed", "tasks completed", "tasks"),
    ("tasks_pending", "tasks pending at the end", "tasks"),
    ("pending_stay_hours", "mean stay in pending", "h"),
    ("retries", "jobs retried (attempt 2 or later)", "jobs"),
    ("throttled_work_queues", "work queues throttled at some time", "work queues"),
)
NAMES = {key: name for key, name, _ in MEASURES}
UNITS = {key: unit for key, _, unit in MEASURES}


def describe(key: str) -> tuple[str, str]:
    """(what it is, unit) of measure KEY, the per-share ones included.

    Usage: ``describe("share_gap:MC Simulation")  # ('share MC Simulation: running - target', 'pp')``
    """
    if key.startswith(SHARE_PREFIX):
        return f"share {key.removeprefix(SHARE_PREFIX)}: running - target", "pp"
    return NAMES.get(key, key.replace("_", " ")), UNITS.get(key, "")


def measures(sim: SimState) -> dict[str, float | None]:
    """Every measure of the finished run SIM (None where the run gives no value, e.g. no job started).

    Usage: ``measures(Simulation(snap, Config()).run(2))["p95_queued_minutes"]``
    """
    h = headline(sim)
    j = sim.jobs
    made, start = j["activationTime"], j["startTime"]
    both = ~np.isnan(made) & ~np.isnan(start) & (made >= 0)
    waits = (start[both] - made[both]) / 60.0
    generated = sim.log.ids("generate") - 1  # PandaIDs count rows from 1
    stays = pending_stays(sim.g.tasks["status"], sim.task_causes, sim.now)
    out: dict[str, float | None] = {
        "jobs_finished": h["jobs_finished"], "jobs_failed": h["jobs_failed"],
        "jobs_closed_reassigned": h["jobs_closed_reassigned"], "mean_queued_minutes": h["mean_queued_minutes"],
        "p95_queued_minutes": float(np.percentile(waits, 95)) if len(waits) else None,
        "share_gap_pp": None,
        "tasks_completed": h["tasks_completed"], "tasks_pending": h["tasks_pending"],
        "pending_stay_hours": float(np.mean(stays)) / 3600.0 if stays else None,
        "retries": int((j["attemptNr"][generated] > 1).sum()),
        "throttled_work_queues": len(h["throttled_work_queues"]),
    }  # fmt: skip
    gaps, total = share_gaps(sim)
    out["share_gap_pp"] = total
    out.update({SHARE_PREFIX + name: gap for name, gap in gaps.items()})
    return out


def pending_stays(initial: pd.Series, causes: Sequence[tuple[float, int, str, str, str]], end: float) -> list[float]:
    """Seconds of every stay in ``pending``: from entering it (or the run's start for a task pending then) to leaving
    it (or the run's END). INITIAL is each task's status at the start, indexed by jediTaskID.

    Usage: ``pending_stays(sim.g.tasks["status"], sim.task_causes, sim.now)``
    """
    since = {int(tid): 0.0 for tid, status in initial.items() if status == "pending"}
    stays: list[float] = []
    for t, tid, old, new, _why in causes:
        if new == "pending" and old != "pending":
            since[tid] = t
        elif old == "pending" and new != "pending" and tid in since:
            stays.append(t - since.pop(tid))
    return stays + [end - t for t in since.values()]


def share_gaps(sim: SimState) -> tuple[dict[str, float], float | None]:
    """Per leaf share of the share tree: its mean share of the running jobs minus its target, in percentage points
    (over the samples with any job running); and half the sum of the absolute gaps (0: every share at its target).

    Usage: ``gaps, total = share_gaps(sim)``
    """
    samples = sim.series.share.get("running") or []
    if not samples:
        return {}, None
    run = np.vstack(samples).astype(float)  # samples x shares
    busy = run.sum(axis=1) > 0
    if not busy.any():
        return {}, None
    pct = 100.0 * run[busy] / run[busy].sum(axis=1, keepdims=True)
    tree, n_tree = sim.g.tree, len(sim.g.tree.names)
    on_leaf = np.array([i >= n_tree or bool(tree.leaf[i]) for i in range(run.shape[1])])
    gap = pct[:, on_leaf] - np.asarray(sim.g.share_target, float)[on_leaf]
    names = [n for n, keep in zip(sim.g.shares, on_leaf, strict=True) if keep]
    mean_gap = gap.mean(axis=0)
    per_share = {n: float(g) for n, g, i in zip(names, mean_gap, np.flatnonzero(on_leaf), strict=True) if i < n_tree}
    return per_share, float(np.mean(0.5 * np.abs(gap).sum(axis=1)))


def compact(sim: SimState) -> dict[str, Any]:
    """What a replica keeps: its seed, headline and measures (the full output is one run of that seed away).

    Usage: ``compact(Simulation(snap, Config(), seed=3).run(2))["measures"]``
    """
    return {"meta": {"snapshot": sim.snap.key, "seed": sim.seed, "config_changed": sim.config.changed()},
            "headline": headline(sim), "measures": measures(sim)}  # fmt: skip
