"""Memory: the job's expected memory must lie within the queue's [minrss, maxrss] (-lowmemory, -highmemory)."""

from __future__ import annotations

import numpy as np

from brokerage.checks.context import QueueContext
from brokerage.explain import fmt_many
from brokerage.framework import Filter, Verdict


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
    mem = expected_memory(ctx)
    ctx.derived["memory"] = mem
    maxrss = ctx.qa["maxrss"].astype(float, copy=False)
    minrss = ctx.qa["minrss"].astype(float, copy=False)
    low = (maxrss > 0) & (mem > maxrss)
    high = (minrss > 0) & (mem < minrss)
    codes = np.where(low, "-lowmemory", "-highmemory")

    def reasons(idx: np.ndarray) -> list[str]:
        return [
            f"expected memory {m} MB > maxrss={hi} MB" if is_low else f"expected memory {m} MB < minrss={lo} MB"
            for m, hi, lo, is_low in zip(
                fmt_many(mem[idx]), fmt_many(maxrss[idx]), fmt_many(minrss[idx]), low[idx].tolist(), strict=True
            )
        ]

    return Verdict(~(low | high), codes, reasons)


MEMORY = Filter(
    "memory check",
    ("-lowmemory", "-highmemory"),
    "(baseRamCount + ramCount x coreCount) x 0.9 (MBPerCore; without coreCount for MB) within [minrss, maxrss]",
    f_memory,
)
