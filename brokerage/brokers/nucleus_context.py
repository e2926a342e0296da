"""What the nucleus brokerage reads: per-snapshot arrays over nuclei, the remaining work RW per nucleus and
priority, the task's input held at each nucleus, and the per-task context."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.network import link_table

ACTIVE = "ACTIVE"  # seed 000 step 1: "nuclei in the ACTIVE status"
RW_STATUSES = ("ready", "scouting", "running", "pending")  # reference §2.1: tasks whose work counts in RW
CORE_POWER = 10.0  # seed 003: "(totalRW in the nucleus)/(corePower=10)/24/3600×0.25GB"
SECONDS_PER_DAY = 86400.0
GB_PER_TB = 1024.0  # reference §2.2: DISK_THRESHOLD is TB, ×1024 to compare with GB
DEFAULT_CPUTIME = 300.0  # reference §2.1: a task without cpuTime counts 300 HS06 s per event
MILLI_UNIT_PREFIX = "mHS06"  # cpuTime in mHS06s per event is divided by 1000 (reference §2.1)
# seed 003: free space "associated to the output endpoint type"; production output goes to DATADISK
OUTPUT_ENDPOINT_TYPE = "DATADISK"
RW_UNIT = "HS06 day"


# --- per-snapshot arrays over nuclei -------------------------------------------------------------


@dataclass(frozen=True)
class NucleusArrays:
    """Every nucleus as a row: status, bare mode, its tightest output (DATADISK) storage and transfer backlog."""

    name: np.ndarray
    index: dict[str, int]
    state: np.ndarray
    bare: np.ndarray
    endpoint: np.ndarray  # name of the associated output endpoint used for space ('' when none)
    space_free: np.ndarray  # GB (NaN when no endpoint)
    space_expired: np.ndarray
    space_total: np.ndarray
    backlog: np.ndarray  # files queued for transfer into the nucleus (Production Output_queued)
    endpoint_nucleus: np.ndarray  # per DDM endpoint: nucleus row or -1
    endpoint_tape: np.ndarray  # per DDM endpoint: tape storage
    queue_nucleus: np.ndarray  # per queue: nucleus row or -1
    job_queue: np.ndarray  # per queue: production/unified queue without 'test' in its name
    job_queue_test: np.ndarray  # per queue: production/unified queue with 'test' in its name (panda-1.0.4 counts it)

    @property
    def n(self) -> int:
        """Number of nuclei."""
        return len(self.name)


def nucleus_arrays(cache: GridCache) -> NucleusArrays:
    """Numpy view of the nuclei of the snapshot (sites with role nucleus), built once per snapshot.

    Usage: ``nucleus_arrays(cache).name``
    """
    return cache.get("nucleus_arrays", lambda: _build_nucleus_arrays(cache))


def _build_nucleus_arrays(cache: GridCache) -> NucleusArrays:
    snap = cache.snap
    sites = snap.sites[snap.sites["role"] == "nucleus"]
    names = sites["site_name"].to_numpy(dtype=object)
    index = {str(s): i for i, s in enumerate(names)}
    ep = views.endpoint_arrays(cache)
    ep_site = np.asarray(ep["site_name"], dtype=object) if len(ep.name) else np.array([], dtype=object)
    ep_nuc = np.fromiter((index.get(s, -1) for s in ep_site), dtype=np.int64, count=len(ep_site))
    ep_tape = np.asarray(ep["is_tape"], dtype=bool) if len(ep.name) else np.array([], dtype=bool)
    free_all = np.asarray(ep["space_free"], dtype=float) if len(ep.name) else np.array([])
    exp_all = np.asarray(ep["space_expired"], dtype=float) if len(ep.name) else np.array([])
    tot_all = np.asarray(ep["space_total"], dtype=float) if len(ep.name) else np.array([])
    n = len(names)
    chosen = np.full(n, -1, dtype=np.int64)
    # The projected output is the same for every storage of a nucleus, so checking the one with the least
    # free + expired space is checking them all; ties go to the first endpoint by name.
    ep_type = np.asarray(ep["type"], dtype=object) if len(ep.name) else np.array([], dtype=object)
    output = (ep_nuc >= 0) & ~ep_tape & (ep_type == OUTPUT_ENDPOINT_TYPE)
    order = sorted(np.flatnonzero(output), key=lambda e: (free_all[e] + exp_all[e], ep.name[e]))
    for e in reversed(order):
        chosen[ep_nuc[e]] = e
    have = chosen >= 0
    safe = np.maximum(chosen, 0)

    def pick(values: np.ndarray) -> np.ndarray:
        return np.where(have, values[safe], np.nan) if len(values) else np.full(n, np.nan)

    qa = views.queue_arrays(cache)
    q_nuc = np.fromiter((index.get(s, -1) for s in qa["atlas_site"]), dtype=np.int64, count=qa.n)
    prod_type = np.isin(qa["type"], ("production", "unified"))
    job_queue = prod_type & ~qa.name_has_test
    return NucleusArrays(
        name=names,
        index=index,
        state=sites["state"].to_numpy(dtype=object),
        bare=np.array([b or "" for b in sites["bare_nucleus"]], dtype=object),
        endpoint=np.where(have, ep.name[safe] if len(ep.name) else "", "").astype(object),
        space_free=pick(free_all),
        space_expired=pick(exp_all),
        space_total=pick(tot_all),
        backlog=np.array([link_table(cache, str(s)).total_queued for s in names], dtype=float),
        endpoint_nucleus=ep_nuc,
        endpoint_tape=ep_tape,
        queue_nucleus=q_nuc,
        job_queue=job_queue,
        job_queue_test=prod_type & qa.name_has_test,
    )


# --- remaining work RW ---------------------------------------------------------------------------


def task_rw_seconds(cache: GridCache) -> pd.Series:
    """Remaining work of every task in HS06 s: Σ over master datasets of (nEvents − nEventsUsed) × cpuTime.

    Usage: ``task_rw_seconds(cache).loc[4242] / 86400  # HS06 day``
    """

    def build() -> pd.Series:
        snap = cache.snap
        t = snap.tasks
        cpu = t["cputime"].astype(float).fillna(DEFAULT_CPUTIME).to_numpy()
        milli = t["cputimeunit"].fillna("").astype(str).str.startswith(MILLI_UNIT_PREFIX).to_numpy()
        cpu = np.where(milli, cpu / 1000.0, cpu)
        cpu_of = pd.Series(cpu, index=t["jeditaskid"].astype(np.int64).to_numpy())
        ds = snap.datasets[snap.datasets["is_master"]]
        remaining = np.maximum(ds["nevents"].to_numpy(dtype=float) - ds["neventsused"].to_numpy(dtype=float), 0.0)
        tid = ds["jeditaskid"].astype(np.int64).to_numpy()
        work = remaining * cpu_of.reindex(tid).fillna(0.0).to_numpy()
        per_task = pd.Series(work, index=tid).groupby(level=0).sum()
        return per_task.reindex(cpu_of.index, fill_value=0.0)

    return cache.get("nucleus:task_rw", build)


def _assigned_work(cache: GridCache, na: NucleusArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(nucleus index, currentPriority, RW in HS06 s) of every task that counts for RW (built once per snapshot)."""

    def build() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        t = cache.snap.tasks
        nuc = np.fromiter((na.index.get(s, -1) if isinstance(s, str) else -1 for s in t["nucleus"]), np.int64, len(t))
        counted = t["status"].isin(RW_STATUSES).to_numpy() & (nuc >= 0)
        prio = t["currentpriority"].astype(float).fillna(0.0).to_numpy()[counted]
        return nuc[counted], prio, task_rw_seconds(cache).to_numpy()[counted]

    return cache.get("nucleus:assigned_work", build)


class RWTable:
    """RW per (priority level, nucleus) in HS06 s, for the priorities of a batch of tasks.

    ``rw(p)[n]`` = Σ RW of tasks in ready/scouting/running/pending assigned to nucleus n with currentPriority ≥ p.
    ``assign(p, n, rw)`` adds a newly assigned task of priority p to every level ≤ p, as JEDI does.
    """

    def __init__(self, cache: GridCache, na: NucleusArrays, priorities: np.ndarray) -> None:
        self.levels = np.unique(np.asarray(priorities, dtype=float))
        nuc, prio, rw = _assigned_work(cache, na)
        # a task counts for every level at or below its own priority: add at its highest level, then sum downwards
        top = np.searchsorted(self.levels, prio, side="right") - 1
        keep = top >= 0
        table = np.zeros((len(self.levels), na.n))
        np.add.at(table, (top[keep], nuc[keep]), rw[keep])
        self.table = np.flip(np.cumsum(np.flip(table, axis=0), axis=0), axis=0)

    def rw(self, priority: float) -> np.ndarray:
        """RW per nucleus (HS06 s) counting tasks with currentPriority ≥ PRIORITY (a level of the batch)."""
        return self.table[int(np.searchsorted(self.levels, priority))].copy()

    def assign(self, priority: float, nucleus: int, rw_seconds: float) -> None:
        """Count a task of PRIORITY just assigned to NUCLEUS for every level at or below its priority."""
        top = int(np.searchsorted(self.levels, priority, side="right"))
        self.table[:top, nucleus] += rw_seconds


# --- input data at each nucleus ------------------------------------------------------------------


@dataclass(frozen=True)
class NucleusInput:
    """A task's input and how much of it each nucleus holds (best endpoint of the nucleus per dataset)."""

    considered: str  # which datasets were looked at
    total_gb: float
    total_files: float
    local_gb: np.ndarray  # on any storage of the nucleus (disk or tape)
    local_disk_gb: np.ndarray  # on its disk storages
    local_files: np.ndarray


def _columns(cache: GridCache, table: str) -> tuple[dict[str, np.ndarray], dict[int, np.ndarray]]:
    """Numpy columns of a datasets/replicas table and the row indices of each task (built once per snapshot)."""

    def build() -> tuple[dict[str, np.ndarray], dict[int, np.ndarray]]:
        df = cache.snap.tables[table]
        cols = {c: df[c].to_numpy() for c in ("datasetid", "size_gb", "nfiles")}
        if table == "datasets":
            cols["is_master"] = df["is_master"].to_numpy(dtype=bool)
        else:
            index = views.endpoint_arrays(cache).index
            cols["endpoint"] = np.fromiter((index.get(x, -1) for x in df["ddm_endpoint_name"]), np.int64, len(df))
        groups = {int(k): v for k, v in df.groupby("jeditaskid").indices.items()} if len(df) else {}
        return cols, groups

    return cache.get(("nucleus:columns", table), build)


def nucleus_input(cache: GridCache, task: dict[str, Any], na: NucleusArrays) -> NucleusInput:
    """Input of TASK available at each nucleus: all input datasets, or only the primary with taskBrokerOnMaster.

    Usage: ``nucleus_input(cache, views.task_row(cache, 1), nucleus_arrays(cache)).local_gb``
    """
    tid = int(task["jeditaskid"])
    dcols, dgroups = _columns(cache, "datasets")
    rows = dgroups.get(tid, np.zeros(0, dtype=np.int64))
    master_only = bool(task.get("taskbrokeronmaster"))
    if master_only:
        rows = rows[dcols["is_master"][rows]]
    considered = "primary input dataset only (taskBrokerOnMaster)" if master_only else "all input datasets"
    sizes = dcols["size_gb"][rows].astype(float)
    nfiles = dcols["nfiles"][rows].astype(float)
    local_gb, local_disk, local_files = np.zeros(na.n), np.zeros(na.n), np.zeros(na.n)
    rcols, rgroups = _columns(cache, "dataset_replicas")
    reps = rgroups.get(tid, np.zeros(0, dtype=np.int64))
    ds_pos = {int(x): i for i, x in enumerate(dcols["datasetid"][rows])}
    if len(reps) and na.n and len(ds_pos):
        d = np.fromiter((ds_pos.get(int(x), -1) for x in rcols["datasetid"][reps]), np.int64, len(reps))
        e = rcols["endpoint"][reps]
        ok = (d >= 0) & (e >= 0)
        nuc = np.where(ok, na.endpoint_nucleus[np.maximum(e, 0)], -1)
        at = nuc >= 0
        d, e, nuc = d[at], e[at], nuc[at]
        rsize = rcols["size_gb"][reps][at].astype(float)
        rfiles = rcols["nfiles"][reps][at].astype(float)
        disk = ~na.endpoint_tape[e]
        shape = (len(ds_pos), na.n)
        best_gb, best_disk, best_files = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        np.maximum.at(best_gb, (d, nuc), rsize)
        np.maximum.at(best_disk, (d[disk], nuc[disk]), rsize[disk])
        np.maximum.at(best_files, (d, nuc), rfiles)
        # a replica never counts for more than its dataset
        local_gb = np.minimum(best_gb, sizes[:, None]).sum(axis=0)
        local_disk = np.minimum(best_disk, sizes[:, None]).sum(axis=0)
        local_files = np.minimum(best_files, nfiles[:, None]).sum(axis=0)
    return NucleusInput(considered, float(sizes.sum()), float(nfiles.sum()), local_gb, local_disk, local_files)


# --- per-task context ----------------------------------------------------------------------------


@dataclass
class NucleusContext:
    """What the nucleus filters of one task read: arrays over nuclei and the task's numbers."""

    DEPENDS: ClassVar[dict[str, Any]] = {}  # no nucleus filter is memoised
    view: ClassVar[None] = None  # the nuclei table has one view

    cache: GridCache
    task: dict[str, Any]
    config: Config
    na: NucleusArrays
    rw_seconds: np.ndarray
    inputs: NucleusInput
    parent: dict[str, Any]  # parent task id, its nucleus and that nucleus' bare mode
    alive: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    locality: dict[str, Any] = field(default_factory=dict)
    job_check: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def rw_days(self) -> np.ndarray:
        """RW per nucleus in HS06 day."""
        return self.rw_seconds / SECONDS_PER_DAY

    @property
    def n(self) -> int:
        """Number of nuclei."""
        return self.na.n


def projected_output_gb(rw_days: np.ndarray, config: Config) -> np.ndarray:
    """normalizedExpOutSize × RW: 0.25 GB per (cpuTime × corePower × day), RW in HS06 day.

    Usage: ``projected_output_gb(np.array([400.0]), Config())  # 10 GB``
    """
    return rw_days / CORE_POWER * float(config["OUTPUT_GB_PER_CORE_DAY"])


def disk_threshold(config: Config, gshare: str | None) -> tuple[str, float]:
    """(key used, threshold in TB): DISK_THRESHOLD_<gshare> when set, else DISK_THRESHOLD."""
    if gshare:
        key = f"DISK_THRESHOLD_{gshare}"
        if key in config.overrides or key in config.stored:
            return key, float(config[key])
    return "DISK_THRESHOLD", float(config["DISK_THRESHOLD"])
