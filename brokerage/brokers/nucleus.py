"""ATLAS production task brokerage: choose a nucleus for each production task (seeds 000 and 003, full-chain)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from brokerage.brokers import nucleus_panda
from brokerage.checks import placement, production_queues
from brokerage.checks.context import ProdContext
from brokerage.framework import Filter, Verdict, apply_filters
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.explain import Candidate, Decision, FunnelStep, Skip, fmt
from brokerage.model.gcpause import gc_paused
from brokerage.model.gdpconfig import Config
from brokerage.model.network import link_table
from brokerage.model.snapshot import GridSnapshot

BROKER = "task"
LABEL = "nucleus"
ACTIVE = "ACTIVE"  # seed 000 step 1: "nuclei in the ACTIVE status"
RW_STATUSES = ("ready", "scouting", "running", "pending")  # reference §2.1: tasks whose work counts in RW
CORE_POWER = 10.0  # seed 003: "(totalRW in the nucleus)/(corePower=10)/24/3600×0.25GB"
SECONDS_PER_DAY = 86400.0
GB_PER_TB = 1024.0  # reference §2.2: DISK_THRESHOLD is TB, ×1024 to compare with GB
# the weight's denominator never drops below one HS06 second, so RW_OFFSET=0 at an idle nucleus stays finite
MIN_RW_DAYS = 1.0 / SECONDS_PER_DAY
DEFAULT_CPUTIME = 300.0  # reference §2.1: a task without cpuTime counts 300 HS06 s per event
MILLI_UNIT_PREFIX = "mHS06"  # cpuTime in mHS06s per event is divided by 1000 (reference §2.1)
BARE_MODES = ("only", "allow")  # catchall bareNucleus=only|allow
# seed 003: free space "associated to the output endpoint type"; production output goes to DATADISK
OUTPUT_ENDPOINT_TYPE = "DATADISK"
RW_UNIT = "HS06 day"
JOB_REASON_LIMIT = 6  # queue names listed per filter in a -job sentence


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
    job_queue = np.isin(qa["type"], ("production", "unified")) & ~qa.name_has_test
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


# --- filters, in the seed's order ----------------------------------------------------------------


def f_status(ctx: NucleusContext) -> Verdict:
    """Nuclei must be in the ACTIVE status."""
    state = ctx.na.state
    return Verdict(state == ACTIVE, "-status", lambda idx: [f"status={state[i]} is not {ACTIVE}" for i in idx])


def f_transfer_backlog(ctx: NucleusContext) -> Verdict | None:
    """Skip nuclei with long transfer backlogs (> NQUEUED_NUC_CAP files queued) unless the task's t1Weight < 0."""
    t1 = ctx.task.get("t1weight")
    if t1 is not None and t1 < 0:
        return None
    cap = ctx.config["NQUEUED_NUC_CAP"]
    q = ctx.na.backlog
    return Verdict(
        q <= cap,
        "-transfer_backlog",
        lambda idx: [
            f"long transfer backlog: {fmt(q[i])} files queued to the nucleus > NQUEUED_NUC_CAP={cap}" for i in idx
        ],
        temporary=True,
    )


def f_match(ctx: NucleusContext) -> Verdict:
    """Nuclei must have associated storages (an output endpoint of type DATADISK)."""
    return Verdict(
        ctx.na.endpoint != "", "-match", f"no {OUTPUT_ENDPOINT_TYPE} endpoint is associated with the nucleus"
    )


def f_space(ctx: NucleusContext) -> Verdict:
    """spaceFree + spaceExpired − normalizedExpOutSize × RW must exceed DISK_THRESHOLD(_<gshare>)."""
    na = ctx.na
    demand = projected_output_gb(ctx.rw_days, ctx.config)
    left = na.space_free + na.space_expired - demand
    key, thr_tb = disk_threshold(ctx.config, ctx.task.get("gshare"))
    thr = thr_tb * GB_PER_TB
    ok = np.nan_to_num(left, nan=-np.inf) > thr
    rw = ctx.rw_days
    return Verdict(
        ok,
        "-space",
        lambda idx: [
            f"disk shortage at {na.endpoint[i]}: free {fmt(na.space_free[i])} GB + expired {fmt(na.space_expired[i])} GB"
            f" − projected output {fmt(demand[i])} GB (RW={fmt(rw[i])} {RW_UNIT}) = {fmt(left[i] / GB_PER_TB)} TB"
            f" <= {key}={fmt(thr_tb)} TB"
            for i in idx
        ],
    )


def _locality_off_reason(ctx: NucleusContext) -> str | None:
    """Why the data locality check may be dropped when no nucleus passes it (None: it may not)."""
    cfg, t = ctx.config, ctx.task
    io = t.get("iointensity")
    io_v = 0.0 if io is None else float(io)
    total = ctx.inputs.total_gb
    max_prio = cfg["MAX_TASK_PRIO_WITH_LOCAL_DATA"]
    prio = int(t.get("taskpriority") or 0)
    reasons = []
    if io_v <= cfg["MIN_IO_INTENSITY_WITH_LOCAL_DATA"] and total <= cfg["MIN_INPUT_SIZE_WITH_LOCAL_DATA"]:
        reasons.append(
            f"ioIntensity={'unset' if io is None else fmt(io_v)} <= MIN_IO_INTENSITY_WITH_LOCAL_DATA="
            f"{cfg['MIN_IO_INTENSITY_WITH_LOCAL_DATA']} and total input {fmt(total)} GB <= "
            f"MIN_INPUT_SIZE_WITH_LOCAL_DATA={cfg['MIN_INPUT_SIZE_WITH_LOCAL_DATA']} GB"
        )
    if prio >= max_prio:
        reasons.append(f"taskPriority={prio} >= MAX_TASK_PRIO_WITH_LOCAL_DATA={max_prio}")
    return " or ".join(reasons) if reasons else None


def locality_verdict(ctx: NucleusContext) -> tuple[np.ndarray, np.ndarray]:
    """Per nucleus: does it pass the data locality rules, and which code fails it ('' when it passes)."""
    cfg, inp = ctx.config, ctx.inputs
    size_frac = cfg["INPUT_SIZE_FRACTION"] / 100.0
    num_frac = cfg["INPUT_NUM_FRACTION"] / 100.0
    prestaged = bool(ctx.task.get("inputprestaging")) & ((inp.local_files > 0) | (inp.local_gb > 0))
    codes = np.full(ctx.n, "", dtype=object)
    if inp.total_gb > cfg["INPUT_SIZE_THRESHOLD"]:
        codes = np.where(inp.local_gb / inp.total_gb > size_frac, codes, "-insize")
    if inp.total_files > cfg["INPUT_NUM_THRESHOLD"]:
        short = ~(inp.local_files / inp.total_files > num_frac)
        codes = np.where((codes == "") & short, "-innum", codes)
    codes = np.where(prestaged, "", codes)
    return codes == "", codes


def f_data_locality(ctx: NucleusContext) -> Verdict:
    """Data locality: enough of the input size and files at the nucleus; the whole check may be dropped."""
    passed, codes = locality_verdict(ctx)
    inp, cfg = ctx.inputs, ctx.config
    info: dict[str, Any] = {
        "checked": True,
        "disabled": False,
        "considered": inp.considered,
        "total_gb": inp.total_gb,
        "total_files": inp.total_files,
        "inputprestaging": bool(ctx.task.get("inputprestaging")),
    }
    ctx.locality = info
    if not (passed & ctx.alive).any():
        off = _locality_off_reason(ctx)
        if off is not None:
            info.update(disabled=True, reason=f"no nucleus passed the data locality check and {off}")
            return Verdict(np.ones(ctx.n, dtype=bool), "", "")
        info["reason"] = "no nucleus passed the data locality check and it may not be disabled"
    size_thr, num_thr = cfg["INPUT_SIZE_THRESHOLD"], cfg["INPUT_NUM_THRESHOLD"]
    size_frac, num_frac = cfg["INPUT_SIZE_FRACTION"], cfg["INPUT_NUM_FRACTION"]

    def reasons(idx: np.ndarray) -> list[str]:
        out = []
        for i in idx:
            if codes[i] == "-insize":
                out.append(
                    f"insufficient input size: {fmt(inp.local_gb[i])} GB of {fmt(inp.total_gb)} GB at the nucleus, "
                    f"fraction <= INPUT_SIZE_FRACTION={size_frac}% (total > INPUT_SIZE_THRESHOLD={size_thr} GB)"
                )
            else:
                out.append(
                    f"short number of input files: {fmt(inp.local_files[i])} of {fmt(inp.total_files)} at the "
                    f"nucleus, fraction <= INPUT_NUM_FRACTION={num_frac}% (total > INPUT_NUM_THRESHOLD={num_thr})"
                )
        return out

    return Verdict(passed, codes, reasons)


@dataclass
class JobCheck:
    """The production filters run in hint mode over the nuclei's own queues: survivors and who removed the rest."""

    alive: np.ndarray  # per queue
    removed_by: np.ndarray  # per queue: index into ``verdicts`` of the filter that removed it, -1 if none
    verdicts: list[tuple[Filter, Verdict]]

    def skips(self, queues: np.ndarray, names: np.ndarray) -> list[Skip]:
        """The skips of QUEUES (indices), in filter order, as ``apply_filters`` would have recorded them."""
        queues = np.asarray(queues, dtype=np.int64)
        by = self.removed_by[queues]
        queues, by = queues[by >= 0], by[by >= 0]
        order = np.lexsort((queues, by))
        queues, by = queues[order], by[order]
        out: list[Skip] = []
        starts = np.flatnonzero(np.r_[True, by[1:] != by[:-1]]).tolist() if len(by) else []
        for a, b in zip(starts, [*starts[1:], len(by)][: len(starts)], strict=True):
            # the queues one filter removed: their codes and sentences are built together
            f, v = self.verdicts[int(by[a])]
            rows = queues[a:b]
            temporary = v.temporary or f.temporary
            out.extend(
                Skip(str(n), c, t, f.name, temporary)
                for n, c, t in zip(names[rows].tolist(), v.codes(rows), v.texts(rows), strict=True)
            )
        return out


def run_job_filters(pctx: ProdContext, qmask: np.ndarray) -> JobCheck:
    """Run the production job filters over the queues in QMASK, keeping masks only (sentences are built on demand).

    Usage: ``run_job_filters(production_queues.make_context(task, cfg, cache, hint_mode=True), mask).alive``
    """
    alive = qmask.copy()
    removed_by = np.full(len(qmask), -1, dtype=np.int64)
    verdicts: list[tuple[Filter, Verdict]] = []
    jedi = nucleus_panda.on(pctx)
    for f in production_queues.PANDA_HINT_FILTERS if jedi else production_queues.FILTERS:
        if not alive.any():
            break
        pctx.alive = alive
        v = f.run(pctx)
        if v is None:
            continue
        removed = alive & ~v.passed
        removed_by[removed] = len(verdicts)
        verdicts.append((f, v))
        alive &= ~removed
    return JobCheck(alive, removed_by, verdicts)


def f_job(ctx: NucleusContext) -> Verdict:
    """The nucleus' own queues must be able to run the task's jobs (production job filters in hint mode)."""
    na = ctx.na
    own = na.job_queue & (na.queue_nucleus >= 0)
    qmask = own.copy()
    qmask[qmask] = ctx.alive[na.queue_nucleus[qmask]]
    pctx = production_queues.make_context(ctx.task, ctx.config, ctx.cache, hint_mode=True)
    check = run_job_filters(pctx, qmask)
    ok = np.bincount(na.queue_nucleus[check.alive], minlength=ctx.n) > 0
    nqueues = np.bincount(na.queue_nucleus[own], minlength=ctx.n)

    # which filters killed each failing nucleus' queues: part of the decision, not only of its sentence
    failing = np.flatnonzero(~ok & ctx.alive)
    queue_skips = {int(i): check.skips(np.flatnonzero(qmask & (na.queue_nucleus == i)), pctx.qa.name) for i in failing}
    for i, skips in queue_skips.items():
        ctx.job_check[str(na.name[i])] = [s.to_dict("queue") for s in skips]

    def reasons(idx: np.ndarray) -> list[str]:
        out = []
        for i in idx:
            skips = queue_skips[int(i)]
            if nqueues[i] == 0:
                out.append("missing ability to run jobs: the nucleus has no production queue")
                continue
            groups: dict[tuple[str, str], list[str]] = {}
            for s in skips:
                groups.setdefault((s.stage, s.criteria), []).append(s.candidate)
            parts = []
            for (stage, code), queues in groups.items():
                shown = ", ".join(queues[:JOB_REASON_LIMIT]) + (" …" if len(queues) > JOB_REASON_LIMIT else "")
                parts.append(f"{stage} {code} x{len(queues)}: {shown}")
            plural = "queue was" if nqueues[i] == 1 else f"{nqueues[i]} queues were"
            out.append(f"missing ability to run jobs: its {plural} skipped ({'; '.join(parts)})")
        return out

    return Verdict(ok, "-job", reasons)


def fullchain_mode(task: dict[str, Any], parent: dict[str, Any]) -> str:
    """The task's effective fullChain: capable counts only when the parent ran on a bare nucleus (seed)."""
    mode = str(task.get("fullchain") or "")
    if mode == "capable" and parent.get("bare") not in BARE_MODES:
        return ""
    return mode


def f_full_chain(ctx: NucleusContext) -> Verdict:
    """Full-chain rules: only-nuclei take only full-chain tasks; only/require tasks need bare nuclei; follow the parent."""
    mode = fullchain_mode(ctx.task, ctx.parent)
    bare = ctx.na.bare
    codes_ok = np.ones(ctx.n, dtype=bool)
    texts = np.full(ctx.n, "", dtype=object)
    if mode == "":
        bad = bare == "only"
        texts[bad] = "bareNucleus=only accepts only full-chain tasks"
    elif mode == "only":
        bad = bare != "only"
        texts[bad] = "fullChain=only needs a nucleus with bareNucleus=only"
    elif mode == "require":
        bad = ~np.isin(bare, BARE_MODES)
        texts[bad] = "fullChain=require needs a nucleus with bareNucleus=only or allow"
    else:
        bad = np.zeros(ctx.n, dtype=bool)
    codes_ok &= ~bad
    pnuc = ctx.parent.get("nucleus")
    if mode and ctx.parent.get("bare") in BARE_MODES:
        elsewhere = (ctx.na.name != pnuc) & codes_ok
        texts[elsewhere] = f"the parent task {ctx.parent['jeditaskid']} of the full-chain ran on bare nucleus={pnuc}"
        codes_ok &= ~elsewhere
    return Verdict(codes_ok, "-full_chain", lambda idx: list(texts[idx]))


FILTERS: tuple[Filter, ...] = (
    Filter("status check", ("-status",), "nuclei must be in the ACTIVE status", f_status),
    Filter("transfer backlog check", ("-transfer_backlog",),
           "skip nuclei with more than NQUEUED_NUC_CAP files queued to them unless t1Weight < 0",
           f_transfer_backlog, temporary=True),
    Filter("storage endpoint check", ("-match",), "nuclei must have associated storages", f_match),
    Filter("space check", ("-space",),
           "spaceFree + spaceExpired - normalizedExpOutSize x RW must exceed DISK_THRESHOLD", f_space),
    Filter("data locality check", ("-insize", "-innum"),
           "enough of the input size and files must be at the nucleus; the check may be dropped", f_data_locality),
    Filter("job check", ("-job",), "the nucleus' own queues must be able to run the task's jobs", f_job),
    Filter("full-chain check", ("-full_chain",), "full-chain tasks follow bare nuclei and their parent", f_full_chain),
)  # fmt: skip
"""Seed 000 step 2 in order, then the job check (seed 003) and the full-chain rules."""
PANDA_FILTERS: tuple[Filter, ...] = (
    FILTERS[0], FILTERS[1],
    Filter("storage endpoint check", ("-match", "-source_blacklist", "-destination_blacklist", "-space"),
           "JEDI's endpoint check: WAN blacklists and space with the full RW", nucleus_panda.f_endpoint),
    FILTERS[5], FILTERS[4], FILTERS[6],
)  # fmt: skip
"""PanDA 1.0.4's order (switch nucleus_as_jedi): status, backlog, endpoint, job, data, full chain."""


# --- weight ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NucleusWeights:
    """The factors of every nucleus' weight (arrays over nuclei); their product is the weight."""

    rw: np.ndarray  # 1 / max(rwOffset, RW)
    local: np.ndarray  # localInputSize / totalInputSize (IO-intensive tasks), else 1
    tape: np.ndarray  # tapeWeight
    space: np.ndarray  # (spaceFree + spaceExpired) / spaceTotal
    weight: np.ndarray
    io_intensive: bool


def weights(ctx: NucleusContext) -> NucleusWeights:
    """Seed 000 step 3: weight = [localInputSize/totalInputSize ×] tapeWeight × (free+expired) / (max(rwOffset, RW) × spaceTotal).

    Usage: ``weights(ctx).weight``
    """
    cfg, na, inp = ctx.config, ctx.na, ctx.inputs
    io = ctx.task.get("iointensity")
    io_intensive = io is not None and float(io) > cfg["MIN_IO_INTENSITY_WITH_LOCAL_DATA"]
    rw = 1.0 / np.maximum(max(float(cfg["RW_OFFSET"]), MIN_RW_DAYS), ctx.rw_days)
    use_data = not ctx.locality.get("disabled", False) and inp.total_gb > 0
    local = inp.local_gb / inp.total_gb if io_intensive and use_data else np.ones(ctx.n)
    # tape: part of the input the nucleus holds is there only on tape
    on_tape_only = inp.local_gb > inp.local_disk_gb
    tape = np.where(on_tape_only & use_data, float(cfg["TAPE_WEIGHT"]), 1.0)
    total = na.space_total
    free = na.space_free + na.space_expired
    space = np.divide(free, total, out=np.zeros(ctx.n), where=np.nan_to_num(total) > 0)
    return NucleusWeights(rw, local, tape, space, local * tape * space * rw, io_intensive)


# --- the broker ----------------------------------------------------------------------------------


def _parent_info(cache: GridCache, task: dict[str, Any], assigned: dict[int, str]) -> dict[str, Any]:
    pid = task.get("parent_tid")
    if pid is None or int(pid) == int(task["jeditaskid"]):
        return {}
    pid = int(pid)
    nucleus = assigned.get(pid)
    if nucleus is None:
        try:
            nucleus = views.task_row(cache, pid).get("nucleus")
        except KeyError:
            return {"jeditaskid": pid}
    return {"jeditaskid": pid, "nucleus": nucleus, "bare": bare_modes(cache).get(nucleus) or ""}


def bare_modes(cache: GridCache) -> dict[str, str]:
    """bareNucleus mode of every site ('' for none).

    Usage: ``bare_modes(cache)["CERN-PROD"]``
    """
    return placement.bare_modes(cache)[1]


def _reused(cache: GridCache, task: dict[str, Any], changed: dict[str, Any]) -> Decision:
    name = str(task["nucleus"])
    cand = Candidate(name, 1, 1.0, {}, {"probability": 1.0, "reused": True})
    unknown = "" if name in bare_modes(cache) else " (not a site of this snapshot)"
    return Decision(
        BROKER, int(task["jeditaskid"]), "ok", [cand], [], [FunnelStep("nucleus already set", 1, 1)],
        changed, label=LABEL,
        message=f"nucleus={name}{unknown} was already set for the task: re-used without brokerage",
        extra={"chosen": name, "data_locality": {"checked": False}},
    )  # fmt: skip


def _draw(rng: np.random.Generator, w: np.ndarray) -> int:
    """Index drawn proportionally to the weights W: t = U(0, Σw), the first candidate whose running sum exceeds t."""
    cum = np.cumsum(w)
    i = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
    positive = np.flatnonzero(w > 0)
    return min(i, int(positive[-1])) if len(positive) else min(i, len(w) - 1)


def _decide(ctx: NucleusContext, rng: np.random.Generator, changed: dict[str, Any]) -> tuple[Decision, int | None]:
    """Run the filters and the weighted draw for one task; return the decision and the chosen nucleus row."""
    na, cfg = ctx.na, ctx.config
    ctx.locality = {"checked": False}
    if (jedi := nucleus_panda.on(ctx)) and (why := nucleus_panda.wan_unreadable_input(ctx)):
        return Decision(BROKER, int(ctx.task["jeditaskid"]), "pending", [], [], [], dict(changed), label=LABEL,
                        message=why, extra={"chosen": None}), None  # fmt: skip
    # each filter sees which nuclei are still alive (the locality and job checks need it)
    alive, skips, funnel = apply_filters(na.name, np.ones(na.n, dtype=bool), PANDA_FILTERS if jedi else FILTERS, ctx)
    extra: dict[str, Any] = {"data_locality": ctx.locality, "rw_unit": RW_UNIT}
    if ctx.job_check:
        extra["job_check"] = ctx.job_check
    tid = int(ctx.task["jeditaskid"])
    idx = np.flatnonzero(alive)
    if len(idx) == 0:
        extra["chosen"] = None
        return Decision(
            BROKER, tid, "pending", [], skips, funnel, dict(changed), label=LABEL,
            pending_minutes=int(cfg["NUCLEUS_PENDING_MINUTES"]), message="no candidates", extra=extra,
        ), None  # fmt: skip
    w = weights(ctx)
    if jedi:
        jw, f = nucleus_panda.weights(ctx)
        w = NucleusWeights(f["rw"], f["local"], f["tape"], f["space"], jw, w.io_intensive)
    order = idx[np.lexsort((na.name[idx].astype(str), -w.weight[idx]))]
    total = float(w.weight[order].sum())
    # all weights 0: every candidate is equally likely
    drawn = w.weight[order] if total > 0 else np.ones(len(order))
    prob = drawn / drawn.sum()
    pick = int(order[_draw(rng, drawn)])
    inp = ctx.inputs
    candidates = []
    for rank, (i, p) in enumerate(zip(order, prob, strict=True), start=1):
        factors = {
            "rw": float(w.rw[i]),
            "local": float(w.local[i]),
            "tape": float(w.tape[i]),
            "space": float(w.space[i]),
        }
        details = {
            "probability": float(p),
            "rw_hs06_days": float(ctx.rw_days[i]),
            "localInputGB": float(inp.local_gb[i]),
            "localDiskInputGB": float(inp.local_disk_gb[i]),
            "localInputFiles": float(inp.local_files[i]),
            "totalInputGB": inp.total_gb,
            "endpoint": str(na.endpoint[i]),
            "spaceFreeGB": float(na.space_free[i]),
            "spaceExpiredGB": float(na.space_expired[i]),
            "spaceTotalGB": float(na.space_total[i]),
            "projectedOutputGB": float(projected_output_gb(ctx.rw_days[i], cfg)),
            "bareNucleus": str(na.bare[i]),
        }
        candidates.append(Candidate(str(na.name[i]), rank, float(w.weight[i]), factors, details))
    extra["chosen"] = str(na.name[pick])
    extra["io_intensive"] = w.io_intensive
    msg = "" if total > 0 else "every candidate has weight 0: drawn uniformly"
    return Decision(
        BROKER, tid, "ok", candidates, skips, funnel, dict(changed), label=LABEL, message=msg, extra=extra
    ), pick


@gc_paused()
def broker_many(
    snap: GridSnapshot,
    task_ids: list[int],
    config: Config | None = None,
    seed: int = 0,
    *,
    cache: GridCache | None = None,
) -> list[Decision]:
    """Assign nuclei to many tasks as one JEDI cycle: highest currentPriority first, RW updated after each choice.

    RW per (priority, nucleus) is computed once for the batch; each assignment adds the task's own RW to its
    nucleus for every priority at or below the task's. One ``numpy.random.Generator(seed)`` draws for the tasks
    in processing order. Decisions are returned in the order of TASK_IDS.
    Usage: ``[d.extra["chosen"] for d in broker_many(snap, [1, 2, 3], Config(), cache=cache)]``
    """
    config = config or Config()
    cache = cache_for(snap, cache)
    na = nucleus_arrays(cache)
    rng = np.random.default_rng(seed)
    tasks = {int(t): views.task_row(cache, int(t)) for t in dict.fromkeys(int(t) for t in task_ids)}
    prio = {t: float(row.get("currentpriority") or 0) for t, row in tasks.items()}
    table = RWTable(cache, na, np.array(list(prio.values()) or [0.0]))
    rw_of = task_rw_seconds(cache)
    changed = config.changed()
    assigned: dict[int, str] = {}
    out: dict[int, Decision] = {}
    for tid in sorted(tasks, key=lambda t: (-prio[t], t)):
        task = tasks[tid]
        if task.get("nucleus"):
            out[tid] = _reused(cache, task, dict(changed))
            assigned[tid] = str(task["nucleus"])
            continue
        ctx = NucleusContext(
            cache=cache,
            task=task,
            config=config,
            na=na,
            rw_seconds=table.rw(prio[tid]),
            inputs=nucleus_input(cache, task, na),
            parent=_parent_info(cache, task, assigned),
        )
        decision, pick = _decide(ctx, rng, changed)
        out[tid] = decision
        if pick is not None:
            table.assign(prio[tid], pick, float(rw_of.get(tid, 0.0)))
            assigned[tid] = str(na.name[pick])
    return [out[int(t)] for t in task_ids]


def broker(
    snap: GridSnapshot, jeditaskid: int, config: Config | None = None, seed: int = 0, *, cache: GridCache | None = None
) -> Decision:
    """Choose a nucleus for one production task and explain every nucleus' fate.

    Usage: ``broker(snap, 4242, Config(), seed=0, cache=cache).extra["chosen"]``
    """
    return broker_many(snap, [jeditaskid], config, seed, cache=cache)[0]
