"""Walltime: the job's expected walltime within [mintime, maxtime]; scouts and merges need long queues."""

from __future__ import annotations

import numpy as np

from brokerage.checks.context import QueueContext
from brokerage.checks.limits import within_limits
from brokerage.framework import Derived, Filter, Reads, Verdict
from brokerage.model.explain import fmt, fmt_many


def expected_walltime(ctx: QueueContext) -> np.ndarray | None:
    """cpuTime x nEvents / (C x P x cpuEfficiency) + baseTime per queue, in seconds (None without estimate).

    Usage: ``expected_walltime(ctx)[i]  # seconds at queue i``
    """
    t = ctx.task
    cputime = float(t.get("cputime") or 0)
    nevents = float(t.get("chunk_nevents") or 0)
    base = float(t.get("basewalltime") or 0)
    eff = float(t.get("cpuefficiency") if t.get("cpuefficiency") is not None else 90) / 100.0
    if cputime <= 0 or nevents <= 0:
        return None
    if eff <= 0:  # cpuEfficiency 0 disables the scaling with nEvents
        return np.full(ctx.n, base)
    power = ctx.qa["corepower"].astype(float, copy=False)
    power = np.where(power > 0, power, float(ctx.config["DEFAULT_CORE_POWER"]))
    return cputime * nevents / (ctx.job_cores * power * eff) + base


def f_walltime(ctx: QueueContext) -> Verdict | None:
    """The estimated walltime must be between the queue's mintime and maxtime."""
    wall = expected_walltime(ctx)
    if wall is None:
        return None
    ctx.derived["walltime"] = wall
    return within_limits(
        wall,
        ctx.qa,
        ("mintime", "maxtime"),
        ("-shortwalltime", lambda w, hi: f"short walltime: expected {w} s > maxtime={hi} s"),
        ("-longwalltime", lambda w, lo: f"long walltime needed: expected {w} s < mintime={lo} s"),
    )


WALLTIME = Filter(
    "walltime check",
    ("-shortwalltime", "-longwalltime"),
    "the expected walltime cpuTime x nEvents / (C x P x cpuEfficiency) + baseTime lies in [mintime, maxtime]",
    f_walltime,
    uses=Reads(config=("DEFAULT_CORE_POWER",)),
)


def _scout_walltime(ctx: QueueContext) -> Verdict:
    maxtime = ctx.qa["maxtime"].astype(float, copy=False)
    need = float(ctx.config["MIN_WALLTIME_SCOUT_MERGE_HOURS"]) * 3600.0
    ok = (maxtime <= 0) | (maxtime >= need)
    code = "-scout_walltime" if ctx.scout else "-min_walltime"
    kind = "scout" if ctx.scout else "merge"
    return Verdict(
        ok, code, lambda idx: [f"maxtime={m} s < {fmt(need)} s needed by {kind} jobs" for m in fmt_many(maxtime[idx])]
    )


_SCOUT_WALLTIME = Derived(
    "scout/merge walltime", Reads(config=("MIN_WALLTIME_SCOUT_MERGE_HOURS",), facts=("scout",)), _scout_walltime
)


def f_scout_walltime(ctx: QueueContext) -> Verdict | None:
    """Scout or merge jobs: skip queues whose maxtime is less than MIN_WALLTIME_SCOUT_MERGE_HOURS."""
    if not (ctx.scout or ctx.merge):
        return None
    return _SCOUT_WALLTIME(ctx)


SCOUT_WALLTIME = Filter(
    "scout/merge walltime check",
    ("-scout_walltime", "-min_walltime"),
    "scout or merge jobs: skip queues whose maxtime is less than 24 hours",
    f_scout_walltime,
    uses=_SCOUT_WALLTIME.reads + Reads(facts=("merge",)),
)
