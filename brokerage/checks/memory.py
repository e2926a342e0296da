"""Memory: the job's expected memory must lie within the queue's [minrss, maxrss] (-lowmemory, -highmemory)."""

from __future__ import annotations

import numpy as np

from brokerage.checks.context import QueueContext
from brokerage.checks.limits import within_limits
from brokerage.framework import Filter, Reads, Verdict


def expected_memory(ctx: QueueContext) -> np.ndarray:
    """(baseRamCount + ramCount x cores) x MEMORY_COMPENSATION for MBPerCore, (baseRamCount + ramCount) x it for MB.

    Usage: ``expected_memory(ctx)[i]  # MB at queue i``
    """
    t = ctx.task
    ram = float(t.get("ramcount") or 0)
    base = float(t.get("baseramcount") or 0)
    comp = float(ctx.config["MEMORY_COMPENSATION"])
    if str(t.get("ramunit") or "").startswith("MBPerCore"):
        return (base + ram * ctx.job_cores) * comp
    return np.full(ctx.n, (base + ram) * comp)


def f_memory(ctx: QueueContext) -> Verdict:
    """(baseRamCount + ramCount x coreCount) x 0.9 must lie within the queue's [minrss, maxrss]."""
    mem = ctx.derived["memory"] = expected_memory(ctx)
    return within_limits(
        mem,
        ctx.qa,
        ("minrss", "maxrss"),
        ("-lowmemory", lambda m, hi: f"expected memory {m} MB > maxrss={hi} MB"),
        ("-highmemory", lambda m, lo: f"expected memory {m} MB < minrss={lo} MB"),
    )


MEMORY = Filter(
    "memory check",
    ("-lowmemory", "-highmemory"),
    "(baseRamCount + ramCount x coreCount) x 0.9 (MBPerCore; without coreCount for MB) within [minrss, maxrss]",
    f_memory,
    uses=Reads(config=("MEMORY_COMPENSATION",)),
)
