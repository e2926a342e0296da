"""The DIRAC matcher: a pilot's resource description against every task queue, every failing rule, the draw."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from brokerage.dirac import limits as lim
from brokerage.dirac.pilot import is_any, normalise, parse_pilot
from brokerage.dirac.result import DiracMatch
from brokerage.dirac.rules import FILTERS, RULE_NAMES, MatchContext
from brokerage.dirac.selection import JobChoice, choose_job, draw_first, first_probabilities
from brokerage.dirac.taskqueues import TaskQueues, build, build_key
from brokerage.framework import Reads, Step, Verdict, apply_filters
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.explain import FunnelStep, SkipList
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import rule
from brokerage.model.snapshot import GridSnapshot

__all__ = ["FILTERS", "RULE_NAMES", "DiracMatch", "MatchContext", "match", "site_masked", "task_queues"]

MASK_OK = ("Active", "Degraded")  # Matcher._checkMask: other RSS statuses take only Test jobs
CPU_ORDER_STEP = "CPUTime order"
SELECTION_STEP = "selection"


STEPS: tuple[Step, ...] = (
    Step("mask", Reads(config=("DIRAC_CHECK_SITE_MASK",))),
    Step("resource", Reads(config=("RULES",))),
    Step("selection", Reads(config=("DIRAC_CPU_ORDER", "DIRAC_JOB_WEIGHT", "DIRAC_JOBS_PER_TRY"))),
)
"""The gdpconfig keys the matcher reads itself: the site mask and the choice of a task queue and a job."""


def task_queues(snap: GridSnapshot, config: Config | None = None, cache: GridCache | None = None) -> TaskQueues:
    """The task queues of SNAP under CONFIG, built once per (snapshot, build parameters) in CACHE.

    Usage: ``tqs = task_queues(snap, Config())``
    """
    config = config or Config()
    cache = cache_for(snap, cache)
    return cache.get(("dirac_taskqueues", build_key(config)), lambda: build(snap, config))


def site_masked(snap: GridSnapshot, site: str | None, config: Config) -> bool:
    """True when SITE is outside the site mask (an empty dirac_site_mask table means no mask)."""
    mask = snap.tables["dirac_site_mask"]
    if not config["DIRAC_CHECK_SITE_MASK"] or not len(mask) or not site or is_any(site):
        return False
    ok = set(mask.loc[mask["Status"].isin(MASK_OK), "Site"])
    return site not in ok


def match(
    snap: GridSnapshot,
    pilot: str | dict[str, Any],
    config: Config | None = None,
    *,
    seed: int = 0,
    cache: GridCache | None = None,
) -> DiracMatch:
    """Match one pilot against every task queue of SNAP: verdicts with every failing rule, probabilities, the draw.

    Usage: ``match(snap, "Site=LCG.CERN.cern,CPUTime=40000", Config(), seed=1).to_dict()``
    """
    config = config or Config()
    cache = cache_for(snap, cache)
    given = parse_pilot(pilot) if isinstance(pilot, str) else parse_pilot(dict(pilot))
    tqs = task_queues(snap, config, cache)
    masked = site_masked(snap, given.get("Site"), config)
    res, refusal = normalise(
        given,
        masked,
        first_processor_tag=1 if rule(config, "dirac_processor_tags_from_one") else 2,
        ram_tags=not rule(config, "dirac_ram_not_tags"),
    )
    if refusal is not None:
        return _refused(given, res, refusal, tqs, config, seed)
    negative = lim.negative_conditions(_limiter(snap, cache), res.site or "", res.grid_ce, config)
    everyone = np.ones(len(tqs), dtype=bool)
    ctx = MatchContext(cache, given, config, everyone, tqs, res, masked, negative)
    verdicts, fails, unbracketed = _verdicts(ctx, len(tqs))
    # the funnel and first-failing skips from the same verdicts (each filter computed once above)
    fixed = [replace(f, fn=lambda _c, v=verdicts[f.name]: v, reads=None) for f in FILTERS]
    eligible, skips, funnel = apply_filters(tqs.names, everyone, fixed, ctx)
    drawn_from, probability, matched_row, job = _draw(tqs, eligible, config, seed, funnel)
    status = "matched" if matched_row is not None else "no_match"
    message = "" if matched_row is not None else "No match found (No TQ matches requirements)"
    notes = list(res.notes) + negative.notes + unbracketed
    return DiracMatch(
        given,
        res,
        status,
        message,
        tqs,
        fails,
        verdicts,
        eligible,
        drawn_from,
        probability,
        matched_row,
        job,
        funnel,
        skips,
        ctx.not_applied,
        notes,
        config,
        seed,
    )


def _refused(given: dict[str, Any], res: Any, refusal: str, tqs: TaskQueues, config: Config, seed: int) -> DiracMatch:
    """The answer to a pilot the matcher refuses before looking at any task queue (REFUSAL says why)."""
    n = len(tqs)
    zeros = np.zeros(n, dtype=bool)
    return DiracMatch(
        given,
        res,
        "refused",
        refusal,
        tqs,
        np.zeros((n, len(RULE_NAMES)), dtype=bool),
        {},
        zeros,
        zeros,
        np.zeros(n),
        None,
        None,
        [],
        SkipList(),
        {},
        list(res.notes),
        config,
        seed,
    )


def _limiter(snap: GridSnapshot, cache: GridCache) -> lim.LimiterTables:
    """The site's running limits, running counts and matching delays, read once per snapshot."""
    t = snap.tables
    return cache.get(
        "dirac_limiter",
        lambda: lim.LimiterTables.from_frames(
            t["dirac_running_limits"], t["dirac_running_counts"], t["dirac_matching_delays"]
        ),
    )


def _verdicts(ctx: MatchContext, n: int) -> tuple[dict[str, Any], np.ndarray, list[str]]:
    """Every rule's verdict over the N task queues, the matrix of rules each task queue fails, and notes."""
    verdicts = {f.name: f.run(ctx) for f in FILTERS}
    notes = _unbracketed(ctx, verdicts) if rule(ctx.config, "dirac_owner_groups_unbracketed") else []
    fails = np.zeros((n, len(RULE_NAMES)), dtype=bool)
    for j, name in enumerate(RULE_NAMES):
        v = verdicts[name]
        if v is not None:
            fails[:, j] = ~v.passed
    return verdicts, fails, notes


def _unbracketed(ctx: MatchContext, verdicts: dict[str, Any]) -> list[str]:
    """DIRAC 9.1.22 with an Owner and several OwnerGroups: the per-group conditions are joined with OR and the result
    ANDed with the other conditions without brackets, so 'c1 OR c2 AND rest' lets a task queue meeting any group's
    condition but the last (its group, and its owner unless the group has JobSharing) pass every other condition.
    Those task queues pass every rule but Empty (an empty one still yields no job); a note says so."""
    owner, groups = ctx.res.owner, ctx.res.owner_groups
    if not owner or len(groups) < 2:
        return []
    tq = ctx.tqs
    mine = (tq.owner == owner) | tq.why.job_sharing
    bypass = np.isin(tq.group, list(groups[:-1])) & mine
    if not bypass.any():
        return []
    for name, v in verdicts.items():
        if v is not None and name != "Empty":
            verdicts[name] = Verdict(v.passed | bypass, v.criteria, v.reasons, v.temporary)
    return [
        f"DIRAC 9.1.22: Owner with several OwnerGroups matches every task queue of {', '.join(groups[:-1])} "
        f"({owner}'s, or the group's with JobSharing) whatever its other requirements (unbracketed OR)"
    ]


def _draw(
    tqs: TaskQueues, eligible: np.ndarray, config: Config, seed: int, funnel: list[FunnelStep]
) -> tuple[np.ndarray, np.ndarray, int | None, JobChoice | None]:
    """The task queues drawn from (the longest CPUTime first with DIRAC_CPU_ORDER), each one's probability, the task
    queue drawn and the job chosen in it (None when none is eligible); the steps are added to FUNNEL."""
    drawn_from = eligible.copy()
    if config["DIRAC_CPU_ORDER"] and eligible.any():
        drawn_from &= tqs.cpu_time == tqs.cpu_time[eligible].max()
        funnel.append(FunnelStep(CPU_ORDER_STEP, int(eligible.sum()), int(drawn_from.sum())))
    probability = np.zeros(len(tqs))
    rows = np.flatnonzero(drawn_from)
    matched_row: int | None = None
    job: JobChoice | None = None
    rng = np.random.default_rng(seed)
    if len(rows):
        probability[rows] = first_probabilities(tqs.priority[rows])
        matched_row = int(rows[draw_first(tqs.priority[rows], rng)])
        sl = tqs.jobs_of(matched_row)
        weight = tqs.job_real[sl] if config["DIRAC_JOB_WEIGHT"] == "RealPriority" else tqs.job_priority[sl]
        job = choose_job(
            tqs.job_id[sl], tqs.job_priority[sl], weight.astype(np.float64), int(config["DIRAC_JOBS_PER_TRY"]), rng
        )
    funnel.append(FunnelStep(SELECTION_STEP, len(rows), 1 if len(rows) else 0))
    return drawn_from, probability, matched_row, job
