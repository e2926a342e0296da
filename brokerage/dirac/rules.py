"""The matcher's rules: DIRAC's match conditions as framework Filters over the task-queue table, and their context."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from brokerage.dirac import limits as lim
from brokerage.dirac.pilot import Resource, is_any
from brokerage.dirac.taskqueues import TaskQueues
from brokerage.framework import Filter, Reads, Verdict
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config


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
RULE_NAMES: tuple[str, ...] = tuple(f.name for f in FILTERS)
