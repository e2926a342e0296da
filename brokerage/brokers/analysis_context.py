"""The analysis task's context: queue context plus its Stabilizer, failure history and site patterns."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from brokerage.brokers.stabilizer import CONFIG_KEYS as STABILIZER_KEYS
from brokerage.brokers.stabilizer import StabilizerTable, stabilizer
from brokerage.checks.context import QueueContext, queue_fields
from brokerage.checks.cores import JOB_CORES
from brokerage.framework import Reads
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config


@dataclass(kw_only=True)
class AnalContext(QueueContext):
    """The queue context of an analysis task, plus its Stabilizer, failure history and candidate masks."""

    DEPENDS: ClassVar[dict[str, Reads]] = {
        **QueueContext.DEPENDS,
        "at_nucleus": Reads(facts=("avail",)),
        "wan_needed": Reads(facts=("avail",)),
        "stab": Reads(config=STABILIZER_KEYS, task=("username", "gshare", "vo")),
        "history": Reads(config=("TW_DONE_JOB_STAT",), task=("jeditaskid",)),
    }

    stab: StabilizerTable
    history: dict[str, np.ndarray]
    prelim: np.ndarray
    preassigned: np.ndarray
    use_locality: bool = True


def split_list(text: str | None) -> list[str]:
    """Comma-separated task parameter -> stripped non-empty entries."""
    return [s.strip() for s in str(text or "").split(",") if s.strip()]


def match_queues(cache: GridCache, patterns: list[str]) -> np.ndarray:
    """Queues whose name or ATLAS site matches any shell-style wildcard pattern (case-sensitive, whole name).

    Usage: ``match_queues(cache, ["ANALY_*"])``
    """
    qa = views.queue_arrays(cache)
    if not patterns:
        return np.zeros(qa.n, dtype=bool)

    def build() -> np.ndarray:
        rx = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))
        return np.fromiter(
            (
                rx.match(str(q)) is not None or rx.match(str(s)) is not None
                for q, s in zip(qa.name, qa["atlas_site"], strict=True)
            ),
            dtype=bool,
            count=qa.n,
        )

    return cache.get(("analysis:match", *patterns), build)


def _task_job_arrays(cache: GridCache) -> dict[str, Any]:
    def build() -> dict[str, Any]:
        qa = views.queue_arrays(cache)
        t = cache.snap.task_job_counts
        qi = t["panda_queue"].map(qa.index)
        return {
            "groups": t.groupby("jeditaskid").indices,
            "queue": qi.fillna(-1).astype(np.int64).to_numpy(),
            "status": t["jobstatus"].to_numpy(dtype=object),
            "njobs": t["njobs"].to_numpy(dtype=float),
            "time": t["modificationtime"].to_numpy(dtype="datetime64[ns]"),
        }

    return cache.get("analysis:task_job_arrays", build)


def failure_history(cache: GridCache, jeditaskid: int, hours: float) -> dict[str, np.ndarray]:
    """finished / failed / closed jobs of the task per queue, modified within HOURS before the snapshot.

    Usage: ``failure_history(cache, 7, 6.0)["failed"]``
    """
    n = views.queue_arrays(cache).n
    arrays = _task_job_arrays(cache)
    out = {s: np.zeros(n) for s in ("finished", "failed", "closed")}
    idx = arrays["groups"].get(jeditaskid)
    if idx is None:
        return out
    start = (pd.Timestamp(cache.snap.taken_at) - pd.Timedelta(hours=float(hours))).tz_convert(None).to_datetime64()
    idx = idx[(arrays["time"][idx] >= start) & (arrays["queue"][idx] >= 0)]
    qi, status, nj = arrays["queue"][idx], arrays["status"][idx], arrays["njobs"][idx]
    for s in out:
        m = status == s
        out[s] = np.bincount(qi[m], weights=nj[m], minlength=n)
    return out


def make_context(task: dict[str, Any], config: Config, cache: GridCache) -> AnalContext:
    """Build the per-task arrays the analysis filters share.

    Usage: ``ctx = make_context(views.task_row(cache, 7), Config(), cache)``
    """
    tid = int(task["jeditaskid"])
    gshare = str(task.get("gshare") or "")
    avail = views.available_at_queues(cache, tid)
    has_input = avail["total_files"] > 0
    complete = avail["missing_files"] <= 0
    ctx = AnalContext(
        **queue_fields(cache, task, config, gshare, avail),
        at_nucleus=complete,
        # queues without the whole input need WAN transfers (production's satellites of the nucleus)
        wan_needed=~complete if has_input else None,
        stab=stabilizer(cache, config, str(task.get("username") or ""), gshare, views.task_vo(task)),
        history=failure_history(cache, tid, float(config["TW_DONE_JOB_STAT"])),
        prelim=np.zeros(len(complete), dtype=bool),
        preassigned=match_queues(cache, split_list(task.get("site")))
        | match_queues(cache, split_list(task.get("includedsite"))),
    )
    ctx.job_cores = JOB_CORES(ctx)
    return ctx
