"""The queue checks of PanDA's generic (non-ATLAS) job broker, GenJobBroker, in its order, over a queue context."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from brokerage.checks.context import QueueContext
from brokerage.framework import Filter, Verdict
from brokerage.model.explain import fmt_many

MIB = 1024.0 * 1024.0
WORK_DISK_MARGIN = 300 * MIB  # JediTaskSpec.getWorkDiskSize's safety margin
_UNIT_BYTES = {"GB": 1024.0**3, "MB": MIB, "kB": 1024.0}
SE_MIN_FREE_GB = 200  # GenJobBroker's diskThreshold: a queue whose CRIC space is set must have this much (no gdpconfig)


@dataclass(kw_only=True)
class GenContext(QueueContext):
    """A task's queue context in the generic broker: the queues of its cloud (or its pre-assigned ones)."""

    preassigned: bool = False


def catchall_has(catchall: Any, key: str) -> bool:
    """Whether a queue's catchall names KEY (alone or as KEY=value), as SiteSpec.hasValueInCatchall reads it.

    Usage: ``catchall_has("allow_no_pilot,per_core_attr", "allow_no_pilot")``
    """
    return any(re.match(rf"{re.escape(key)}(=|$)", item.strip()) for item in str(catchall or "").split(","))


def catchall_value(catchall: Any, key: str) -> str | None:
    """The value of KEY=value in a queue's catchall (SiteSpec.getValueFromCatchall), else None.

    Usage: ``catchall_value("allowed_processing=evgen|simul", "allowed_processing") == "evgen|simul"``
    """
    for item in str(catchall or "").split(","):
        found = re.match(rf"{re.escape(key)}=(.+)", item.strip())
        if found:
            return found.group(1)
    return None


def f_status(ctx: GenContext) -> Verdict | None:
    """A queue must be online, unless the task's queues are pre-assigned."""
    if ctx.preassigned:
        return None
    status = ctx.qa["status"]
    return Verdict(status == "online", "-status", lambda idx: [f"status={s}" for s in status[idx].tolist()])


def _master_file_bytes(ctx: GenContext) -> float:
    """The size of one file of the master input (the chunk's largest atom, maxAtomSize), 0 without input."""
    snap = ctx.cache.snap
    ds = snap.datasets[(snap.datasets["jeditaskid"] == int(ctx.task["jeditaskid"])) & snap.datasets["is_master"]]
    if ds.empty or int(ds["nfiles"].iloc[0]) == 0:
        return 0.0
    return float(ds["size_gb"].iloc[0]) * 1024.0**3 / float(ds["nfiles"].iloc[0])


def scratch_need_mb(ctx: GenContext) -> np.ndarray:
    """Per queue the scratch disk a job needs, MB: outDisk + workDisk (+300 MiB) + the largest input file, without
    the input file where the job reads directly (allowInputLAN at a direct_access_lan queue).

    Usage: ``scratch_need_mb(ctx)[i]``
    """
    t = ctx.task
    unit = str(t.get("outdiskunit") or "")
    out = max(float(t.get("outdiskcount") or 0), 0.0)
    out *= next((b for u, b in _UNIT_BYTES.items() if unit.startswith(u)), 1.0)
    work = float(t.get("workdiskcount") or 0) * MIB + WORK_DISK_MARGIN if t.get("workdiskcount") is not None else 0
    copy = (out + work + _master_file_bytes(ctx)) // MIB
    direct = (out + work) // MIB
    reads_directly = np.asarray(ctx.qa["direct_access_lan"], dtype=bool) & bool(t.get("allowinputlan"))
    return np.where(reads_directly, direct, copy)


def f_scratch(ctx: GenContext) -> Verdict:
    """The job's scratch need must not exceed the queue's maxwdir (a queue without maxwdir passes)."""
    need = scratch_need_mb(ctx)
    maxwdir = ctx.qa["maxwdir"].astype(float, copy=False)
    return Verdict(
        (maxwdir == 0) | (need <= maxwdir),
        "-disk",
        lambda idx: [f"small scratch disk={w} < {n}" for w, n in zip(fmt_many(maxwdir[idx]), fmt_many(need[idx]),
                                                                    strict=True)],
    )  # fmt: skip


def f_se_space(ctx: GenContext) -> Verdict:
    """The free space of the queue's SE (CRIC space, GB) must be at least SE_MIN_FREE_GB; an unset space (0) passes."""
    space = ctx.qa["space"].astype(float, copy=False)
    return Verdict(
        (space == 0) | (space >= SE_MIN_FREE_GB),
        "-disk",
        lambda idx: [f"disk shortage in SE = {s} < {SE_MIN_FREE_GB}GB" for s in fmt_many(space[idx])],
    )


def f_walltime(ctx: GenContext) -> Verdict | None:
    """The task's walltime (JEDI_TASKS.WALLTIME, compared as it is, whatever its unit) must be within the queue's
    [mintime, maxtime] (0 = no limit); a task without walltime (0 or unset) is not checked."""
    wall = int(ctx.task.get("walltime") or 0)
    if wall == 0:
        return None
    hi, lo = ctx.qa["maxtime"].astype(float, copy=False), ctx.qa["mintime"].astype(float, copy=False)
    too_long, too_short = (hi != 0) & (wall > hi), (lo != 0) & (wall < lo)
    codes = np.where(too_long, "-shortwalltime", "-longwalltime")

    def reasons(idx: np.ndarray) -> list[str]:
        return [
            f"short site walltime={h}(site upper limit) < {wall}" if long_
            else f"short job walltime={lo_}(site lower limit) > {wall}"
            for h, lo_, long_ in zip(fmt_many(hi[idx]), fmt_many(lo[idx]), too_long[idx].tolist(), strict=True)
        ]  # fmt: skip

    return Verdict(~(too_long | too_short), codes, reasons)


def f_cpucore(ctx: GenContext) -> Verdict | None:
    """Core count (not for pre-assigned tasks): 0 takes any queue, 1 a queue of corecount 0, 1 or unset, n > 1 a
    queue of corecount 0 or >= n."""
    task_cc = ctx.task.get("corecount")
    if ctx.preassigned or task_cc is None or int(task_cc) < 0:
        return None
    cc, site = int(task_cc), ctx.qa["corecount"].astype(float, copy=False)
    if cc == 0:
        ok = np.ones(ctx.n, dtype=bool)
    elif cc == 1:
        ok = site <= 1
    else:
        ok = (site == 0) | (site >= cc)
    return Verdict(ok, "-cpucore", lambda idx: [f"core mismatch site:{s} <> task:{cc}" for s in fmt_many(site[idx])])


def expected_memory(ctx: GenContext) -> np.ndarray:
    """Per queue the job's memory, MB: ramCount x the queue's corecount (the task's when the queue has none) +
    baseRamCount for per-core units, ramCount alone otherwise (no 0.9 compensation in GenJobBroker).

    Usage: ``expected_memory(ctx)[i]``
    """
    t = ctx.task
    ram = float(t.get("ramcount") or 0)
    if str(t.get("ramunit") or "") in ("MBPerCore", "MBPerCoreFixed"):
        site = ctx.qa["corecount"].astype(float, copy=False)
        cores = np.where(site > 0, site, float(t.get("corecount") or 1))
        return ram * cores + float(t.get("baseramcount") or 0)
    return np.full(ctx.n, ram)


def f_memory(ctx: GenContext) -> Verdict | None:
    """The job's memory must be within the queue's [minrss, maxrss] (0 = no limit); not for pre-assigned tasks."""
    if ctx.preassigned or not ctx.task.get("ramcount"):
        return None
    mem = expected_memory(ctx)
    hi, lo = ctx.qa["maxrss"].astype(float, copy=False), ctx.qa["minrss"].astype(float, copy=False)
    too_big, too_small = (hi > 0) & (mem > hi), (lo > 0) & (mem < lo)
    codes = np.where(too_big, "-lowmemory", "-highmemory")

    def reasons(idx: np.ndarray) -> list[str]:
        return [
            f"site RAM shortage. {h} (site upper limit) less than {m}" if big
            else f"job RAM shortage. {lo_} (site lower limit) greater than {m}"
            for h, lo_, m, big in zip(fmt_many(hi[idx]), fmt_many(lo[idx]), fmt_many(mem[idx]),
                                      too_big[idx].tolist(), strict=True)
        ]  # fmt: skip

    return Verdict(~(too_big | too_small), codes, reasons)


def f_processing(ctx: GenContext) -> Verdict:
    """catchall allowed_processing / excluded_processing (pipe-separated processing types) admit or bar the task's."""
    ptype = ctx.task.get("processingtype")
    catchall = ctx.qa["catchall"]
    allowed = [catchall_value(c, "allowed_processing") for c in catchall]
    excluded = [catchall_value(c, "excluded_processing") for c in catchall]
    bad_allowed = np.array([a is not None and ptype not in a.split("|") for a in allowed], dtype=bool)
    bad_excluded = np.array([e is not None and ptype in e.split("|") for e in excluded], dtype=bool)
    return Verdict(
        ~(bad_allowed | bad_excluded),
        "-processing",
        lambda idx: [
            "processing type not in allowed list" if bad_allowed[i] else "processing type in excluded list"
            for i in idx.tolist()
        ],
    )


def f_nopilot(ctx: GenContext) -> Verdict | None:
    """A queue without pilots (getJob + updateJob of the last 3 hours) is skipped, unless the task's label is test or
    the queue's catchall holds allow_no_pilot."""
    if ctx.task.get("prodsourcelabel") == "test":
        return None
    npilot = ctx.qa["npilot"].astype(float, copy=False)
    allow = np.array([catchall_has(c, "allow_no_pilot") for c in ctx.qa["catchall"]], dtype=bool)
    return Verdict((npilot > 0) | allow, "-nopilot", "no pilot")


FILTERS: tuple[Filter, ...] = (
    Filter("site status check", ("-status",), "the queue status must be online unless the task is pre-assigned",
           f_status),
    Filter("scratch disk check", ("-disk",), "outDisk + workDisk + the largest input file must fit in maxwdir",
           f_scratch),
    Filter("SE space check", ("-disk",), f"the queue's SE space (CRIC space) must be >= {SE_MIN_FREE_GB} GB when set",
           f_se_space),
    Filter("walltime check", ("-shortwalltime", "-longwalltime"),
           "the task's walltime within the queue's [mintime, maxtime] (0 = no limit)", f_walltime),
    Filter("core count check", ("-cpucore",), "task corecount 1 needs queue corecount 0/1, n > 1 needs 0 or >= n",
           f_cpucore),
    Filter("memory check", ("-lowmemory", "-highmemory"), "the job's memory within the queue's [minrss, maxrss]",
           f_memory),
    Filter("allowed/excluded processing type check", ("-processing",),
           "catchall allowed_processing / excluded_processing admit the task's processing type", f_processing),
    Filter("pilot activity check", ("-nopilot",), "no pilot in the last 3 hours: skipped (unless label test or "
           "catchall allow_no_pilot)", f_nopilot),
)  # fmt: skip
"""GenJobBroker's queue checks in its order (its PandaSite check reads a task parameter the snapshot does not carry:
docs/generic.md)."""
