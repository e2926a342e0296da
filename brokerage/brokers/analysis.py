"""ATLAS analysis job brokerage: throttles, candidate filters, the Analysis Stabilizer and the basic weights."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from brokerage import grid
from brokerage.brokers import production
from brokerage.brokers.stabilizer import StabilizerTable, stabilizer
from brokerage.explain import Candidate, Decision, FunnelStep, LazyTexts, SkipList
from brokerage.gdpconfig import Config, ConfigError
from brokerage.pipeline import Filter, Verdict, apply_filters, fmt, fmt_many
from brokerage.pseudoqueues import task_resource_type
from brokerage.snapshot import GridSnapshot

BROKER = "analysis"
ANALYSIS_TYPES = ("analysis", "unified")
USER_ANALYSIS = "User Analysis"  # seed: "Currently this part of throttle is only for User Analysis share"
EXPRESS_ANALYSIS = "Express Analysis"  # seed: W_s table "For jobs in User Analysis and Express Analysis"
SITE_CLASS_SHARES = (USER_ANALYSIS, EXPRESS_ANALYSIS)
TASK_CLASS_NAMES = {2: "S", 1: "A", 0: "B", -1: "C"}

# Statuses of a user's jobs that count as queued for the caps (throttled jobs are waiting too).
CAP_QUEUED_STATUSES = ("defined", "assigned", "activated", "starting", "throttled")
CAP_QUEUED_FACTOR = 2.0  # seed: "the number of queued jobs is larger than 2 × CAP_RUNNING_USER_JOBS"
CLASS_A_TARGET_PERCENT = 100.0  # seed: "> max(USER_USAGE_THRESHOLD_A/(# of user's running slots in hi-sites), 1)*100%"
QUEUE_CAP_FACTOR = 2.0  # seed: "Skip queues if defined+activated+assigned+starting > 2 × max(20, running)"
BAD_JOBS_FINISHED_FACTOR = (
    2.0  # seed: "(nFailed + nClosed) must be less than max(2 × nFinished, MIN_BAD_JOBS_TO_SKIP_PQ)"
)
# "Skip VP queues if ... those queues are overloaded": the seed does not define overloaded; JEDI's rule and defaults.
W_Q_FLOOR = 0.001  # seed (W_s): "some small positive numbers ... to avoid dead zero"; the same guard for W_q

QUEUED = ("defined", "assigned", "activated", "starting")


# --- task-level throttles -----------------------------------------------------------------------


def _cap_totals(snap: GridSnapshot) -> dict[str, pd.DataFrame]:
    def build() -> dict[str, pd.DataFrame]:
        u = snap.user_job_counts
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

    return snap.cached("analysis:cap_totals", build)


def _users(snap: GridSnapshot) -> dict[str, tuple[float, bool]]:
    def build() -> dict[str, tuple[float, bool]]:
        u = snap.users
        return {
            str(name): (float(slots), bool(quota))
            for name, slots, quota in zip(
                u["produsername"], u["running_slots_hi"], u["disk_quota_exceeded"], strict=True
            )
        }

    return snap.cached("analysis:users", build)


def _share_usage(snap: GridSnapshot) -> dict[str, float]:
    g = snap.gshares
    return snap.cached(
        "analysis:gshare_usage", lambda: dict(zip(g["gshare"], g["usage_perc"].astype(float), strict=True))
    )


def throttle(snap: GridSnapshot, task: dict[str, Any], config: Config) -> dict[str, Any] | None:
    """Step 1: the first task-level throttle that holds, as {rule, numbers, message}, or None.

    Usage: ``throttle(snap, grid.task_row(snap, 7), Config())``
    """
    user = str(task.get("username") or "")
    wg = str(task.get("workinggroup") or "")
    scope, name, kind = ("group", wg, "GROUP") if wg else ("user", user, "USER")
    totals = _cap_totals(snap)[scope]
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

    slots, quota = _users(snap).get(user, (0.0, False))
    if quota:
        return {
            "rule": "global disk quota",
            "numbers": {"user": user, "disk_quota_exceeded": True},
            "message": f"the global disk quota of user {user} is exceeded",
        }

    tclass = task.get("task_class")
    if task.get("gshare") != USER_ANALYSIS or tclass is None or int(tclass) not in (-1, 0, 1):
        return None
    usage = float(_share_usage(snap).get(USER_ANALYSIS, 0.0))
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


# --- context ------------------------------------------------------------------------------------


@dataclass
class AnalContext:
    """Everything the analysis filters of one task need, as arrays over all queues."""

    snap: GridSnapshot
    task: dict[str, Any]
    config: Config
    qa: grid.QueueArrays
    ep: grid.EndpointArrays
    counts: dict[str, np.ndarray]
    avail: dict[str, Any]
    stab: StabilizerTable
    history: dict[str, np.ndarray]
    prelim: np.ndarray
    preassigned: np.ndarray
    job_cores: np.ndarray
    use_locality: bool = True
    # production's endpoint check treats queues holding the input like the nucleus (no WAN needed)
    nucleus: str | None = None
    at_nucleus: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    derived: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of queues."""
        return self.qa.n

    def names(self, idx: np.ndarray) -> np.ndarray:
        """Queue names of rows IDX."""
        return self.qa.name[idx]


def split_list(text: str | None) -> list[str]:
    """Comma-separated task parameter -> stripped non-empty entries."""
    return [s.strip() for s in str(text or "").split(",") if s.strip()]


def match_queues(snap: GridSnapshot, patterns: list[str]) -> np.ndarray:
    """Queues whose name or ATLAS site matches any shell-style wildcard pattern (case-sensitive, whole name).

    Usage: ``match_queues(snap, ["ANALY_*"])``
    """
    qa = grid.queue_arrays(snap)
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

    return snap.cached("analysis:match:" + "\x1f".join(patterns), build)


def _task_job_arrays(snap: GridSnapshot) -> dict[str, Any]:
    def build() -> dict[str, Any]:
        qa = grid.queue_arrays(snap)
        t = snap.task_job_counts
        qi = t["panda_queue"].map(qa.index)
        return {
            "groups": t.groupby("jeditaskid").indices,
            "queue": qi.fillna(-1).astype(np.int64).to_numpy(),
            "status": t["jobstatus"].to_numpy(dtype=object),
            "njobs": t["njobs"].to_numpy(dtype=float),
            "time": t["modificationtime"].to_numpy(dtype="datetime64[ns]"),
        }

    return snap.cached("analysis:task_job_arrays", build)


def failure_history(snap: GridSnapshot, jeditaskid: int, hours: float) -> dict[str, np.ndarray]:
    """finished / failed / closed jobs of the task per queue, modified within HOURS before the snapshot."""
    n = grid.queue_arrays(snap).n
    arrays = _task_job_arrays(snap)
    out = {s: np.zeros(n) for s in ("finished", "failed", "closed")}
    idx = arrays["groups"].get(jeditaskid)
    if idx is None:
        return out
    start = (pd.Timestamp(snap.taken_at) - pd.Timedelta(hours=float(hours))).tz_convert(None).to_datetime64()
    idx = idx[(arrays["time"][idx] >= start) & (arrays["queue"][idx] >= 0)]
    qi, status, nj = arrays["queue"][idx], arrays["status"][idx], arrays["njobs"][idx]
    for s in out:
        m = status == s
        out[s] = np.bincount(qi[m], weights=nj[m], minlength=n)
    return out


def make_context(snap: GridSnapshot, task: dict[str, Any], config: Config) -> AnalContext:
    """Build the per-task arrays the analysis filters share.

    Usage: ``ctx = make_context(snap, grid.task_row(snap, 7), Config())``
    """
    qa = grid.pseudo_queue_arrays(snap, task_resource_type(task))
    tid = int(task["jeditaskid"])
    site_cc = qa["corecount"].astype(float)
    task_cc = int(task.get("corecount") or 0)
    job_cores = np.where(task_cc == 1, 1.0, np.where(site_cc > 0, site_cc, max(task_cc, 1)))
    gshare = str(task.get("gshare") or "")
    avail = grid.available_at_queues(snap, tid)
    has_input = avail["total_files"] > 0
    return AnalContext(
        snap=snap,
        task=task,
        config=config,
        qa=qa,
        ep=grid.endpoint_arrays(snap),
        counts=grid.job_counts(snap, gshare),
        avail=avail,
        stab=stabilizer(snap, config, str(task.get("username") or ""), gshare),
        history=failure_history(snap, tid, float(config["TW_DONE_JOB_STAT"])),
        prelim=np.zeros(qa.n, dtype=bool),
        preassigned=match_queues(snap, split_list(task.get("site")))
        | match_queues(snap, split_list(task.get("includedsite"))),
        job_cores=job_cores,
        nucleus="queues holding the input" if has_input else None,
        at_nucleus=avail["missing_files"] <= 0,
    )


# --- step 2: preliminary candidates -------------------------------------------------------------


def initial_candidates(ctx: AnalContext) -> np.ndarray:
    """All queues with type analysis or unified, plus queues pre-assigned through the task's site."""
    return _analysis_type(ctx.snap) | match_queues(ctx.snap, split_list(ctx.task.get("site")))


def _analysis_type(snap: GridSnapshot) -> np.ndarray:
    """Queues of type analysis or unified (built once per snapshot, read-only)."""

    def build() -> np.ndarray:
        out = np.isin(grid.queue_arrays(snap)["type"], ANALYSIS_TYPES)
        out.flags.writeable = False
        return out

    return snap.cached("analysis:type", build)


def f_excluded(ctx: AnalContext) -> Verdict | None:
    """Exclude queues if excludedSite is specified and the queues are included in the list."""
    pats = split_list(ctx.task.get("excludedsite"))
    if not pats:
        return None
    return Verdict(~match_queues(ctx.snap, pats), "-excluded", f"matches excludedSite={','.join(pats)}")


def f_included(ctx: AnalContext) -> Verdict | None:
    """Exclude queues if includedSite is specified and the queues are not included in the list."""
    pats = split_list(ctx.task.get("includedsite"))
    if not pats:
        return None
    return Verdict(match_queues(ctx.snap, pats), "-notincluded", f"not in includedSite={','.join(pats)}")


def f_preassigned(ctx: AnalContext) -> Verdict | None:
    """A pre-assigned site restricts the candidates to the queues it names."""
    pats = split_list(ctx.task.get("site"))
    if not pats:
        return None
    return Verdict(match_queues(ctx.snap, pats), "-nonpreassigned", f"not the pre-assigned site={','.join(pats)}")


PRELIMINARY: list[Filter] = [
    Filter("excludedSite", f_excluded),
    Filter("includedSite", f_included),
    Filter("pre-assigned site", f_preassigned),
]


# --- step 3: filters for persistent issues ------------------------------------------------------


def f_status(ctx: AnalContext) -> Verdict | None:
    """The queue status must be online unless the queues are pre-assigned."""
    status = ctx.qa["status"]
    return Verdict((status == "online") | ctx.preassigned, "-status", lambda idx: [f"status={s}" for s in status[idx]])


def locality_suppressed(task: dict[str, Any], config: Config) -> str:
    """Why the input data locality check is off for the task ('' when it applies)."""
    prio = int(task.get("taskpriority") or 0)
    if prio >= int(config["ANAL_LOCALITY_PRIORITY"]):
        return f"taskPriority={prio} >= ANAL_LOCALITY_PRIORITY={config['ANAL_LOCALITY_PRIORITY']}"
    cutoff = config["IO_INTENSITY_CUTOFF_USER"]
    io = task.get("iointensity")
    if cutoff is not None and io is not None and float(io) <= float(cutoff):
        return f"ioIntensity={fmt(float(io))} <= IO_INTENSITY_CUTOFF_USER={cutoff}"
    return ""


def f_locality(ctx: AnalContext) -> Verdict | None:
    """Skip queues that do not have the input data locally (all files; any part when no queue has all)."""
    if not ctx.use_locality or ctx.avail["total_files"] <= 0 or locality_suppressed(ctx.task, ctx.config):
        return None
    missing = ctx.avail["missing_files"]
    have = ctx.avail["avail_files"]
    total = ctx.avail["total_files"]
    complete = missing <= 0
    # input spread over several storages with no complete copy: the queues holding part of it
    union = not bool((complete & ctx.prelim).any())
    ctx.derived["locality_union"] = union
    ok = have > 0 if union else complete
    of_total = f"of {fmt(total)} files available"
    return Verdict(
        ok, "-input_data", lambda idx: [f"input data not local: {h} {of_total}" for h in fmt_many(have[idx])]
    )


def f_diskio(ctx: AnalContext) -> Verdict | None:
    """MAX_DISKIO_DEFAULT / maxdiskio limit (production's check; a persistent issue for analysis)."""
    v = production.f_diskio(ctx)  # type: ignore[arg-type]
    return None if v is None else replace(v, temporary=False)


def f_cpucore(ctx: AnalContext) -> Verdict | None:
    """CPU core count matching (production's check; analysis has no priority/scout rule for coreCount 0)."""
    return production.core_count_check(ctx.qa, ctx.task, any_core_needs_multi=False)


def vp_overloaded(ctx: AnalContext) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Per queue: overloaded mask, nQueue, nRunning (task gshare) and the grid's queued/running ratio."""
    c = ctx.counts
    nq = c["defined"] + c["assigned"] + c["activated"] + c["starting"]
    nr = c["running"]
    anal = _analysis_type(ctx.snap)
    tq, tr = float(nq[anal].sum()), float(nr[anal].sum())
    grand = tq / tr if tr > 0 else np.inf
    ratio = np.divide(nq, nr, out=np.full(ctx.n, np.inf), where=nr > 0)
    min_queue, offset = ctx.config["OVERLOAD_MIN_QUEUE"], ctx.config["OVERLOAD_RATIO_OFFSET"]
    over = (nq > min_queue) & ((nr == 0) | (ratio > grand * offset))
    return over, nq, nr, grand


def f_vp(ctx: AnalContext) -> Verdict | None:
    """Skip VP queues if the task specifies avoidVP or those queues are overloaded."""
    vp = ctx.qa["is_vp"].astype(bool)
    if not vp.any():
        return None
    if ctx.task.get("avoidvp"):
        return Verdict(~vp, "-avoid_vp", "VP queue and the task sets avoidVP")
    over, nq, nr, grand = vp_overloaded(ctx)
    min_queue, offset = ctx.config["OVERLOAD_MIN_QUEUE"], ctx.config["OVERLOAD_RATIO_OFFSET"]
    bad = vp & over
    return Verdict(
        ~bad,
        "-overloaded_vp",
        lambda idx: [
            f"overloaded VP queue: nQueue={fmt(nq[i])} > {min_queue} and "
            + ("nRunning=0" if nr[i] == 0 else f"nQueue/nRunning={fmt(nq[i] / nr[i])} > {fmt(grand)}x{offset}")
            for i in idx
        ],
    )


def f_software(ctx: AnalContext) -> Verdict | None:
    """Availability of ATLAS release/cache: ANY skips the check, AUTO uses the queue's published software."""
    return production.software_check(ctx.snap, ctx.task)


def f_memory(ctx: AnalContext) -> Verdict | None:
    """(baseRamCount + ramCount × coreCount) × 0.9 for MBPerCore, (baseRamCount + ramCount) × 0.9 for MB, in [minrss, maxrss]."""
    return production.f_memory(ctx)  # type: ignore[arg-type]


def expected_scratch_mb(ctx: AnalContext) -> np.ndarray:
    """(0 or inputDiskCount) + outDiskCount × inputDiskCount + workDiskCount, in MB (0 for direct-access queues)."""
    t = ctx.task
    input_mb = float(t.get("chunk_input_mb") or 0)
    out = float(t.get("outdiskcount") or 0)
    direct = ctx.qa["direct_access_lan"].astype(bool)
    return np.where(direct, 0.0, input_mb) + out * input_mb + float(t.get("workdiskcount") or 0)


def f_scratch(ctx: AnalContext) -> Verdict | None:
    """maxwdir divided by the queue's coreCount must be larger than the expected disk usage."""
    need = expected_scratch_mb(ctx)
    ctx.derived["scratch"] = need
    maxwdir = ctx.qa["maxwdir"].astype(float)
    per_core = maxwdir / np.maximum(ctx.qa["corecount"].astype(float), 1.0)
    ok = (maxwdir <= 0) | (per_core > need)
    return Verdict(
        ok,
        "-disk",
        lambda idx: [
            f"small scratch disk: maxwdir/coreCount={fmt(per_core[i])} MB <= expected {fmt(need[i])} MB" for i in idx
        ],
    )


def f_storage(ctx: AnalContext) -> Verdict | None:
    """DISK size check: free space in the local storage has to be over STORAGE_MIN_FREE_SIZE (200 GB)."""
    v = production.f_storage(ctx)  # type: ignore[arg-type]
    return None if v is None else replace(v, temporary=False)


def f_blacklist(ctx: AnalContext) -> Verdict | None:
    """Skip blacklisted storage endpoints (queues without the whole input also need WAN transfers)."""
    return production.f_blacklist(ctx)  # type: ignore[arg-type]


def f_walltime(ctx: AnalContext) -> Verdict | None:
    """The production walltime estimate must be between mintime and maxtime at the queue."""
    return production.f_walltime(ctx)  # type: ignore[arg-type]


def f_nopilot(ctx: AnalContext) -> Verdict | None:
    """Skip queues without pilots for the last NO_PILOT_HOURS (3 h)."""
    hours = float(ctx.config["NO_PILOT_HOURS"])
    return Verdict(~grid.without_pilots(ctx.qa, hours), "-nopilot", grid.no_pilot_reasons(ctx.qa, hours))


# --- step 3: filters for temporary issues -------------------------------------------------------


def f_failed_closed(ctx: AnalContext) -> Verdict | None:
    """(nFailed + nClosed) of the task in the last TW_DONE_JOB_STAT hours must be < max(2 × nFinished, MIN_BAD_JOBS_TO_SKIP_PQ)."""
    h = ctx.history
    bad = h["failed"] + h["closed"]
    limit = np.maximum(BAD_JOBS_FINISHED_FACTOR * h["finished"], float(ctx.config["MIN_BAD_JOBS_TO_SKIP_PQ"]))
    hours = ctx.config["TW_DONE_JOB_STAT"]
    return Verdict(
        bad < limit,
        "-badsite",
        lambda idx: [
            f"too many failed or closed jobs for last {hours}h: nFailed={fmt(h['failed'][i])} + "
            f"nClosed={fmt(h['closed'][i])} >= max(2 x nFinished={fmt(h['finished'][i])}, "
            f"MIN_BAD_JOBS_TO_SKIP_PQ={ctx.config['MIN_BAD_JOBS_TO_SKIP_PQ']})"
            for i in idx
        ],
        temporary=True,
    )


def f_queue_cap(ctx: AnalContext) -> Verdict | None:
    """Skip queues if defined+activated+assigned+starting > 2 × max(ANAL_QUEUE_FLOOR, running)."""
    c = ctx.counts
    q = c["defined"] + c["activated"] + c["assigned"] + c["starting"]
    floor = float(ctx.config["ANAL_QUEUE_FLOOR"])
    cap = QUEUE_CAP_FACTOR * np.maximum(floor, c["running"])
    return Verdict(
        q <= cap,
        "-overloaded",
        lambda idx: [
            f"defined+activated+assigned+starting={fmt(q[i])} > {fmt(QUEUE_CAP_FACTOR)} x max({fmt(floor)}, "
            f"running={fmt(c['running'][i])})"
            for i in idx
        ],
        temporary=True,
    )


def f_stabilizer(ctx: AnalContext) -> Verdict | None:
    """Analysis Stabilizer: skip PQs where the user already has more than max_q_len queued jobs."""
    s = ctx.stab
    return Verdict(
        ~s.throttled,
        "-tmp_user_problem",
        lambda idx: [
            f"long queue of the user: nQ_user={fmt(s.nQ_user[i])} > max_q_len={fmt(s.max_q_len[i])} "
            f"= {s.max_q_len_rule[i]} (nQ={fmt(s.nQ[i])}, nR={fmt(s.nR[i])}, trr={fmt(s.trr[i])}, "
            f"nQ_max={fmt(s.nQ_max[i])} = {s.nQ_max_rule[i]}, percentage={fmt(s.percentage[i])})"
            for i in idx
        ],
        temporary=True,
    )


PERSISTENT: list[Filter] = [
    Filter("status check", f_status),
    Filter("input data locality check", f_locality),
    Filter("diskIO check", f_diskio),
    Filter("core count check", f_cpucore),
    Filter("VP check", f_vp),
    Filter("release/cache check", f_software),
    Filter("memory check", f_memory),
    Filter("scratch disk check", f_scratch),
    Filter("storage space check", f_storage),
    Filter("endpoint blacklist check", f_blacklist),
    Filter("walltime check", f_walltime),
    Filter("pilot check", f_nopilot),
]
"""Filters for persistent issues, in the seed's order."""

TEMPORARY: list[Filter] = [
    Filter("failed/closed jobs check", f_failed_closed, temporary=True),
    Filter("queue length check", f_queue_cap, temporary=True),
    Filter("Analysis Stabilizer", f_stabilizer, temporary=True),
]
"""Filters for temporary issues, in the seed's order."""


# --- step 4: weights ----------------------------------------------------------------------------


@dataclass(frozen=True)
class AnalWeights:
    """Both basic weights and their terms, for the final candidates (arrays aligned with ``idx``)."""

    idx: np.ndarray
    nrunning: np.ndarray
    running_rule: np.ndarray
    original: np.ndarray
    w_s: np.ndarray
    w_q: np.ndarray
    w_q_rule: np.ndarray
    remaining: np.ndarray
    new: np.ndarray
    used: np.ndarray
    n_j: float


def site_class_weight(
    task_class: int | None, site_class: np.ndarray, n_j: float, eps1: float, eps2: float
) -> np.ndarray:
    """W_s of the seed's table: the task class's own site class gets N_j, the others epsilon_1 or epsilon_2.

    Unclassified tasks count as class A, unclassified sites as mid-sites.
    Usage: ``site_class_weight(-1, np.array([1.0, 0.0, -1.0]), 8, 0.05, 0.001)``
    """
    tc = 1 if task_class is None else int(task_class)
    # columns: hi-site, mid-site, lo-site
    if tc >= 1:
        row = (n_j, eps1, eps2)
    elif tc == 0:
        row = (eps2, n_j, eps1)
    else:
        row = (eps2, eps1, n_j)
    sc = np.where(np.isnan(site_class), 0.0, site_class)
    return np.where(sc >= 1, row[0], np.where(sc <= -1, row[2], row[1]))


def queue_length_weight(max_q_len: np.ndarray, nq_user: np.ndarray, n_j: float) -> tuple[np.ndarray, np.ndarray]:
    """W_q = (max_q_len − nQ_user − N_j/N_PQ) / (Σ (max_q_len − nQ_user) − N_j) over the candidate PQs.

    The user's room max_q_len − nQ_user is floored at 0; a non-positive numerator becomes W_Q_FLOOR; when the
    denominator is not positive the room shares rem/Σrem are used, and 1/N_PQ when no PQ has room.
    Usage: ``queue_length_weight(np.array([10.0, 30.0]), np.array([0.0, 10.0]), 4)``
    """
    n_pq = len(max_q_len)
    rem = np.maximum(max_q_len - nq_user, 0.0)
    total = float(rem.sum())
    den = total - n_j
    if n_pq == 0:
        return np.zeros(0), np.zeros(0, dtype=object)
    if den > 0:
        return np.maximum(rem - n_j / n_pq, W_Q_FLOOR) / den, np.full(n_pq, "seed", dtype=object)
    if total > 0:
        return np.maximum(rem, W_Q_FLOOR) / total, np.full(n_pq, "rem/sum(rem)", dtype=object)
    return np.full(n_pq, 1.0 / n_pq), np.full(n_pq, "1/N_PQ", dtype=object)


def weights(ctx: AnalContext, idx: np.ndarray) -> AnalWeights:
    """Original and new basic weights of the candidate queues IDX; ANAL_BASIC_WEIGHT picks the ranking one."""
    c, cfg, qa = ctx.counts, ctx.config, ctx.qa
    eps1, eps2 = float(cfg["SITE_CLASS_EPSILON_1"]), float(cfg["SITE_CLASS_EPSILON_2"])
    if not eps1 > eps2:
        raise ConfigError("SITE_CLASS_EPSILON_1", f"{eps1} must exceed SITE_CLASS_EPSILON_2={eps2} (seed: ε1 > ε2)")
    nrun, rule = production.effective_running(
        c["running"][idx],
        qa["nbatchjob"].astype(float)[idx],
        qa["numslots"].astype(float)[idx],
        c["starting"][idx],
        float(cfg["BOOTSTRAP_NBATCHJOB_CAP"]),
    )
    queued = c["activated"][idx] + c["assigned"][idx] + c["starting"][idx] + c["defined"][idx]
    original = (nrun + 1.0) / (queued + 1.0)
    n_j = float(ctx.task.get("chunk_njobs") or 0)
    if ctx.task.get("gshare") in SITE_CLASS_SHARES:
        w_s = site_class_weight(ctx.task.get("task_class"), qa["site_class"].astype(float)[idx], n_j, eps1, eps2)
    else:
        w_s = np.full(len(idx), n_j)
    w_q, w_q_rule = queue_length_weight(ctx.stab.max_q_len[idx], ctx.stab.nQ_user[idx], n_j)
    new = w_s * w_q
    used = new if cfg["ANAL_BASIC_WEIGHT"] == "new" else original
    remaining = np.maximum(ctx.stab.max_q_len[idx] - ctx.stab.nQ_user[idx], 0.0)
    return AnalWeights(idx, nrun, rule, original, w_s, w_q, w_q_rule, remaining, new, used, n_j)


def candidate_factors(ctx: AnalContext, w: AnalWeights, k: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Weight factors and the numbers behind them for the K-th candidate."""
    i = int(w.idx[k])
    c = ctx.counts
    sc = ctx.qa["site_class"][i]
    factors = {
        "basic": float(w.used[k]),
        "original": float(w.original[k]),
        "new": float(w.new[k]),
        "W_s": float(w.w_s[k]),
        "W_q": float(w.w_q[k]),
    }
    details: dict[str, Any] = {
        "basic_weight": str(ctx.config["ANAL_BASIC_WEIGHT"]),
        "nRunning": float(w.nrunning[k]),
        "nRunning_rule": str(w.running_rule[k]),
        "nActivated": float(c["activated"][i]),
        "nAssigned": float(c["assigned"][i]),
        "nStarting": float(c["starting"][i]),
        "nDefined": float(c["defined"][i]),
        "site_class": None if pd.isna(sc) else int(sc),
        "N_j": w.n_j,
        "userQRem": float(w.remaining[k]),
        "W_q_rule": str(w.w_q_rule[k]),
        "nQ_user": float(ctx.stab.nQ_user[i]),
        "max_q_len": float(ctx.stab.max_q_len[i]),
    }
    return factors, details


# --- the broker ---------------------------------------------------------------------------------


@dataclass
class PassResult:
    """Survivors of one pass, after the persistent filters and after all filters, with the explanation."""

    persistent_alive: np.ndarray
    alive: np.ndarray
    skips: SkipList
    funnel: list[FunnelStep]
    locality_removed: int


def run_pass(ctx: AnalContext, use_locality: bool) -> PassResult:
    """Preliminary candidates, then the persistent and the temporary filters."""
    ctx.use_locality = use_locality
    names = ctx.qa.name
    start = initial_candidates(ctx)
    funnel = [FunnelStep("preliminary candidates", int(start.sum()), int(start.sum()))]
    alive, skips, funnel = apply_filters(names, start, PRELIMINARY, ctx, [], funnel)
    ctx.prelim = alive.copy()
    alive, skips, funnel = apply_filters(names, alive, PERSISTENT, ctx, skips, funnel)
    persistent_alive = alive.copy()
    alive, skips, funnel = apply_filters(names, alive, TEMPORARY, ctx, skips, funnel)
    removed = sum(f.before - f.after for f in funnel if f.filter == "input data locality check")
    return PassResult(persistent_alive, alive, skips, funnel, removed)


def needs_second_pass(ctx: AnalContext, first: PassResult) -> str:
    """Why pass 2 (without the data locality check) runs, or '' when it does not.

    Pass 2 runs when the locality check removed queues and either every queue was skipped for persistent
    issues, or every queue with the data that passed them has closed jobs of the task (input data transfer).
    """
    if first.locality_removed == 0 or first.alive.any():
        return ""
    if not first.persistent_alive.any():
        return "every queue was skipped for persistent issues"
    if (ctx.history["closed"][first.persistent_alive] > 0).all():
        hours = ctx.config["TW_DONE_JOB_STAT"]
        return f"every queue with the input data has closed jobs of the task in the last {hours}h"
    return ""


def stabilizer_records(ctx: AnalContext, mask: np.ndarray) -> list[dict[str, Any]]:
    """Per-PQ Stabilizer numbers for the queues in MASK (JSON-ready)."""
    s = ctx.stab
    keys = ("nQ", "nR", "trr", "can_throttle", "nQ_max", "nQ_max_rule", "nR_user", "nUsers", "percentage",
            "max_q_len", "max_q_len_rule", "nQ_user", "throttled")  # fmt: skip
    rows = np.flatnonzero(mask)
    columns = [[str(q) for q in ctx.qa.name[rows].tolist()]]
    for k in keys:  # tolist gives Python values; object columns may still hold numpy scalars
        columns.append([v.item() if isinstance(v, np.generic) else v for v in getattr(s, k)[rows].tolist()])
    return [dict(zip(("queue", *keys), values, strict=True)) for values in zip(*columns, strict=True)]


def broker(snap: GridSnapshot, jeditaskid: int, config: Config | None = None) -> Decision:
    """Run the analysis job brokerage for one task and explain every queue's fate.

    Usage: ``broker(snap, 7, Config()).to_dict()``
    """
    config = config or Config()
    task = grid.task_row(snap, jeditaskid)
    tid = int(task["jeditaskid"])
    pending = int(config["ANAL_PENDING_MINUTES"])
    thr = throttle(snap, task, config)
    if thr is not None:
        extra = {"throttled": {"rule": thr["rule"], "numbers": thr["numbers"]}, "pass": 1, "stabilizer": []}
        return Decision(
            BROKER, tid, "pending", [], [], [], _changed(snap, config), pending_minutes=pending,
            message=f"throttle to generate jobs due to {thr['message']}", extra=extra,
        )  # fmt: skip
    ctx = make_context(snap, task, config)
    result = run_pass(ctx, use_locality=True)
    pass_no, message, extra = 1, "", {}
    why = needs_second_pass(ctx, result)
    if why:
        first = result
        result = run_pass(ctx, use_locality=False)
        pass_no = 2
        message = f"pass 2 without the input data locality check: {why}"
        counts = first.skips.criteria_counts()
        extra["pass1"] = {"funnel": [f.to_dict() for f in first.funnel], "criteria_counts": counts}
    unknown = [p for p in split_list(task.get("site")) if not match_queues(ctx.snap, [p]).any()]
    if unknown:
        message = "; ".join(filter(None, [message, f"unknown pre-assigned site: {', '.join(unknown)}"]))
    extra = {
        "throttled": None,
        "pass": pass_no,
        "stabilizer": stabilizer_records(ctx, result.persistent_alive),
        **extra,
    }
    skips, funnel = result.skips, result.funnel
    idx = np.flatnonzero(result.alive)
    if len(idx) == 0:
        return Decision(
            BROKER, tid, "pending", [], skips, funnel, _changed(snap, config), pending_minutes=pending,
            message="; ".join(filter(None, [message, "no candidates"])), extra=extra,
        )  # fmt: skip
    w = weights(ctx, idx)
    order = np.lexsort((ctx.qa.name[idx], -w.used))
    top = int(config["MAX_SITE_CANDIDATES"])
    candidates = []
    for rank, k in enumerate(order[:top], start=1):
        factors, details = candidate_factors(ctx, w, int(k))
        candidates.append(Candidate(str(ctx.qa.name[idx[k]]), rank, float(w.used[k]), factors, details))
    rest = order[top:]
    if len(rest):
        cutoff = float(w.used[order[top - 1]])
        used = w.used

        def low_weight(ks: np.ndarray) -> list[str]:
            return [f"weight={x:.4g} below the best {top} (cut at {cutoff:.4g})" for x in used[ks].tolist()]

        skips.add(ctx.qa.name, idx[rest], "-low_weight", LazyTexts(low_weight, rest), "best candidates")
        funnel.append(FunnelStep("best candidates", len(order), top))
    return Decision(BROKER, tid, "ok", candidates, skips, funnel, _changed(snap, config), message=message, extra=extra)


def broker_many(snap: GridSnapshot, task_ids: Sequence[int], config: Config | None = None) -> list[Decision]:
    """Analysis job brokerage of many tasks on one snapshot and config; each decision equals ``broker``'s.

    Work that does not depend on the task (verdicts shared per snapshot and config, the software check per
    distinct request) is done once; an unknown task id raises KeyError like ``broker``.
    Usage: ``[d.status for d in broker_many(snap, [7, 8], Config())]``
    """
    config = config or Config()
    return [broker(snap, tid, config) for tid in task_ids]


def _changed(snap: GridSnapshot, config: Config) -> dict[str, Any]:
    """config.changed() for a decision (computed once per snapshot and config, copied per decision)."""
    return dict(grid.per_config(snap, config, "changed", config.changed))
