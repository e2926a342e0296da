"""Scratch disk: maxwdir divided by the queue's coreCount must exceed the job's expected disk usage (-disk)."""

from __future__ import annotations

import numpy as np

from brokerage.checks.context import QueueContext
from brokerage.framework import Derived, Reads, Verdict
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.explain import fmt_many


def direct_access(cache: GridCache) -> np.ndarray:
    """Per queue: can its jobs read input by direct access over LAN (built once per snapshot, read-only).

    Usage: ``direct_access(cache)[i]``
    """
    return cache.get("direct_access", lambda: views.frozen(views.queue_arrays(cache)["direct_access_lan"].astype(bool)))


def _scratch_per_core(ctx: QueueContext) -> tuple[np.ndarray, np.ndarray]:
    """Per queue: no scratch limit (maxwdir <= 0), and maxwdir / coreCount in MB (of the pseudo queue)."""
    maxwdir = ctx.qa["maxwdir"].astype(float, copy=False)
    cc = np.maximum(ctx.qa["corecount"].astype(float, copy=False), 1.0)
    return views.frozen(maxwdir <= 0), views.frozen(maxwdir / cc)


SCRATCH_PER_CORE = Derived("scratch per core", Reads(), _scratch_per_core)


def scratch_verdict(ctx: QueueContext, need: np.ndarray) -> Verdict:
    """Queues whose maxwdir / coreCount (MB) is not above NEED (MB per queue) fail; maxwdir <= 0 is unlimited.

    Usage: ``scratch_verdict(ctx, np.full(ctx.n, 2048.0)).passed``
    """
    ctx.derived["scratch"] = need
    unlimited, per_core = SCRATCH_PER_CORE(ctx)
    ok = unlimited | (per_core > need)
    return Verdict(
        ok,
        "-disk",
        lambda idx: [
            f"small scratch disk: maxwdir/coreCount={pc} MB <= expected {nd} MB"
            for pc, nd in zip(fmt_many(per_core[idx]), fmt_many(need[idx]), strict=True)
        ],
    )
