"""ATLAS analysis job brokerage: throttles, candidate filters, the Analysis Stabilizer and the basic weights."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from brokerage.brokers.stabilizer import StabilizerTable, stabilizer
from brokerage.checks.context import QueueContext, queue_fields
from brokerage.checks.cores import CPUCORE, JOB_CORES
from brokerage.checks.diskio import DISKIO
from brokerage.checks.memory import MEMORY
from brokerage.checks.pilot import NOPILOT
from brokerage.checks.running import effective_running
from brokerage.checks.scratch import direct_access, scratch_verdict
from brokerage.checks.software import SOFTWARE
from brokerage.checks.status import status_verdict
from brokerage.checks.storage import BLACKLIST, STORAGE
from brokerage.checks.walltime import WALLTIME
from brokerage.framework import Filter, Reads, Verdict, apply_filters, rank_and_cut
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.explain import Candidate, Decision, FunnelStep, SkipList, fmt, fmt_many, sentences
from brokerage.model.gcpause import gc_paused
from brokerage.model.gdpconfig import Config, ConfigError
from brokerage.model.snapshot import GridSnapshot

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


def _cap_totals(cache: GridCache) -> dict[str, pd.DataFrame]:
    def build() -> dict[str, pd.DataFrame]:
        u = cache.snap.user_job_counts
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

    return cache.get("analysis:cap_totals", build)


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
    totals = _cap_totals(cache)[scope]
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


# --- context ------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class AnalContext(QueueContext):
    """The queue context of an analysis task, plus its Stabilizer, failure history and candidate masks."""

    DEPENDS: ClassVar[dict[str, Reads]] = {
        **QueueContext.DEPENDS,
        "at_nucleus": Reads(facts=("avail",)),
        "wan_needed": Reads(facts=("avail",)),
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
        stab=stabilizer(cache, config, str(task.get("username") or ""), gshare),
        history=failure_history(cache, tid, float(config["TW_DONE_JOB_STAT"])),
        prelim=np.zeros(len(complete), dtype=bool),
        preassigned=match_queues(cache, split_list(task.get("site")))
        | match_queues(cache, split_list(task.get("includedsite"))),
    )
    ctx.job_cores = JOB_CORES(ctx)
    return ctx


# --- step 2: preliminary candidates -------------------------------------------------------------


def initial_candidates(ctx: AnalContext) -> np.ndarray:
    """All queues with type analysis or unified, plus queues pre-assigned through the task's site."""
    return _analysis_type(ctx.cache) | match_queues(ctx.cache, split_list(ctx.task.get("site")))


def _analysis_type(cache: GridCache) -> np.ndarray:
    """Queues of type analysis or unified (built once per snapshot, read-only)."""

    def build() -> np.ndarray:
        out = np.isin(views.queue_arrays(cache)["type"], ANALYSIS_TYPES)
        out.flags.writeable = False
        return out

    return cache.get("analysis:type", build)


def f_excluded(ctx: AnalContext) -> Verdict | None:
    """Exclude queues if excludedSite is specified and the queues are included in the list."""
    pats = split_list(ctx.task.get("excludedsite"))
    if not pats:
        return None
    return Verdict(~match_queues(ctx.cache, pats), "-excluded", f"matches excludedSite={','.join(pats)}")


def f_included(ctx: AnalContext) -> Verdict | None:
    """Exclude queues if includedSite is specified and the queues are not included in the list."""
    pats = split_list(ctx.task.get("includedsite"))
    if not pats:
        return None
    return Verdict(match_queues(ctx.cache, pats), "-notincluded", f"not in includedSite={','.join(pats)}")


def f_preassigned(ctx: AnalContext) -> Verdict | None:
    """A pre-assigned site restricts the candidates to the queues it names."""
    pats = split_list(ctx.task.get("site"))
    if not pats:
        return None
    return Verdict(match_queues(ctx.cache, pats), "-nonpreassigned", f"not the pre-assigned site={','.join(pats)}")


PRELIMINARY: tuple[Filter, ...] = (
    Filter("excludedSite", ("-excluded",), "exclude queues included in excludedSite", f_excluded),
    Filter("includedSite", ("-notincluded",), "exclude queues not included in includedSite", f_included),
    Filter("pre-assigned site", ("-nonpreassigned",), "a pre-assigned site restricts the candidates", f_preassigned),
)


# --- step 3: filters for persistent issues ------------------------------------------------------


def f_status(ctx: AnalContext) -> Verdict:
    """The queue status must be online unless the queues are pre-assigned."""
    return status_verdict(ctx.qa, waived=ctx.preassigned)


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


def vp_overloaded(ctx: AnalContext) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Per queue: overloaded mask, nQueue, nRunning (task gshare) and the grid's queued/running ratio."""
    c = ctx.counts
    nq = c["defined"] + c["assigned"] + c["activated"] + c["starting"]
    nr = c["running"]
    anal = _analysis_type(ctx.cache)
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


def expected_scratch_mb(ctx: AnalContext) -> np.ndarray:
    """(0 or inputDiskCount) + outDiskCount × inputDiskCount + workDiskCount, in MB (0 for direct-access queues).

    Usage: ``expected_scratch_mb(ctx)[i]``
    """
    t = ctx.task
    input_mb = float(t.get("chunk_input_mb") or 0)
    out = float(t.get("outdiskcount") or 0)
    return np.where(direct_access(ctx.cache), 0.0, input_mb) + out * input_mb + float(t.get("workdiskcount") or 0)


def f_scratch(ctx: AnalContext) -> Verdict:
    """maxwdir divided by the queue's coreCount must be larger than the expected disk usage."""
    return scratch_verdict(ctx, expected_scratch_mb(ctx))


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
        sentences(
            lambda f, c, n: (
                f"too many failed or closed jobs for last {hours}h: nFailed={f} + nClosed={c} >= "
                f"max(2 x nFinished={n}, MIN_BAD_JOBS_TO_SKIP_PQ={ctx.config['MIN_BAD_JOBS_TO_SKIP_PQ']})"
            ),
            h["failed"],
            h["closed"],
            h["finished"],
        ),
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
        sentences(
            lambda n, r: (
                f"defined+activated+assigned+starting={n} > {fmt(QUEUE_CAP_FACTOR)} x max({fmt(floor)}, running={r})"
            ),
            q,
            c["running"],
        ),
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


PERSISTENT: tuple[Filter, ...] = (
    Filter("status check", ("-status",), "the queue status must be online unless the queues are pre-assigned",
           f_status),
    Filter("input data locality check", ("-input_data",),
           "skip queues that do not have the input data locally (all files; any part when no queue has all)",
           f_locality),
    DISKIO,
    CPUCORE,
    Filter("VP check", ("-avoid_vp", "-overloaded_vp"),
           "skip VP queues if the task specifies avoidVP or those queues are overloaded", f_vp),
    SOFTWARE,
    MEMORY,
    Filter("scratch disk check", ("-disk",),
           "maxwdir divided by coreCount must exceed (0 or inputDiskCount) + outDiskCount x inputDiskCount "
           "+ workDiskCount", f_scratch),
    STORAGE,
    BLACKLIST,
    WALLTIME,
    NOPILOT,
)  # fmt: skip
"""Filters for persistent issues, in the seed's order."""

TEMPORARY: tuple[Filter, ...] = (
    Filter("failed/closed jobs check", ("-badsite",),
           "(nFailed + nClosed) in the last TW_DONE_JOB_STAT hours must be < max(2 x nFinished, "
           "MIN_BAD_JOBS_TO_SKIP_PQ)", f_failed_closed, temporary=True),
    Filter("queue length check", ("-overloaded",),
           "skip queues if defined+activated+assigned+starting > 2 x max(20, running)", f_queue_cap, temporary=True),
    Filter("Analysis Stabilizer", ("-tmp_user_problem",),
           "skip PQs where the user already has more than max_q_len queued jobs", f_stabilizer, temporary=True),
)  # fmt: skip
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
    nrun, rule = effective_running(
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
    alive, skips, funnel = apply_filters(names, start, PRELIMINARY, ctx, None, funnel)
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


def broker(
    snap: GridSnapshot, jeditaskid: int, config: Config | None = None, *, cache: GridCache | None = None,
    task_fields: Mapping[str, Any] | None = None,
) -> Decision:  # fmt: skip
    """Run the analysis job brokerage for one task and explain every queue's fate.

    CACHE holds what is derived from SNAP between calls (a cold one is made when None); TASK_FIELDS replace task
    fields for this call (a chunk's ramcount above the task's, as JEDI brokers each input chunk).
    Usage: ``broker(snap, 7, Config(), cache=cache).to_dict()``
    """
    config = config or Config()
    cache = cache_for(snap, cache)
    task = {**views.task_row(cache, jeditaskid), **(task_fields or {})}
    tid = int(task["jeditaskid"])
    pending = int(config["ANAL_PENDING_MINUTES"])
    thr = throttle(cache, task, config)
    if thr is not None:
        extra = {"throttled": {"rule": thr["rule"], "numbers": thr["numbers"]}, "pass": 1, "stabilizer": []}
        return Decision(
            BROKER, tid, "pending", [], [], [], config.changed(), pending_minutes=pending,
            message=f"throttle to generate jobs due to {thr['message']}", extra=extra,
        )  # fmt: skip
    ctx = make_context(task, config, cache)
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
    unknown = [p for p in split_list(task.get("site")) if not match_queues(cache, [p]).any()]
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
            BROKER, tid, "pending", [], skips, funnel, config.changed(), pending_minutes=pending,
            message="; ".join(filter(None, [message, "no candidates"])), extra=extra,
        )  # fmt: skip
    w = weights(ctx, idx)
    keep, _ = rank_and_cut(ctx.qa.name, idx, w.used, int(config["MAX_SITE_CANDIDATES"]), skips, funnel)
    candidates = []
    for rank, k in enumerate(keep.tolist(), start=1):
        factors, details = candidate_factors(ctx, w, k)
        candidates.append(Candidate(str(ctx.qa.name[idx[k]]), rank, float(w.used[k]), factors, details))
    return Decision(BROKER, tid, "ok", candidates, skips, funnel, config.changed(), message=message, extra=extra)


@gc_paused()
def broker_many(
    snap: GridSnapshot, task_ids: Sequence[int], config: Config | None = None, *, cache: GridCache | None = None
) -> list[Decision]:
    """Analysis job brokerage of many tasks on one snapshot and config; each decision equals ``broker``'s.

    Work that does not depend on the task (verdicts shared through CACHE, the software check per distinct
    request) is done once; an unknown task id raises KeyError like ``broker``.
    Usage: ``[d.status for d in broker_many(snap, [7, 8], Config(), cache=cache)]``
    """
    cache = cache_for(snap, cache)
    return [broker(snap, tid, config, cache=cache) for tid in task_ids]
