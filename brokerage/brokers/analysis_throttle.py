"""Analysis brokerage step 1: the task-level throttles (user and group caps, disk quota, User Analysis usage)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from brokerage.framework import Reads, Step
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.explain import fmt
from brokerage.model.gdpconfig import Config

USER_ANALYSIS = "User Analysis"  # seed: "Currently this part of throttle is only for User Analysis share"
TASK_CLASS_NAMES = {2: "S", 1: "A", 0: "B", -1: "C"}

# Statuses of a user's jobs that count as queued for the caps (throttled jobs are waiting too).
CAP_QUEUED_STATUSES = ("defined", "assigned", "activated", "starting", "throttled")
CAP_QUEUED_FACTOR = 2.0  # seed: "the number of queued jobs is larger than 2 × CAP_RUNNING_USER_JOBS"
CLASS_A_TARGET_PERCENT = 100.0  # seed: "> max(USER_USAGE_THRESHOLD_A/(# of user's running slots in hi-sites), 1)*100%"


STEPS: tuple[Step, ...] = (
    Step("user throttle", Reads(config=("CAP_RUNNING_USER_JOBS", "CAP_RUNNING_USER_CORES", "CAP_RUNNING_GROUP_JOBS",
                                        "CAP_RUNNING_GROUP_CORES", "USER_USAGE_THRESHOLD_A", "USAGE_THROTTLE_CLASS_C",
                                        "USAGE_THROTTLE_CLASS_B", "RULES"))),
)  # fmt: skip
"""Step 1's task-level throttles and the gdpconfig keys they read (CAP_RUNNING_<USER|GROUP>_<JOBS|CORES>, ...)."""


def _cap_totals(cache: GridCache, vo: str | None) -> dict[str, pd.DataFrame]:
    """Running and queued jobs and cores per user and per working group, of VO's user counts (None: every VO)."""

    def build() -> dict[str, pd.DataFrame]:
        u = views.user_counts(cache, vo)
        run = (u["jobstatus"] == "running").to_numpy()
        que = u["jobstatus"].isin(CAP_QUEUED_STATUSES).to_numpy()
        nj = u["njobs"].to_numpy(dtype=float)
        nc = u["ncores"].to_numpy(dtype=float)
        df = pd.DataFrame(
            {
                "user": u["produsername"].to_numpy(dtype=object),
                "wg": u["workinggroup"].fillna("").to_numpy(dtype=object),
                "run_jobs": np.where(run, nj, 0.0),
                "queued_jobs": np.where(que, nj, 0.0),
                "run_cores": np.where(run, nc, 0.0),
                "queued_cores": np.where(que, nc, 0.0),
            }
        )
        cols = ["run_jobs", "queued_jobs", "run_cores", "queued_cores"]
        return {
            "user": df[df["wg"] == ""].groupby("user")[cols].sum(),
            "group": df[df["wg"] != ""].groupby("wg")[cols].sum(),
        }

    return cache.get(("analysis:cap_totals", vo), build)


def _users(cache: GridCache) -> dict[str, tuple[float, bool]]:
    def build() -> dict[str, tuple[float, bool]]:
        u = cache.snap.users
        return {
            str(name): (float(slots), bool(quota))
            for name, slots, quota in zip(
                u["produsername"], u["running_slots_hi"], u["disk_quota_exceeded"], strict=True
            )
        }

    return cache.get("analysis:users", build)


def _share_usage(cache: GridCache) -> dict[str, float]:
    g = cache.snap.gshares
    return cache.get(
        "analysis:gshare_usage", lambda: dict(zip(g["gshare"], g["usage_perc"].astype(float), strict=True))
    )


def throttle(cache: GridCache, task: dict[str, Any], config: Config) -> dict[str, Any] | None:
    """Step 1: the first task-level throttle that holds, as {rule, numbers, message}, or None.

    Usage: ``throttle(cache, views.task_row(cache, 7), Config())``
    """
    user = str(task.get("username") or "")
    wg = str(task.get("workinggroup") or "")
    scope, name, kind = ("group", wg, "GROUP") if wg else ("user", user, "USER")
    totals = _cap_totals(cache, views.user_counts_vo(task, config))[scope]
    row = totals.loc[name] if name in totals.index else None
    n = {
        k: (float(row[k]) if row is not None else 0.0) for k in ("run_jobs", "queued_jobs", "run_cores", "queued_cores")
    }
    for key, count, factor, what in (
        (f"CAP_RUNNING_{kind}_JOBS", n["run_jobs"], 1.0, "running jobs"),
        (f"CAP_RUNNING_{kind}_JOBS", n["queued_jobs"], CAP_QUEUED_FACTOR, "queued jobs"),
        (f"CAP_RUNNING_{kind}_CORES", n["run_cores"], 1.0, "running cores"),
        (f"CAP_RUNNING_{kind}_CORES", n["queued_cores"], CAP_QUEUED_FACTOR, "queued cores"),
    ):
        cap = config[key]
        if cap is None or not count > factor * cap:
            continue
        rule = key if factor == 1.0 else f"{fmt(factor)}x{key}"
        numbers = {scope: name, "count": count, "limit": factor * cap, key: cap}
        numbers.update(n)
        return {
            "rule": rule,
            "numbers": numbers,
            "message": f"too many {what} {fmt(count)} > {rule}={fmt(factor * cap)}",
        }

    slots, quota = _users(cache).get(user, (0.0, False))
    if quota:
        return {
            "rule": "global disk quota",
            "numbers": {"user": user, "disk_quota_exceeded": True},
            "message": f"the global disk quota of user {user} is exceeded",
        }

    tclass = task.get("task_class")
    if task.get("gshare") != USER_ANALYSIS or tclass is None or int(tclass) not in (-1, 0, 1):
        return None
    usage = float(_share_usage(cache).get(USER_ANALYSIS, 0.0))
    tclass = int(tclass)
    numbers: dict[str, Any] = {"gshare": USER_ANALYSIS, "usage_perc": usage, "task_class": TASK_CLASS_NAMES[tclass]}
    if tclass == -1:
        limit = float(config["USAGE_THROTTLE_CLASS_C"])
        rule = "USAGE_THROTTLE_CLASS_C"
    elif tclass == 0:
        limit = float(config["USAGE_THROTTLE_CLASS_B"])
        rule = "USAGE_THROTTLE_CLASS_B"
    else:
        thr = float(config["USER_USAGE_THRESHOLD_A"])
        # no running slot at hi-sites: the ratio is unbounded, so class A is never throttled
        ratio = thr / slots if slots > 0 else float("inf")
        limit = max(ratio, 1.0) * CLASS_A_TARGET_PERCENT
        rule = "USER_USAGE_THRESHOLD_A"
        numbers.update(running_slots_hi=slots, USER_USAGE_THRESHOLD_A=thr)
    numbers["limit_perc"] = limit
    if usage > limit:
        return {
            "rule": rule,
            "numbers": numbers,
            "message": f"{USER_ANALYSIS} usage {fmt(usage)}% > {fmt(limit)}% of its target for a class "
            f"{TASK_CLASS_NAMES[tclass]} task",
        }
    return None
