"""PanDA 1.0.4's pseudo queues in the production job broker (switch ``unified_any_pseudo``): a unified queue is
brokered as every pseudo queue its cores allow and stays while any of them passes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from brokerage.checks.context import ProdContext
from brokerage.checks.cores import JOB_CORES
from brokerage.framework import TEMPORARY_CHECK, Filter, apply_filters
from brokerage.model import views
from brokerage.model.explain import FunnelStep, Skip, SkipList
from brokerage.model.profiles import rule
from brokerage.model.pseudoqueues import RESOURCE_TYPES, UNIFIED_CAPABILITY


def _reach(
    names: np.ndarray, start: np.ndarray, alive: np.ndarray, skips: dict[str, Skip], stage: dict[str, int]
) -> np.ndarray:
    """How far each queue of START got: len(stage) + 1 when it passed, else its removing stage's index (-1: never)."""
    out = np.full(len(names), -1)
    for i in np.flatnonzero(start).tolist():
        s = skips.get(str(names[i]))
        out[i] = len(stage) + 1 if alive[i] else (stage.get(s.stage, -1) if s is not None else -1)
    return out


def any_pseudo_pass(
    ctx: ProdContext, start: np.ndarray, filters: Sequence[Filter], skips: SkipList, funnel: list[FunnelStep],
    defer: bool,
) -> tuple[np.ndarray, SkipList, list[FunnelStep], np.ndarray]:  # fmt: skip
    """Run FILTERS over START as the task's own view and, for unified queues, as each other pseudo queue (one per
    resource type whose mincore the queue's cores reach). A unified queue passes when any view passes; when all fail
    its skip is the view's that got furthest (the own view on ties): JEDI names a unified queue at the check that
    removes its last pseudo queue. The last array counts, per queue, the views that passed (JEDI's candidates: a
    unified queue is one per passing pseudo queue). Usage:
    ``alive, skips, funnel, passed = any_pseudo_pass(ctx, alive, F, skips, [], True)``
    """
    names = ctx.qa.name
    base = views.queue_arrays(ctx.cache)
    unified = np.asarray(base["capability"]) == UNIFIED_CAPABILITY
    if ctx.view is None or not unified.any() or not rule(ctx.config, "unified_any_pseudo"):
        alive, skips, funnel = apply_filters(names, start, filters, ctx, skips, funnel, defer)
        return alive, skips, funnel, alive.astype(int)
    n_before = len(skips)
    own_alive, own_skips, funnel = apply_filters(names, start, filters, ctx, skips, funnel, defer)
    stage = {f.name: i for i, f in enumerate(filters)} | {TEMPORARY_CHECK: len(filters)}
    mine = {s.candidate: s for s in list(own_skips)[n_before:]}
    reach = _reach(names, start, own_alive, mine, stage)
    best_alive = own_alive.copy()
    passed = own_alive.astype(int)
    best: dict[str, Skip | None] = {}
    cores = np.maximum(np.nan_to_num(base["corecount"].astype(float)), 1.0)
    for rt in RESOURCE_TYPES.values():
        begin = start & unified & (cores >= rt.mincore)
        if rt.name == ctx.view or not begin.any():
            continue
        vctx = replace(ctx, qa=views.pseudo_queue_arrays(ctx.cache, rt.name), view=rt.name, derived={})
        vctx.job_cores = JOB_CORES(vctx)
        v_alive, v_skips, _ = apply_filters(names, begin, filters, vctx, SkipList(), [], defer)
        by_name = {s.candidate: s for s in v_skips}
        v_reach = _reach(names, begin, v_alive, by_name, stage)
        for i in np.flatnonzero(v_reach > reach).tolist():
            reach[i] = v_reach[i]
            name = str(names[i])
            best[name] = None if v_alive[i] else by_name[name]
        best_alive |= v_alive
        passed += v_alive
    if not best:
        return own_alive, own_skips, funnel, passed
    kept = [s for s in own_skips if s.candidate not in best]
    kept += [s for s in best.values() if s is not None]
    return best_alive, SkipList(kept), funnel, passed
