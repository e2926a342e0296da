"""ATLAS analysis job brokerage: throttles, candidate filters, the Analysis Stabilizer and the basic weights, in two
passes when the data locality check leaves nothing (the steps live in analysis_throttle, analysis_context,
analysis_filters and analysis_weights)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from brokerage.brokers.analysis_context import AnalContext, make_context, match_queues, split_list
from brokerage.brokers.analysis_filters import PERSISTENT, PRELIMINARY, TEMPORARY, initial_candidates
from brokerage.brokers.analysis_panda import (
    ignores_locality,
    panda_pass,
    problematic,
    replica_flags,
    second_loop,
)
from brokerage.brokers.analysis_panda_weights import basic_weight, data_weight, jedi_stabilizer
from brokerage.brokers.analysis_throttle import STEPS as THROTTLE_STEPS
from brokerage.brokers.analysis_throttle import throttle
from brokerage.brokers.analysis_weights import STEPS as WEIGHT_STEPS
from brokerage.brokers.analysis_weights import candidate_factors, weights
from brokerage.framework import BEST_CANDIDATES, Reads, Step, apply_filters, rank_and_cut
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.explain import Candidate, Decision, FunnelStep, LazyTexts, SkipList
from brokerage.model.gcpause import gc_paused
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import rule
from brokerage.model.snapshot import GridSnapshot

BROKER = "analysis"
STEPS: tuple[Step, ...] = (
    *THROTTLE_STEPS,
    Step("pass 2", Reads(config=("TW_DONE_JOB_STAT",), facts=("history",))),
    *WEIGHT_STEPS,
    Step(BEST_CANDIDATES, Reads(config=("MAX_SITE_CANDIDATES",))),
    Step("pending", Reads(config=("ANAL_PENDING_MINUTES",))),
    Step("PanDA's filters and loops (panda-1.0.4)",
         Reads(config=("RULES", "MAX_DISKIO_DEFAULT", "OVERLOAD_MIN_QUEUE", "OVERLOAD_RATIO_OFFSET",
                       "MIN_BAD_JOBS_TO_SKIP_PQ", "MAX_MISSING_INPUT_FILES", "MIN_INPUT_COMPLETENESS"))),
)  # fmt: skip
"""What the broker reads besides its filters: the throttle (step 1), pass 2, the weight factors (step 4, in the
decision's order) and the steps after them."""


@dataclass
class PassResult:
    """Survivors of one pass, after the persistent filters and after all filters, with the explanation."""

    persistent_alive: np.ndarray
    alive: np.ndarray
    skips: SkipList
    funnel: list[FunnelStep]
    locality_removed: int
    weighed: np.ndarray | None = None  # JEDI weighs these (its final check drops the problematic ones afterwards)
    why: str = ""  # why the pass ended before any filter ran


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


def run_panda_loops(ctx: AnalContext) -> tuple[PassResult, int]:
    """JEDI's loops (switch ``anal_order_as_jedi``): with the data locality check, then, when JEDI adds it, without;
    the first loop that leaves a candidate ends it. A queue keeps the first skip either loop gave it."""
    names = ctx.qa.name
    kept: list = []
    if rule(ctx.config, "anal_stabilizer_as_jedi"):
        ctx.stab = jedi_stabilizer(ctx)
    if ctx.avail["total_files"] > 0 and not replica_flags(ctx)[0]:  # '<ds> is incomplete at online storage'
        none = np.zeros(ctx.n, dtype=bool)
        why = (f"an input dataset is incomplete at online storage: no replica at a readable endpoint holds all its "
               f"files, or all but MAX_MISSING_INPUT_FILES={ctx.config['MAX_MISSING_INPUT_FILES']}, or "
               f"MIN_INPUT_COMPLETENESS={ctx.config['MIN_INPUT_COMPLETENESS']} %")  # fmt: skip
        return PassResult(none, none, SkipList(), [], 0, why=why), 1
    loops = (True, False) if second_loop(ctx) else (True,)
    for n, locality in enumerate(loops, start=1):
        ctx.use_locality = locality
        start = initial_candidates(ctx)
        ctx.prelim = start.copy()
        funnel = [FunnelStep("preliminary candidates", int(start.sum()), int(start.sum()))]
        alive, skips, funnel = panda_pass(ctx, start, funnel)
        bad, why = problematic(ctx)
        problems = rule(ctx.config, "anal_problems_as_jedi")
        user_bad, user_why = problematic(ctx, exempt_preassigned=False)  # no exemption at this check
        if problems and n < len(loops) and alive.any() and user_bad[alive].all() and ignores_locality(ctx):
            gone = np.flatnonzero(alive)  # AtlasAnalJobBroker.py:1735-1755: every candidate has a user problem
            skips.add(
                names,
                gone,
                "-tmp_user_problem",
                LazyTexts(lambda idx, texts=user_why: texts[idx].tolist(), gone),
                "temp user problem check",
            )
            alive = np.zeros_like(alive)
        if alive.any() or n == len(loops):
            break
        kept += [s for s in skips if s.criteria != "-input_data"]  # JEDI logs no line for its data check
    out = SkipList(kept)
    named = {s.candidate for s in kept}
    out.extend(s for s in skips if s.candidate not in named)  # a queue keeps the first skip either loop gave it
    if not problems:  # the seed's temporary filters instead of JEDI's final check
        alive, out, funnel = apply_filters(names, alive, TEMPORARY[:1] + TEMPORARY[2:], ctx, out, funnel)
        return PassResult(alive.copy(), alive, out, funnel, 0), n
    weighed = alive.copy()
    gone = np.flatnonzero(alive & bad)
    if len(gone):
        out.add(names, gone, "-badsite", LazyTexts(lambda idx: why[idx].tolist(), gone), "final check")
        alive = alive & ~bad
    return PassResult(alive.copy(), alive, out, funnel, 0, weighed), n


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
    pass_no, message, extra = 1, "", {}
    if rule(config, "anal_order_as_jedi"):
        result, pass_no = run_panda_loops(ctx)
        message, why = result.why, ""
    else:
        result = run_pass(ctx, use_locality=True)
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
    if rule(config, "anal_order_as_jedi") and rule(config, "anal_weight_as_jedi"):
        pool = np.flatnonzero(result.weighed if result.weighed is not None else result.alive)
        used = basic_weight(ctx, pool) * data_weight(ctx, pool)  # shares spread over the problematic queues too
        w = replace(w, used=used[np.isin(pool, idx)])
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
