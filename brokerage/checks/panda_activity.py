"""PanDA 1.0.4's inactive and transferring checks of the production job broker (switches ``inactive_as_jedi``,
``transferring_as_jedi``), wrappers of the seed's checks in checks/pilot.py."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from brokerage.checks.pilot import inactive_verdict
from brokerage.framework import Filter, Verdict
from brokerage.model import views
from brokerage.model.profiles import rule

JEDI_INACTIVE_HOURS = 2  # AtlasProdJobBroker inactiveTimeLimit (hard-coded)
JEDI_HIGH_PRIO = 800  # AtlasProdJobBroker: currentPriority >= 800 avoids inactive queues
PRODUCTION_TYPES = ("production", "unified")


def f_inactive_jedi(ctx: Any) -> Verdict | None:
    """JEDI's slowness/inactive check: for priority >= 800, scout or merge jobs of a task not pre-assigned, a queue
    whose laststart is older than 2 h with activated + starting jobs (every share) > 0 is a temporary problem."""
    if ctx.preassigned or not (ctx.priority >= JEDI_HIGH_PRIO or ctx.scout or ctx.merge):
        return None
    every_share = views.job_counts(ctx.cache, None)
    waiting = every_share["activated"] + every_share["starting"]
    return inactive_verdict(ctx.qa.laststart_hours, waiting, JEDI_INACTIVE_HOURS, "activated or starting")


def inactive(base: Filter) -> Filter:
    """The inactive check under ``inactive_as_jedi`` (JEDI's rule), else BASE unchanged."""

    def fn(ctx: Any) -> Verdict | None:
        return f_inactive_jedi(ctx) if rule(ctx.config, "inactive_as_jedi") else base.run(ctx)

    return replace(base, fn=fn, reads=None)


def _first_nucleus_queue(ctx: Any, nucleus_mask: np.ndarray) -> int:
    """Index of the nucleus' first production or unified queue in snapshot order (SiteMapper's allPandaSites[0]),
    -1 when it has none."""
    prod = np.isin(ctx.qa["type"], PRODUCTION_TYPES)
    hit = np.flatnonzero(nucleus_mask & prod)
    return int(hit[0]) if len(hit) else -1


def transfer_exempt(ctx: Any) -> np.ndarray:
    """Queues JEDI's transferring check leaves alone: the nucleus' own queues (every nucleus' in hint mode), queues
    whose default output endpoint is at the nucleus or that have none (no storage mapping), and online queues whose
    default output endpoint the nucleus' first production queue reads (getSitesShareDDM with output_share).

    Usage: ``transfer_exempt(ctx)[i]``
    """
    qa, ep = ctx.qa, ctx.ep
    out = qa.out_endpoint
    has_out = out >= 0
    out_site = np.where(has_out, ep["site_name"][np.maximum(out, 0)] if len(ep.name) else "", "")
    in_nucleus = qa.site_is_nucleus if ctx.nucleus is None else ctx.at_nucleus
    exempt = ~has_out | in_nucleus
    if ctx.nucleus is not None:
        exempt = exempt | (out_site == ctx.nucleus)
    first = _first_nucleus_queue(ctx, in_nucleus)
    if first >= 0:
        reads = set(qa.rel_endpoint[qa.rel_queue == first].tolist())
        shares = np.array([o in reads for o in out.tolist()], dtype=bool) & has_out
        exempt = exempt | (shares & (qa["status"] == "online"))
    return exempt


def transferring(base: Filter) -> Filter:
    """The transferring check under ``transferring_as_jedi``: BASE's verdict, with the exempt queues passing."""

    def fn(ctx: Any) -> Verdict | None:
        v = base.run(ctx)
        if v is None or not rule(ctx.config, "transferring_as_jedi"):
            return v
        return Verdict(v.passed | transfer_exempt(ctx), v.criteria, v.reasons, v.temporary)

    return replace(base, fn=fn, reads=None)


def f_diskio_jedi(ctx: Any) -> Verdict | None:
    """JEDI's diskIO check: a multi-core task's diskIO floor-divided by the (unified) queue's coreCount; skip queues
    whose average diskIO is over their limit (maxdiskio, else MAX_DISKIO_DEFAULT) when that task diskIO is too."""
    task_io = ctx.task.get("diskio")
    if task_io is None or task_io != task_io or not task_io:
        return None
    qa = views.queue_arrays(ctx.cache)  # JEDI reads the unified queue, not the pseudo queue
    maxio = qa["maxdiskio"].astype(float)
    limit = np.where(maxio > 0, maxio, float(ctx.config["MAX_DISKIO_DEFAULT"] or 10**10))
    usage = np.nan_to_num(qa["diskio_avg"].astype(float))
    cores = np.nan_to_num(qa["corecount"].astype(float))
    per = np.full(ctx.n, float(task_io))
    if int(ctx.task.get("corecount") or 0) not in (0, 1):
        per = np.where(cores > 0, np.floor(float(task_io) / np.where(cores > 0, cores, 1.0)), per)
    bad = (usage > 0) & (usage > limit) & (per > limit)
    return Verdict(
        ~bad,
        "-diskIO",
        lambda idx: [f"diskIO overload: {usage[i]:g} > limit {limit[i]:g} kB/s, task diskIO {per[i]:g}" for i in idx],
        temporary=True,
    )


def diskio(base: Filter) -> Filter:
    """The diskIO check under ``diskio_per_core`` (JEDI's rule), else BASE unchanged."""

    def fn(ctx: Any) -> Verdict | None:
        return f_diskio_jedi(ctx) if rule(ctx.config, "diskio_per_core") else base.run(ctx)

    return replace(base, fn=fn, reads=None)


ES_UCORE = "EventService on a single-core pseudo queue of a unified queue (UCORE/SCORE)"


def eventservice(base: Filter) -> Filter:
    """The event service check with JEDI's -es_ucore (switch ``es_ucore_check``): an event service task that passes
    BASE still skips a unified queue seen as a single-core pseudo queue."""

    def fn(ctx: Any) -> Verdict | None:
        v = base.run(ctx)
        if v is None or not rule(ctx.config, "es_ucore_check") or not ctx.task.get("eventservice") or ctx.view is None:
            return v
        unified = np.asarray(ctx.qa["capability"]) == "ucore"
        extra = v.passed & unified & (ctx.qa["corecount"].astype(float) == 1)
        if not extra.any():
            return v
        codes = np.where(extra, "-es_ucore", v.criteria).astype(object)
        reasons = v.reasons

        def why(idx: np.ndarray) -> list[str]:
            own = [reasons] * len(idx) if isinstance(reasons, str) else list(reasons(idx))
            return [ES_UCORE if codes[i] == "-es_ucore" else r for i, r in zip(idx.tolist(), own, strict=True)]

        return Verdict(v.passed & ~extra, codes, why, v.temporary)

    return replace(base, fn=fn, reads=None, codes=(*base.codes, "-es_ucore"))
