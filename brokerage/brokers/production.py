"""ATLAS production job brokerage: choose the queues for a production task's jobs (seed steps 1-5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from brokerage.brokers.production_pseudo import any_pseudo_pass
from brokerage.checks import panda_rules
from brokerage.checks.context import ProdContext
from brokerage.checks.panda_data import jedi_local_disk
from brokerage.checks.production_queues import FILTERS, PANDA_FILTERS, make_context
from brokerage.checks.running import effective_running
from brokerage.framework import BEST_CANDIDATES, Derived, Filter, Reads, Step, Verdict, apply_filters, rank_and_cut
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.explain import Candidate, Decision, FunnelStep, SkipList, fmt
from brokerage.model.gcpause import gc_paused
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import rule as profile_rule
from brokerage.model.snapshot import GridSnapshot

BROKER = "production"


# --- step 1: preliminary candidates -------------------------------------------------------------


def preliminary(ctx: ProdContext) -> tuple[np.ndarray, np.ndarray, SkipList, list[str]]:
    """Step 1: pre-assigned queues, else all production/unified queues without 'test' in the name.

    Returns (candidate mask, mask of queues removed by the name rule, their skips, unknown pre-assigned names).
    """
    qa = ctx.qa
    site = ctx.task.get("site")
    if site:
        wanted = [s.strip() for s in str(site).split(",") if s.strip()]
        mask = np.zeros(qa.n, dtype=bool)
        unknown = []
        for w in wanted:
            i = qa.index.get(w)
            if i is None:
                unknown.append(w)
            else:
                mask[i] = True
        return mask, np.zeros(qa.n, dtype=bool), SkipList(), unknown
    candidates, test, test_idx = ctx.cache.get("production:preliminary", lambda: _preliminary_masks(qa))
    if profile_rule(ctx.config, "no_test_name_rule"):
        candidates, test, test_idx = candidates | test, test & False, test_idx[:0]
    skips = SkipList()
    skips.add(qa.name, test_idx, "-test", "name contains 'test': not a preliminary candidate", "preliminary candidates")
    return candidates.copy(), test.copy(), skips, []


def _preliminary_masks(qa: views.QueueArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    prod = np.isin(qa["type"], ("production", "unified"))
    test = prod & qa.name_has_test
    return prod & ~test, test, np.flatnonzero(test)


# --- step 3: weight -----------------------------------------------------------------------------


@dataclass(frozen=True)
class WeightTerms:
    """The numbers behind each queue's weight (arrays over all queues)."""

    nrunning: np.ndarray
    running_rule: np.ndarray
    assigned: np.ndarray
    many_assigned: np.ndarray
    base: np.ndarray
    data: np.ndarray
    network: np.ndarray
    t1: np.ndarray
    weight: np.ndarray


def t1_weight(ctx: ProdContext) -> float:
    """The task's t1Weight as the seed sets it (seed 003 "T1 weight").

    t1Weight=0 or unset: WORLD_NUCLEUS_WEIGHT if ioIntensity >= T1_WEIGHT_IO_INTENSITY, else 1; t1Weight=-1 has
    already kept only the nucleus' queues, so it weighs 1; then currentPriority >= T1_WEIGHT_HIGH_PRIO_MIN gives
    max(t1Weight, T1_WEIGHT_HIGH_PRIO).
    Usage: ``t1_weight(make_context(views.task_row(cache, 1), Config(), cache))``
    """
    cfg = ctx.config
    if profile_rule(cfg, "t1weight_as_jedi"):
        return t1_weight_jedi(ctx)
    t1 = ctx.task.get("t1weight")
    io = ctx.task.get("iointensity")
    if not t1:
        heavy = io is not None and float(io) >= float(cfg["T1_WEIGHT_IO_INTENSITY"])
        weight = float(cfg["WORLD_NUCLEUS_WEIGHT"]) if heavy else 1.0
    elif t1 < 0:
        weight = 1.0
    else:
        weight = float(t1)
    if ctx.priority >= int(cfg["T1_WEIGHT_HIGH_PRIO_MIN"]):
        weight = max(weight, float(cfg["T1_WEIGHT_HIGH_PRIO"]))
    return weight


def t1_weight_jedi(ctx: ProdContext) -> float:
    """PanDA 1.0.4's t1Weight (switch ``t1weight_as_jedi``): 0/unset gives WORLD_NUCLEUS_WEIGHT when ioIntensity >
    T1_WEIGHT_IO_INTENSITY (strictly) else 1; negative gives 1 (merge jobs keep it); then T1_WEIGHT_HIGH_PRIO is the
    floor for tasks at or above T1_WEIGHT_HIGH_PRIO_MIN or scouts, neither event service nor pre-assigned.

    Usage: ``t1_weight_jedi(ctx)``
    """
    cfg = ctx.config
    raw = ctx.task.get("t1weight")
    t1 = 0.0 if raw is None or raw != raw else float(raw)  # unset (None or NaN) is JEDI's 0
    io = ctx.task.get("iointensity")
    if t1 == 0:
        heavy = io is not None and not np.isnan(float(io)) and float(io) > float(cfg["T1_WEIGHT_IO_INTENSITY"])
        t1 = float(cfg["WORLD_NUCLEUS_WEIGHT"]) if heavy else 1.0
    elif t1 < 0 and not ctx.merge:
        t1 = 1.0
    high = (ctx.priority >= int(cfg["T1_WEIGHT_HIGH_PRIO_MIN"]) or ctx.scout) and not ctx.preassigned
    if high and not bool(ctx.task.get("eventservice")):
        return max(t1, float(cfg["T1_WEIGHT_HIGH_PRIO"]))
    return max(t1, 1.0)


def t1_factor(ctx: ProdContext) -> np.ndarray:
    """Weight factor for queues of the task's nucleus from t1Weight (1 elsewhere)."""
    if ctx.nucleus is None:
        return np.ones(ctx.n)
    return np.where(ctx.at_nucleus, t1_weight(ctx), 1.0)


@dataclass(frozen=True)
class _Running:
    """The weight terms that depend only on the task's global share (its job counts)."""

    nrunning: np.ndarray
    rule: np.ndarray
    no_assigned: np.ndarray  # zeros
    ones: np.ndarray
    base_local: np.ndarray  # base where assigned jobs are ignored (the input is local everywhere)


def _running_terms(ctx: ProdContext) -> _Running:
    c, cfg = ctx.counts, ctx.config
    nrun, rule = effective_running(
        c["running"],
        ctx.qa["nbatchjob"].astype(float, copy=False),
        ctx.qa["numslots"].astype(float, copy=False),
        c["starting"],
        float(cfg["BOOTSTRAP_NBATCHJOB_CAP"]),
    )
    return _freeze_running(ctx, nrun, rule)


def _running_terms_jedi(ctx: ProdContext) -> _Running:
    nrun, rule = panda_rules.running(ctx, ctx.counts)
    return _freeze_running(ctx, nrun, rule)


def _freeze_running(ctx: ProdContext, nrun: np.ndarray, rule: np.ndarray) -> _Running:
    zeros, ones = np.zeros(ctx.n), np.ones(ctx.n)
    base = _base(nrun, ctx.counts, zeros, ones, float(ctx.config["WEIGHT_QUEUE_OFFSET"]))
    return _Running(*(views.frozen(a) for a in (nrun, rule, zeros, ones, base)))


# two memoised values, not one reading the profile: the seed's rule does not depend on the task's priority, so
# its value is shared by every task of a grid; JEDI's bootstrap rule is per priority
RUNNING_TERMS = Derived(
    "running terms",
    Reads(config=("BOOTSTRAP_NBATCHJOB_CAP", "WEIGHT_QUEUE_OFFSET"), facts=("counts",)),
    _running_terms,
)
RUNNING_TERMS_JEDI = Derived(
    "running terms (running_as_jedi)",
    Reads(
        config=("WEIGHT_QUEUE_OFFSET", "MAX_PRIO_TO_BOOTSTRAP", "NO_PILOT_HOURS"),
        facts=("counts", "priority"),
    ),
    _running_terms_jedi,
)


def _base(
    nrun: np.ndarray, c: dict[str, np.ndarray], assigned: np.ndarray, many: np.ndarray, offset: float
) -> np.ndarray:
    return (nrun + 1.0) / ((c["activated"] + assigned + c["starting"] + c["defined"] + offset) * many)


def weights(ctx: ProdContext) -> WeightTerms:
    """Step 3: (running+1)/((activated+assigned+starting+defined+10) x manyAssigned) x data x network (x t1)."""
    c, cfg = ctx.counts, ctx.config
    r = RUNNING_TERMS_JEDI(ctx) if profile_rule(cfg, "running_as_jedi") else RUNNING_TERMS(ctx)
    nrun = r.nrunning
    avail = ctx.avail
    if profile_rule(cfg, "data_weight_as_jedi"):
        local = jedi_local_disk(ctx)
        avail = {"total_gb": local["total_gb"], "avail_gb": local["disk_gb"],
                 "missing_files": local["total_files"] - local["disk_files"]}  # fmt: skip
    total = float(avail["total_gb"])
    if total > 0:
        # assigned jobs wait for input transfers; they do not count where the input is already local
        assigned = np.where(avail["avail_gb"] >= total, 0.0, c["assigned"])
        act = c["activated"]
        if profile_rule(cfg, "many_assigned_as_jedi"):
            ratio = (assigned + 1.0) / (act + 1.0)
        else:
            ratio = np.divide(assigned, act, out=np.where(assigned > 0, np.inf, 0.0), where=act > 0)
        many = np.maximum(1.0, np.minimum(2.0, ratio))
        base = _base(nrun, c, assigned, many, float(cfg["WEIGHT_QUEUE_OFFSET"]))
        data = (avail["avail_gb"] + total) / (total * (avail["missing_files"] / 100.0 + 1.0))
    else:  # no input: local everywhere, no assigned job counts
        assigned, many, base, data = r.no_assigned, r.ones, r.base_local, r.ones
    network = ctx.nw.weight if ctx.nw is not None and cfg["NW_ACTIVE"] else r.ones
    t1 = t1_factor(ctx)
    return WeightTerms(nrun, r.rule, assigned, many, base, data, network, t1, base * data * network * t1)


# --- step 4: further filters --------------------------------------------------------------------


def _cap(what: str, queued: np.ndarray, ctx: ProdContext, terms: WeightTerms) -> Verdict:
    r = float(ctx.config["QUEUED_RUNNING_RATIO_CAP"])
    nrun = terms.nrunning
    return Verdict(
        queued <= r * nrun,
        "-cap",
        lambda idx: [f"{what}={fmt(queued[i])} > {fmt(r)} x running={fmt(nrun[i])}" for i in idx],
        temporary=True,
    )


def _cap1(ctx: ProdContext, terms: WeightTerms) -> Verdict:
    c = ctx.counts
    return _cap("activated+starting", c["activated"] + c["starting"], ctx, terms)


def _cap2(ctx: ProdContext, terms: WeightTerms) -> Verdict:
    c = ctx.counts
    queued = c["defined"] + c["activated"] + terms.assigned + c["starting"]
    return _cap("defined+activated+assigned+starting", queued, ctx, terms)


_CAP_READS = Reads(config=("QUEUED_RUNNING_RATIO_CAP",), facts=("counts",))
CAPS: tuple[Filter, ...] = (
    Filter("activated+starting cap", ("-cap",), "skip site if activated + starting > 2 x running", _cap1, True,
           uses=_CAP_READS),
    Filter("queued cap", ("-cap",), "skip site if defined+activated+assigned+starting > 2 x running", _cap2, True,
           uses=_CAP_READS),
)  # fmt: skip
"""Step 4's caps; ``fn`` takes the weight terms too, bound per task by ``further_filters``."""


def further_filters(terms: WeightTerms) -> tuple[Filter, ...]:
    """Step 4: skip queues with activated+starting or defined+activated+assigned+starting > 2 x running."""
    return tuple(replace(f, fn=partial(f.fn, terms=terms)) for f in CAPS)


CAPPED_FALLBACK = "all capped: best weights kept"


def all_capped_keep(config: Any) -> int:
    """How many best-weight queues go on when step 4's caps skip every queue: seeds 001 and 003, "If all sites are
    skipped candidates with the 3 best weights go to the next step" (ALL_CAPPED_KEEP_BEST); 0 under the switch
    all_capped_wait (PanDA's code: "available sites all capped", the task waits).

    Usage: ``all_capped_keep(Config())`` -> ``3``
    """
    return 0 if profile_rule(config, "all_capped_wait") else int(config["ALL_CAPPED_KEEP_BEST"])


def _capped_fallback(ctx: ProdContext, before: np.ndarray, terms: WeightTerms, skips: SkipList) -> np.ndarray:
    """Seed 001 step 4: if the caps skipped every site, the candidates with the ALL_CAPPED_KEEP_BEST best weights
    go on (0, or the switch all_capped_wait, keeps PanDA's code: the task waits). Their -cap skips are taken back."""
    keep = all_capped_keep(ctx.config)
    idx = np.flatnonzero(before)
    if keep <= 0 or len(idx) == 0:
        return np.zeros(ctx.n, dtype=bool)
    best = idx[np.lexsort((ctx.qa.name[idx], -terms.weight[idx]))[:keep]]
    skips.forget(ctx.qa.name[best].tolist())
    alive = np.zeros(ctx.n, dtype=bool)
    alive[best] = True
    return alive


# --- the broker ---------------------------------------------------------------------------------


STEPS: tuple[Step, ...] = (
    Step("base", RUNNING_TERMS.reads + RUNNING_TERMS_JEDI.reads, "weight"),
    Step("data", kind="weight"),
    Step("network", Reads(config=("NW_ACTIVE",), facts=("nw",)), "weight"),
    Step("t1", Reads(config=("T1_WEIGHT_IO_INTENSITY", "WORLD_NUCLEUS_WEIGHT", "T1_WEIGHT_HIGH_PRIO_MIN",
                             "T1_WEIGHT_HIGH_PRIO"), facts=("priority", "nucleus", "at_nucleus")), "weight"),
    Step(CAPPED_FALLBACK, Reads(config=("ALL_CAPPED_KEEP_BEST", "RULES"))),
    Step(BEST_CANDIDATES, Reads(config=("MAX_SITE_CANDIDATES",))),
    Step("pending", Reads(config=("JOB_PENDING_MINUTES",))),
    Step("task pre-check (panda-1.0.4)", Reads(config=("RULES", "MAX_MISSING_INPUT_FILES", "MIN_INPUT_COMPLETENESS"))),
    Step("queue cap (panda-1.0.4)", Reads(config=("RULES", "NQUEUELIMITSITE", "MAX_PRIO_TO_BOOTSTRAP"))),
)  # fmt: skip
"""What the broker reads besides its filters (FILTERS, CAPS): the weight factors, in the decision's order, and the
steps after them."""
_FACTORS = tuple(s.name for s in STEPS if s.kind == "weight")


def candidates_factors(
    terms: WeightTerms, rows: np.ndarray, ctx: ProdContext
) -> list[tuple[dict[str, float], dict[str, Any]]]:
    """Weight factors (multiplied together give the weight) and the job counts behind them for every queue in ROWS."""
    c, avail, nw = ctx.counts, ctx.avail, ctx.nw

    def floats(a: np.ndarray) -> list[float]:
        return np.asarray(a[rows], dtype=float).tolist()

    factors = [floats(a) for a in (terms.base, terms.data, terms.network, terms.t1)]
    columns: dict[str, list[Any]] = {
        "nRunning": floats(terms.nrunning),
        "nRunning_rule": [str(x) for x in terms.running_rule[rows].tolist()],
        "nActivated": floats(c["activated"]),
        "nAssigned": floats(terms.assigned),
        "nStarting": floats(c["starting"]),
        "nDefined": floats(c["defined"]),
        "manyAssigned": floats(terms.many_assigned),
        "availableGB": floats(avail["avail_gb"]),
        "totalGB": [float(avail["total_gb"])] * len(rows),
        "nMissingFiles": floats(avail["missing_files"]),
    }
    if nw is not None:
        columns.update(
            networkWeight=floats(nw.weight),
            queuedWeight=floats(nw.queued_weight),
            throughputWeight=floats(nw.throughput_weight),
            nQueuedFiles=floats(nw.nqueued),
            network_rule=[str(x) for x in nw.rule[rows].tolist()],
        )
    names = list(columns)
    return [
        (dict(zip(_FACTORS, f, strict=True)), dict(zip(names, d, strict=True)))
        for f, d in zip(zip(*factors, strict=True), zip(*columns.values(), strict=True), strict=True)
    ]


def broker(
    snap: GridSnapshot, jeditaskid: int, config: Config | None = None, *, cache: GridCache | None = None,
    task_fields: Mapping[str, Any] | None = None,
) -> Decision:  # fmt: skip
    """Run the production job brokerage for one task and explain every queue's fate.

    CACHE holds what is derived from SNAP between calls (a cold one is made when None); TASK_FIELDS replace task
    fields for this call (a chunk's ramcount above the task's, as JEDI brokers each input chunk).
    Usage: ``broker(snap, 4242, Config(), cache=cache).to_dict()``
    """
    if task_fields:
        cache = cache_for(snap, cache)
        return run(make_context({**views.task_row(cache, jeditaskid), **task_fields}, config or Config(), cache))
    return broker_many(snap, [jeditaskid], config, cache=cache)[0]


@gc_paused()
def broker_many(
    snap: GridSnapshot, task_ids: Sequence[int], config: Config | None = None, *, cache: GridCache | None = None
) -> list[Decision]:
    """Production job brokerage of many tasks on one snapshot and config; each decision equals ``broker``'s.

    The tasks share, through CACHE, what does not depend on them: task-independent verdicts (status, pilots,
    storage, ...) are built once, verdicts that depend on a few task fields (zero share, core count,
    connectivity, ...) once per distinct value, and skips stay masks until read. An unknown task id raises
    KeyError like ``broker``.
    Usage: ``[d.ranked_names for d in broker_many(snap, [4242, 4243], Config(), cache=cache)]``
    """
    config = config or Config()
    cache = cache_for(snap, cache)
    return [run(make_context(views.task_row(cache, tid), config, cache)) for tid in task_ids]


def run(ctx: ProdContext) -> Decision:
    """Run steps 1-5 on a prepared context."""
    cfg = ctx.config
    if why := panda_rules.task_failure(ctx):
        return Decision(BROKER, int(ctx.task["jeditaskid"]), "pending", [], SkipList(), [], cfg.changed(),
                        pending_minutes=int(cfg["JOB_PENDING_MINUTES"]), message=why)  # fmt: skip
    alive, test_mask, skips, unknown = preliminary(ctx)
    funnel = [FunnelStep("preliminary candidates", int(alive.sum() + test_mask.sum()), int(alive.sum()))]
    filters = PANDA_FILTERS if profile_rule(cfg, "io_check_late") else FILTERS
    defer = profile_rule(cfg, "temporary_deferred")
    alive, skips, funnel, passed = any_pseudo_pass(ctx, alive, filters, skips, funnel, defer)
    terms = weights(ctx)
    capped, weight = alive, terms.weight
    if jedi_final := profile_rule(cfg, "final_stage_as_jedi"):
        alive, weight = panda_rules.final_stage(ctx, terms, alive, skips, funnel)
    else:
        alive, skips, funnel = apply_filters(ctx.qa.name, alive, further_filters(terms), ctx, skips, funnel)
    if not alive.any() and capped.any():
        alive = _capped_fallback(ctx, capped, terms, skips)
        if alive.any():
            funnel.append(FunnelStep(CAPPED_FALLBACK, 0, int(alive.sum())))
    idx = np.flatnonzero(alive)
    message = f"unknown pre-assigned queues: {', '.join(unknown)}" if unknown else ""
    changed = cfg.changed()
    tid = int(ctx.task["jeditaskid"])
    if len(idx) == 0:
        return Decision(
            BROKER, tid, "pending", [], skips, funnel, changed,
            pending_minutes=int(cfg["JOB_PENDING_MINUTES"]), message=message or "no candidates",
        )  # fmt: skip
    rank_by = np.where(weight[idx] == 0, np.inf, weight[idx]) if jedi_final else weight[idx]  # bootstrap first
    # JEDI's best 10 are pseudo queues: a unified queue takes a place per pseudo queue that passed
    slots = passed[idx] if profile_rule(cfg, "best_pseudo_queues") else None
    keep, _ = rank_and_cut(ctx.qa.name, idx, rank_by, int(cfg["MAX_SITE_CANDIDATES"]), skips, funnel, slots)
    kept_weights = weight[idx][keep]
    chosen = idx[keep]
    candidates = [
        Candidate(str(name), rank, weight, factors, details)
        for rank, (name, weight, (factors, details)) in enumerate(
            zip(
                ctx.qa.name[chosen].tolist(), kept_weights.tolist(), candidates_factors(terms, chosen, ctx), strict=True
            ),
            start=1,
        )
    ]
    return Decision(BROKER, tid, "ok", candidates, skips, funnel, changed, message=message)
