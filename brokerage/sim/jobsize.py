"""A job's size at the queue it goes to (seed 003: JEDI "generates jobs according to the site parameters, such as the
number of cores per slot, memory size, and walltime limit"; nGBPerJob; tgtMaxOutputForNG) and the input it leaves."""

from __future__ import annotations

import numpy as np

from brokerage.sim.setup import disk_rule
from brokerage.sim.split import MAX_OUT_MB, events_within, ng_events, ng_for_target, whole_files
from brokerage.sim.state import SimState

EPS = 1e-9


def shares_at(
    state: SimState, tid: int, share: np.ndarray, q: np.ndarray, job_cores: np.ndarray, scout: bool = False
) -> np.ndarray:  # fmt: skip
    """The share of task TID's events per job that each of its units (holding SHARE) takes at queue Q with JOB_CORES
    cores: whole input files (at least one, at most nMaxFilesPerJob or MAX_FILES_PER_JOB) whose estimated walltime
    (seed 003: "wall = cpuTime/corePower/coreCount/cpuEfficiency*nEvents+baseWalltime") fits the queue's maxtime (or
    the task's split rule maxWalltime when shorter), whose disk estimate fits the queue's maxwdir (without the input
    where the task reads it by direct access and the queue allows that) and whose output stays within
    MAX_OUT_MB (the largest output taken as the whole output). A task whose rule fixes the size (nEventsPerJob,
    nFilesPerJob) keeps it: JEDI never splits one of its jobs. A SCOUT job of a task without one takes one file
    (JobSplitter: scouts use nFilesPerJob = 1 when no nFiles/nEvents per job rule).

    Usage: ``share = shares_at(state, 42, state.files.share[fids], queues, cores)``
    """
    p, fixed, per_file, in_mb, out_mb, work_mb, maxwall_task, _tgt, cpu0, ng, max_files, direct = state.sizing[tid]
    if fixed or p <= per_file:  # one atom: nothing to cut
        return share
    if scout and per_file > 0:
        return np.minimum(share, per_file / p)
    g = state.g
    basewall, cpu, cores, _label, _prio = state.static[tid]
    now_cpu = float(state.tasks.at[tid, "cpuTime"])  # the scouts or the retry module may have raised it
    cpu_job = cpu * (now_cpu / cpu0 if cpu0 > 0 else 1.0)
    limit = g.maxtime_s[q]
    if maxwall_task > 0:
        limit = np.where(limit > 0, np.minimum(limit, maxwall_task), maxwall_task)
    per_event = cpu_job * cores / job_cores / g.corepower[q] / p  # seconds per event at the queue
    with np.errstate(divide="ignore", invalid="ignore"):
        by_wall = np.where((limit > 0) & (per_event > 0), (limit - basewall) / per_event, np.inf)
    rule = disk_rule(state.config)
    counted = rule.wdir_with_work or ng <= 0  # JobSplitter: maxwdir is maxSize unless nGBPerJob is
    work, floor = (work_mb + rule.work_margin_mb, rule.out_floor_mb) if counted else (0.0, 0.0)
    wdir = g.maxwdir_mb[q]
    # seed 000: "inputDiskCount is zero if the queues are configured to read input files directly"
    in_q = np.where(g.direct_access[q], 0.0, in_mb) if direct else in_mb
    by_disk = np.where(wdir > 0, events_within(wdir, in_q, out_mb, work, floor), np.inf)
    by_out = MAX_OUT_MB / out_mb if out_mb > 0 else np.inf
    events = whole_files(np.minimum(np.minimum(by_wall, by_disk), by_out), per_file, max_files)
    return np.minimum(share, events / p)


def credit(state: SimState, tid: int, returned: float) -> int:
    """Task TID's jobs were made shorter than their units by RETURNED (in units of its events per job): that input
    becomes new units, whole ones and at most one short one (``state.unit_tail``, given to the next unit made), as
    JEDI's next chunk takes the files a shortened job left. The units added (exposed at once unless the task is
    still scouting; its scouts' end exposes all).

    Usage: ``credit(state, 42, 0.4)``
    """
    if returned <= EPS:
        return 0
    tail = state.unit_tail.pop(tid, 0.0)
    total = returned + tail
    whole = int(np.floor(total + EPS))
    frac = total - whole
    add = whole + int(frac > EPS) - int(tail > 0)  # the old short unit is merged into the new remainder
    if frac > EPS:
        state.unit_tail[tid] = frac
    t = state.tasks
    t.at[tid, "nFiles"] += add
    if not (t.at[tid, "useScout"] and t.at[tid, "status"] in ("ready", "scouting")):
        t.at[tid, "nFilesToBeUsed"] += add
    return add


def take_tail(state: SimState, tid: int, fids: np.ndarray) -> None:
    """New units FIDS of task TID: the first are the one-file units its scouts take while any is left to make
    (``state.scout_files``), then one holds the task's short remainder, if one is waiting.

    Usage: ``take_tail(state, 42, new)``
    """
    k = min(state.scout_files.get(tid, 0), len(fids))
    if k:
        size = state.sizing[tid]
        state.files.share[fids[:k]] = size.per_file / size.p
        left = state.scout_files.pop(tid) - k
        if left:
            state.scout_files[tid] = left
        fids = fids[k:]
    if len(fids) and tid in state.unit_tail:
        state.files.share[fids[0]] = state.unit_tail.pop(tid)


def reset_ng(state: SimState, tid: int) -> float | None:
    """After task TID's scouts: with tgtMaxOutputForNG, nGBPerJob is reset so that the largest output reaches it
    (seed 003: "NG is reset after the scouts in order to get towards this value") and the task's jobs take the
    events that NG allows; its new nGBPerJob, None when it has no target (or a rule that fixes its size).

    Usage: ``reset_ng(state, 42)``
    """
    p, fixed, per_file, in_mb, out_mb, work_mb, _mw, tgt, _cpu0, _ng, max_files, _direct = state.sizing[tid]
    if fixed:
        return None
    rule = disk_rule(state.config)
    sizes = {"tgt_gb": tgt, "in_mb": in_mb, "out_mb": out_mb, "work_mb": work_mb, "per_file": per_file,
             "max_files": max_files}  # fmt: skip
    ng = ng_for_target(sizes, rule)
    if ng is None:
        return None
    state.estimates_changed(tid, {"ngbperjob": ng})
    state.sizing[tid] = state.sizing[tid].changed(ng=ng)
    new_p = float(ng_events(ng, sizes, rule))
    if abs(new_p - p) > EPS:
        resize(state, tid, new_p)
    return ng


def resize(state: SimState, tid: int, new_p: float) -> None:
    """Task TID's events per job become NEW_P: its units not made yet (one-file scout units and a short one among
    them) are recounted for the events they hold, the units already made keep their events (their share scaled),
    and its CPU work per job follows.

    Usage: ``resize(state, 42, 2000.0)``
    """
    t = state.tasks
    p = state.sizing[tid].p
    left = float(t.at[tid, "nFiles"] - t.at[tid, "nFilesUsed"])
    tail = state.unit_tail.pop(tid, 0.0)
    one_file = state.scout_files.pop(tid, 0)  # one-file scout units not made: they hold one file, not a unit
    short = (1.0 - tail if tail > 0 else 0.0) + one_file * (1.0 - state.sizing[tid].per_file / p)
    units = max(left - short, 0.0) * p / new_p
    whole = int(np.floor(units + EPS))
    frac = units - whole
    if frac > EPS:
        state.unit_tail[tid] = frac
    t.at[tid, "nFiles"] = int(t.at[tid, "nFilesUsed"]) + whole + int(frac > EPS)
    t.at[tid, "nEventsPerUnit"] = round(new_p)
    t.at[tid, "cpu_hs06s_per_job"] *= new_p / p
    basewall, cpu, cores, label, prio = state.static[tid]
    state.static[tid] = (basewall, cpu * new_p / p, cores, label, prio)
    state.sizing[tid] = state.sizing[tid].changed(p=new_p)
    mine = state.files.task == tid
    state.files.share[mine] *= p / new_p
