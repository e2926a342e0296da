"""Analysis brokerage steps 2 and 3: preliminary candidates, then the filters for persistent and temporary issues."""

from __future__ import annotations

from typing import Any

import numpy as np

from brokerage.brokers.analysis_context import AnalContext, match_queues, split_list
from brokerage.checks.cores import CPUCORE
from brokerage.checks.diskio import DISKIO
from brokerage.checks.memory import MEMORY
from brokerage.checks.pilot import NOPILOT
from brokerage.checks.scratch import direct_access, scratch_verdict
from brokerage.checks.software import SOFTWARE
from brokerage.checks.status import status_verdict
from brokerage.checks.storage import BLACKLIST, STORAGE
from brokerage.checks.walltime import WALLTIME
from brokerage.framework import Filter, Reads, Verdict
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.explain import fmt, fmt_many, sentences
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import rule

ANALYSIS_TYPES = ("analysis", "unified")
QUEUE_CAP_FACTOR = 2.0  # seed: "Skip queues if defined+activated+assigned+starting > 2 × max(20, running)"
BAD_JOBS_FINISHED_FACTOR = (
    2.0  # seed: "(nFailed + nClosed) must be less than max(2 × nFinished, MIN_BAD_JOBS_TO_SKIP_PQ)"
)
# "Skip VP queues if ... those queues are overloaded": the seed does not define overloaded; JEDI's rule and defaults.


def initial_candidates(ctx: AnalContext) -> np.ndarray:
    """All queues with type analysis or unified, plus queues pre-assigned through the task's site (not under
    ``anal_site_lists_as_jedi``: JEDI's scan list holds analysis and unified queues only, AtlasAnalJobBroker.py:117)."""
    if rule(ctx.config, "anal_site_lists_as_jedi"):
        return _analysis_type(ctx.cache).copy()
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
           f_locality, uses=Reads(config=("IO_INTENSITY_CUTOFF_USER", "ANAL_LOCALITY_PRIORITY"))),
    DISKIO,
    CPUCORE,
    Filter("VP check", ("-avoid_vp", "-overloaded_vp"),
           "skip VP queues if the task specifies avoidVP or those queues are overloaded", f_vp,
           uses=Reads(config=("OVERLOAD_MIN_QUEUE", "OVERLOAD_RATIO_OFFSET"))),
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
           "MIN_BAD_JOBS_TO_SKIP_PQ)", f_failed_closed, temporary=True,
           uses=Reads(config=("TW_DONE_JOB_STAT", "MIN_BAD_JOBS_TO_SKIP_PQ"), facts=("history",))),
    Filter("queue length check", ("-overloaded",),
           "skip queues if defined+activated+assigned+starting > 2 x max(20, running)", f_queue_cap, temporary=True,
           uses=Reads(config=("ANAL_QUEUE_FLOOR",))),
    Filter("Analysis Stabilizer", ("-tmp_user_problem",),
           "skip PQs where the user already has more than max_q_len queued jobs", f_stabilizer, temporary=True,
           uses=Reads(facts=("stab",))),
)  # fmt: skip
"""Filters for temporary issues, in the seed's order."""
