"""The DIRAC matcher: a pilot's resource description against every task queue, every failing rule, the draw."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from brokerage.cache import GridCache, cache_for
from brokerage.dirac import limits as lim
from brokerage.dirac.pilot import Resource, is_any, normalise, parse_pilot
from brokerage.dirac.selection import JobChoice, choose_job, draw_first, first_probabilities
from brokerage.dirac.taskqueues import TaskQueues, build, build_key
from brokerage.explain import Candidate, Decision, FunnelStep, SkipList
from brokerage.framework import Filter, Reads, Verdict, apply_filters
from brokerage.gdpconfig import Config
from brokerage.snapshot import GridSnapshot

MASK_OK = ("Active", "Degraded")  # Matcher._checkMask: other RSS statuses take only Test jobs
TEST_JOB_TYPE = "Test"
CPU_ORDER_STEP = "CPUTime order"
SELECTION_STEP = "selection"


@dataclass
class MatchContext:
    """What the filters read: the task queues, the normalised pilot and the site's negative condition."""

    DEPENDS: ClassVar[dict[str, Reads]] = {}
    cache: GridCache
    task: dict[str, Any]
    config: Config
    alive: np.ndarray
    tqs: TaskQueues
    res: Resource
    masked: bool
    negative: lim.Negative
    not_applied: dict[str, str] = field(default_factory=dict)
    _hits: tuple[np.ndarray, list[tuple[str, list[lim.Hit], np.ndarray]]] | None = None

    def hits(self) -> tuple[np.ndarray, list[tuple[str, list[lim.Hit], np.ndarray]]]:
        """The negative condition over the task queues (computed once)."""
        if self._hits is None:
            self._hits = lim.hit_matrix(self.negative, self.tqs)
        return self._hits


def _listed(values: list[str]) -> str:
    return "[" + ", ".join(values) + "]"


def _owner_group(ctx: MatchContext) -> Verdict | None:
    groups = ctx.res.owner_groups
    if not groups:
        ctx.not_applied["OwnerGroup"] = "the pilot sent no OwnerGroup"
        return None
    tq = ctx.tqs
    passed = np.isin(tq.group_names, list(groups))[tq.group_code]
    shown = ", ".join(groups)
    return Verdict(
        passed,
        "OwnerGroup",
        lambda idx: [f"OwnerGroup {g} not accepted by the resource ({shown})" for g in tq.group[idx].tolist()],
    )


def _owner(ctx: MatchContext) -> Verdict | None:
    owner, groups = ctx.res.owner, ctx.res.owner_groups
    if not owner:
        ctx.not_applied["Owner"] = "the pilot sent no Owner"
        return None
    tq = ctx.tqs
    other = tq.owner_code != (int(np.flatnonzero(tq.owner_names == owner)[0]) if owner in tq.owner_names else -1)
    if groups:
        # seed: "Owner DN must match if the Owner Group does not have JOB_SHARING property"
        fails = other & ~tq.why.job_sharing

        def text(idx: np.ndarray) -> list[str]:
            return [
                f"Owner {u} ≠ {owner} (group {g} has no JobSharing)"
                for u, g in zip(tq.owner[idx].tolist(), tq.group[idx].tolist(), strict=True)
            ]
    else:
        fails = other

        def text(idx: np.ndarray) -> list[str]:
            return [f"Owner {u} ≠ {owner}" for u in tq.owner[idx].tolist()]

    return Verdict(~fails, "Owner", text)


def _cpu_time(ctx: MatchContext) -> Verdict | None:
    tq, cpu = ctx.tqs, ctx.res.cpu_time
    return Verdict(
        tq.cpu_time <= cpu,
        "CPUTime",
        lambda idx: [f"CPUTime bucket {b} s > resource CPUTime {cpu} s" for b in tq.cpu_time[idx].tolist()],
    )


def _multi(rule: str, field_name: str, attr: str) -> Any:
    """Filter fn of a "job lists values: the resource's value must be one of them" rule (C3, C4, C5, C6)."""

    def fn(ctx: MatchContext) -> Verdict | None:
        value = getattr(ctx.res, attr)
        if not value:
            ctx.not_applied[rule] = f"the pilot sent no {rule}"
            return None
        if is_any(value):
            ctx.not_applied[rule] = f"skipped (any): {rule}={value}"
            return None
        f = ctx.tqs.fields[field_name]
        passed = (f.count == 0) | f.has(value)
        suffix = " (site not in the mask: only Test jobs)" if rule == "JobType" and ctx.masked else ""
        what = "job sites" if rule == "Site" else "the job's list"

        def text(idx: np.ndarray) -> list[str]:
            return [f"{rule} {value} not in {what} {_listed(f.values(i))}{suffix}" for i in idx.tolist()]

        return Verdict(passed, rule, text)

    return fn


def _banned_site(ctx: MatchContext) -> Verdict | None:
    site = ctx.res.site
    if not site or is_any(site):
        ctx.not_applied["BannedSite"] = f"skipped (any): Site={site}"
        return None
    passed = ~ctx.tqs.fields["BannedSites"].has(site)
    return Verdict(passed, "BannedSite", f"Site {site} banned by the job")


def _tag(ctx: MatchContext) -> Verdict | None:
    tags = ctx.res.tags or ()
    if any(is_any(t) for t in tags):
        ctx.not_applied["Tag"] = "skipped (any): the pilot offers any tag"
        return None
    f = ctx.tqs.fields["Tags"]
    cols = [f.index[t] for t in set(tags) if t in f.index]
    offered = f.member[:, cols].sum(axis=1) if cols else np.zeros(len(f.count), dtype=np.int64)
    passed = offered == f.count  # every tag of the task queue is offered by the resource
    have = set(tags)

    def text(idx: np.ndarray) -> list[str]:
        return [f"missing resource tags {_listed([t for t in f.values(i) if t not in have])}" for i in idx.tolist()]

    return Verdict(passed, "Tag", text)


def _required_tag(ctx: MatchContext) -> Verdict | None:
    req = ctx.res.required_tags
    if not req or any(is_any(t) for t in req):
        ctx.not_applied["RequiredTag"] = "the pilot requires no tag" if not req else "skipped (any): RequiredTags"
        return None
    f = ctx.tqs.fields["Tags"]
    n = len(f.count)
    passed = np.ones(n, dtype=bool)
    for t in set(req):
        passed &= f.has(t)

    def text(idx: np.ndarray) -> list[str]:
        return [f"resource requires tags {_listed([t for t in req if t not in f.values(i)])}" for i in idx.tolist()]

    return Verdict(passed, "RequiredTag", text)


def _negative(source: str) -> Any:
    """Filter fn of the Limiter's negative condition, for the task queues it excludes through SOURCE's values."""

    def fn(ctx: MatchContext) -> Verdict | None:
        if not any(h.source == source for hs in ctx.negative.hits.values() for h in hs):
            ctx.not_applied[source] = (
                f"no {'running limit reached' if source == lim.RUNNING_LIMIT else 'matching delay running'} "
                f"at {ctx.res.site}"
            )
            return None
        excluded, per_attr = ctx.hits()
        through = np.zeros(len(excluded), dtype=bool)
        for _, hits, m in per_attr:
            src = np.array([h.source == source for h in hits])
            through |= (m & src).any(axis=1)

        def text(idx: np.ndarray) -> list[str]:
            return [
                " and ".join(h.text for _, hits, m in per_attr for j, h in enumerate(hits) if m[i, j])
                for i in idx.tolist()
            ]

        return Verdict(~(excluded & through), source, text, temporary=True)

    return fn


def _empty(ctx: MatchContext) -> Verdict | None:
    return Verdict(ctx.tqs.njobs > 0, "Empty", "task queue has no waiting jobs", temporary=True)


# DIRAC's match conditions C1..C10 in the order TaskQueueDB generates them, then the non-empty requirement
FILTERS: tuple[Filter, ...] = (
    Filter("OwnerGroup", ("OwnerGroup",), "Owner Group must match", _owner_group),
    Filter("Owner", ("Owner",), "Owner must match if the Owner Group does not have JOB_SHARING", _owner),
    Filter(
        "CPUTime", ("CPUTime",), "CPU time must be lower or equal than the one presented by the resource", _cpu_time
    ),
    Filter("GridCE", ("GridCE",), "If Job requires a Grid CE, it must match", _multi("GridCE", "GridCEs", "grid_ce")),
    Filter("Site", ("Site",), "Site must be accepted by the job", _multi("Site", "Sites", "site")),
    Filter("BannedSite", ("BannedSite",), "Site cannot be in the Banned sites list of the job", _banned_site),
    Filter(
        "Platform",
        ("Platform",),
        "Platform must match if required by the job",
        _multi("Platform", "Platforms", "platform"),
    ),
    Filter(
        "JobType",
        ("JobType",),
        "JobType must be accepted by the job (code; the seed's Pilot Types)",
        _multi("JobType", "JobTypes", "job_type"),
    ),
    Filter("Tag", ("Tag",), "every tag of the task queue is offered by the resource (code)", _tag),
    Filter(
        "RequiredTag", ("RequiredTag",), "the task queue carries every tag the resource requires (code)", _required_tag
    ),
    Filter(
        "RunningLimit",
        ("RunningLimit",),
        "Limiter: running jobs at the site below the limit (code)",
        _negative(lim.RUNNING_LIMIT),
        temporary=True,
    ),
    Filter(
        "MatchingDelay",
        ("MatchingDelay",),
        "Limiter: matching delay of the site elapsed (code)",
        _negative(lim.MATCHING_DELAY),
        temporary=True,
    ),
    Filter("Empty", ("Empty",), "the task queue has waiting jobs", _empty, temporary=True),
)
RULES: tuple[str, ...] = tuple(f.name for f in FILTERS)


@dataclass
class DiracMatch:
    """One pilot matched against every task queue: per-queue verdicts and reasons, probabilities, the draw.

    ``fails[i, j]`` says task queue row i fails rule ``RULES[j]``; sentences are built only by ``to_dict``.
    Usage: ``m = match(snap, "Site=LCG.CERN.cern,CPUTime=40000"); m.to_dict()["matched"]``
    """

    pilot: dict[str, Any]
    resource: Resource
    status: str  # matched, no_match, refused
    message: str
    tqs: TaskQueues
    fails: np.ndarray
    verdicts: dict[str, Verdict | None]
    eligible: np.ndarray
    drawn_from: np.ndarray
    probability: np.ndarray
    matched_row: int | None
    job: JobChoice | None
    funnel: list[FunnelStep]
    skips: SkipList
    not_applied: dict[str, str]
    notes: list[str]
    config: Config
    seed: int

    def verdict_of(self, row: int) -> str:
        """matched, eligible, outranked, excluded or refused."""
        if self.status == "refused":
            return "refused"
        if row == self.matched_row:
            return "matched"
        if self.drawn_from[row]:
            return "eligible"
        return "outranked" if self.eligible[row] else "excluded"

    def reasons(self) -> list[list[dict[str, str]]]:
        """Every failing rule of every task queue row, with its sentence."""
        out: list[list[dict[str, str]]] = [[] for _ in range(len(self.tqs))]
        for j, rule in enumerate(RULES):
            idx = np.flatnonzero(self.fails[:, j])
            v = self.verdicts.get(rule)
            if v is None or not len(idx):
                continue
            for i, text in zip(idx.tolist(), v.texts(idx), strict=True):
                out[i].append({"rule": rule, "text": text})
        return out

    def sentence(self, row: int, reasons: list[dict[str, str]]) -> str:
        """One sentence on task queue ROW."""
        verdict = self.verdict_of(row)
        p = float(self.probability[row])
        if verdict == "refused":
            return f"request refused: {self.message}"
        if verdict == "matched":
            return f"matched (chance {p:.4g}); job {self.job.job if self.job else '?'} taken"
        if verdict == "eligible":
            return f"could be matched with probability {p:.4g}"
        if verdict == "outranked":
            top = int(self.tqs.cpu_time[self.drawn_from].max()) if self.drawn_from.any() else 0
            return f"passes every rule, but the seed takes the highest CPUTime bucket first ({top} s)"
        return "; ".join(r["text"] for r in reasons)

    def to_dict(self) -> dict[str, Any]:
        """The JSON printed by ``brokerage dirac match --json``."""
        tq = self.tqs
        reasons = self.reasons() if self.status != "refused" else [[] for _ in range(len(tq))]
        rows = []
        for i in range(len(tq)):
            prio = float(tq.priority[i])
            rows.append(
                {
                    "id": int(tq.tq_id[i]),
                    "verdict": self.verdict_of(i),
                    "reasons": reasons[i],
                    "sentence": self.sentence(i, reasons[i]),
                    "priority": None if prio != prio else prio,
                    "probability": float(self.probability[i]),
                    "jobs": int(tq.njobs[i]),
                    "CPUTime": int(tq.cpu_time[i]),
                    "Owner": str(tq.owner[i]),
                    "OwnerGroup": str(tq.group[i]),
                }
            )
        matched = None
        if self.matched_row is not None and self.job is not None:
            matched = {
                "taskqueue": int(tq.tq_id[self.matched_row]),
                "job": self.job.job,
                "probability": float(self.probability[self.matched_row]),
                "job_priority": self.job.job_priority,
                "job_probability": self.job.job_probability(self.job.job),
                "priorities": self.job.priorities,
                "candidates": {str(k): v for k, v in self.job.candidates.items()},
            }
        return {
            "pilot": self.pilot,
            "resource": self.resource.to_dict(),
            "status": self.status,
            "message": self.message,
            "seed": self.seed,
            "matched": matched,
            "taskqueues": rows,
            "funnel": [f.to_dict() for f in self.funnel],
            "not_applied": self.not_applied,
            "notes": self.notes,
            "config": {k: v for k, v in self.config.changed().items() if k.startswith("DIRAC_")},
        }

    def as_decision(self) -> Decision:
        """The match in the framework's Decision form (candidates = task queues that could be drawn)."""
        rows = np.flatnonzero(self.drawn_from)
        order = rows[np.lexsort((self.tqs.tq_id[rows], -self.probability[rows]))]
        cands = [
            Candidate(
                str(int(self.tqs.tq_id[i])),
                k + 1,
                float(self.tqs.priority[i]),
                {"priority": float(self.tqs.priority[i]), "probability": float(self.probability[i])},
            )
            for k, i in enumerate(order.tolist())
        ]
        return Decision(
            "dirac",
            0,
            "ok" if self.status == "matched" else "pending",
            cands,
            self.skips,
            self.funnel,
            self.config.changed(),
            label="taskqueue",
            message=self.message,
        )


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
    n = len(tqs)
    masked = site_masked(snap, given.get("Site"), config)
    res, refusal = normalise(given, masked)
    zeros = np.zeros(n, dtype=bool)
    if refusal is not None:
        return DiracMatch(
            given,
            res,
            "refused",
            refusal,
            tqs,
            np.zeros((n, len(RULES)), dtype=bool),
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
    t = snap.tables
    negative = lim.negative_conditions(
        t["dirac_running_limits"],
        t["dirac_running_counts"],
        t["dirac_matching_delays"],
        res.site or "",
        res.grid_ce,
        config,
    )
    everyone = np.ones(n, dtype=bool)
    ctx = MatchContext(cache, given, config, everyone, tqs, res, masked, negative)
    verdicts = {f.name: f.run(ctx) for f in FILTERS}
    fails = np.zeros((n, len(RULES)), dtype=bool)
    for j, rule in enumerate(RULES):
        v = verdicts[rule]
        if v is not None:
            fails[:, j] = ~v.passed
    # the funnel and first-failing skips from the same verdicts (each filter computed once above)
    fixed = [replace(f, fn=lambda _c, v=verdicts[f.name]: v, reads=None) for f in FILTERS]
    ids = tqs.tq_id.astype(str).astype(object)
    eligible, skips, funnel = apply_filters(ids, everyone, fixed, ctx)
    drawn_from = eligible.copy()
    if config["DIRAC_CPU_ORDER"] and eligible.any():
        drawn_from &= tqs.cpu_time == tqs.cpu_time[eligible].max()
        funnel.append(FunnelStep(CPU_ORDER_STEP, int(eligible.sum()), int(drawn_from.sum())))
    probability = np.zeros(n)
    rows = np.flatnonzero(drawn_from)
    matched_row = job = None
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
    status = "matched" if matched_row is not None else "no_match"
    message = "" if matched_row is not None else "No match found (No TQ matches requirements)"
    notes = list(res.notes) + negative.notes
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
