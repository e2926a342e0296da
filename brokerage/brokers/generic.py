"""Generic job brokerage for tasks of VOs other than ATLAS, as PanDA's GenJobBroker does it (wlcg:any)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from brokerage.checks.context import queue_fields
from brokerage.checks.generic_rules import FILTERS, GenContext
from brokerage.framework import BEST_CANDIDATES, Reads, Step, apply_filters, rank_and_cut
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.explain import Candidate, Decision, FunnelStep, SkipList
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot

BROKER = "generic"
MAX_SITES = 5  # GenJobBroker's maxNumSites
STEPS: tuple[Step, ...] = (
    Step("base", Reads(facts=("counts",)), "weight"),
    Step(BEST_CANDIDATES),
    Step("pending", Reads(config=("JOB_PENDING_MINUTES",))),
)
"""What the broker reads besides its filters: the weight and the cut (GenJobBroker reads no gdpconfig key)."""


def make_context(task: dict[str, Any], config: Config, cache: GridCache) -> GenContext:
    """The generic broker's context of TASK: every queue, job counts of every share (workQueue None in JEDI) of the
    task's VO (getJobStatisticsByGlobalShare(taskSpec.vo)).

    Usage: ``ctx = make_context(views.task_row(cache, 1), Config(), cache)``
    """
    avail = views.available_at_queues(cache, int(task["jeditaskid"]))
    fields = queue_fields(cache, task, config, None, avail)
    fields["qa"] = views.queue_arrays(cache)  # GenJobBroker reads the queues as they are (no pseudo queues)
    fields["view"] = None
    ctx = GenContext(**fields, at_nucleus=np.zeros(fields["qa"].n, dtype=bool), preassigned=bool(task.get("site")))
    return ctx


def candidates(ctx: GenContext) -> tuple[np.ndarray, str]:
    """The starting queues (mask) and a message: the pre-assigned queue (exact name, else a regular expression over
    the cloud's queues), else every queue of the task's cloud; an unknown or unset cloud gives every queue (WORLD).

    Usage: ``mask, message = candidates(ctx)``
    """
    qa, task = ctx.qa, ctx.task
    cloud = task.get("cloud") or ""
    in_cloud = qa["cloud"] == cloud
    if not in_cloud.any():
        in_cloud = np.ones(qa.n, dtype=bool)  # SiteMapper.getCloud: all sites (WORLD) for an unknown cloud
    site = task.get("site")
    if not site:
        return in_cloud, ""
    if site in qa.index:
        mask = np.zeros(qa.n, dtype=bool)
        mask[qa.index[site]] = True
        return mask, ""
    try:
        pattern = re.compile(str(site))
    except re.error:
        return np.zeros(qa.n, dtype=bool), f"unknown site={site}"
    mask = in_cloud & np.array([pattern.search(str(n)) is not None for n in qa.name], dtype=bool)
    return mask, "" if mask.any() else f"unknown site={site}"


def weights(ctx: GenContext) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(weight, nRunning, nActivated, nAssigned) per queue: (nRunning+1) / (nActivated+nAssigned+1) / (nAssigned+1),
    where nAssigned counts the defined jobs (GenJobBroker's getNumJobs(..., 'defined')), all of the task's VO."""
    c = ctx.counts
    nrun, nact, nass = c["running"], c["activated"], c["defined"]
    return (nrun + 1.0) / (nact + nass + 1.0) / (nass + 1.0), nrun, nact, nass


def broker(
    snap: GridSnapshot, jeditaskid: int, config: Config | None = None, *, cache: GridCache | None = None,
    task_fields: Mapping[str, Any] | None = None,
) -> Decision:  # fmt: skip
    """Run the generic job brokerage for one task and explain every queue's fate.

    Usage: ``broker(snap, 77, Config()).ranked_names``
    """
    cache = cache_for(snap, cache)
    task = {**views.task_row(cache, jeditaskid), **(task_fields or {})}
    return run(make_context(task, config or Config(), cache))


def broker_many(
    snap: GridSnapshot, task_ids: Sequence[int], config: Config | None = None, *, cache: GridCache | None = None
) -> list[Decision]:
    """``broker`` for many tasks on one snapshot and config.

    Usage: ``[d.status for d in broker_many(snap, [77, 78])]``
    """
    cache = cache_for(snap, cache)
    return [broker(snap, int(t), config, cache=cache) for t in task_ids]


def run(ctx: GenContext) -> Decision:
    """The checks in GenJobBroker's order, then the best MAX_SITES queues by weight (ties by name)."""
    cfg, tid = ctx.config, int(ctx.task["jeditaskid"])
    alive, message = candidates(ctx)
    funnel = [FunnelStep("initial candidates", ctx.n, int(alive.sum()))]
    skips = SkipList()
    alive, skips, funnel = apply_filters(ctx.qa.name, alive, FILTERS, ctx, skips, funnel)
    idx = np.flatnonzero(alive)
    if len(idx) == 0:
        return Decision(BROKER, tid, "pending", [], skips, funnel, cfg.changed(),
                        pending_minutes=int(cfg["JOB_PENDING_MINUTES"]), message=message or "no candidates")  # fmt: skip
    weight, nrun, nact, nass = weights(ctx)
    keep, _ = rank_and_cut(ctx.qa.name, idx, weight[idx], MAX_SITES, skips, funnel)
    chosen = idx[keep]
    found = [
        Candidate(str(ctx.qa.name[i]), rank, float(weight[i]), {"base": float(weight[i])},
                  {"nRunning": float(nrun[i]), "nActivated": float(nact[i]), "nAssigned": float(nass[i])})
        for rank, i in enumerate(chosen.tolist(), start=1)
    ]  # fmt: skip
    return Decision(BROKER, tid, "ok", found, skips, funnel, cfg.changed(), message=message)
