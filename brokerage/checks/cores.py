"""Core count: how many cores a job takes at each queue, and the task's multi-/single-core match (-cpucore)."""

from __future__ import annotations

from typing import Any

import numpy as np

from brokerage.checks.context import QueueContext
from brokerage.framework import Derived, Filter, Reads, Verdict
from brokerage.model import views
from brokerage.model.explain import fmt_many


def job_cores(qa: views.QueueArrays, task_cc: int) -> np.ndarray:
    """Cores one job of a task with corecount TASK_CC takes at every queue.

    Usage: ``job_cores(views.queue_arrays(cache), 8)``
    """
    site_cc = qa["corecount"].astype(float, copy=False)
    # a multi-core (or any-core) job takes the whole slot; a single-core job one core
    out = np.where(task_cc == 1, 1.0, np.where(site_cc > 0, site_cc, max(task_cc, 1)))
    return views.frozen(out)


JOB_CORES = Derived(
    "job_cores", Reads(task=("corecount",)), lambda ctx: job_cores(ctx.qa, int(ctx.task.get("corecount") or 0))
)
"""Cores per job at every queue, shared by the tasks with the same corecount."""


def core_count_check(qa: views.QueueArrays, task: dict[str, Any], any_core_needs_multi: bool) -> Verdict:
    """Multi-core tasks need multi-core queues, single-core tasks single-core queues; maxCoreCount caps it.

    ANY_CORE_NEEDS_MULTI: whether an any-core task (corecount 0) must still go to multi-core queues.
    Usage: ``core_count_check(qa, task, False).passed``
    """
    site = qa["corecount"].astype(float, copy=False)
    task_cc = int(task.get("corecount") or 0)
    if task_cc > 1 or (task_cc == 0 and any_core_needs_multi):
        ok = site > 1
        need = "a multi-core queue"
    elif task_cc == 0:
        ok = np.ones(qa.n, dtype=bool)
        need = ""
    else:
        ok = site <= 1
        need = "a single-core queue"
    maxcc = task.get("maxcorecount")
    over = np.zeros(qa.n, dtype=bool) if not maxcc else (site > maxcc)
    codes = np.where(ok & over, "-max_cpucore", np.where(ok, "", "-cpucore"))

    def reasons(idx: np.ndarray) -> list[str]:
        return [
            f"corecount={cc} > maxCoreCount={maxcc}"
            if code == "-max_cpucore"
            else f"task corecount={task_cc} needs {need}, queue corecount={cc}"
            for cc, code in zip(fmt_many(site[idx]), codes[idx].tolist(), strict=True)
        ]

    return Verdict(ok & ~over, codes, reasons)


def f_cpucore(ctx: QueueContext) -> Verdict:
    """Core count matching; an any-core task needs multi-core queues when the broker says so."""
    return core_count_check(ctx.qa, ctx.task, ctx.any_core_needs_multi)


CPUCORE = Filter(
    "core count check",
    ("-cpucore", "-max_cpucore"),
    "CPU core count matching: multi-core tasks to multi-core queues, single-core tasks to single-core queues; "
    "the queue's corecount may not exceed the task's maxCoreCount",
    f_cpucore,
    reads=Reads(task=("corecount", "maxcorecount"), facts=("any_core_needs_multi",)),
)
