"""Input movement and disk IO: IO-intensive tasks avoid moving input (-io); diskIO per core limits (-diskIO)."""

from __future__ import annotations

import numpy as np

from brokerage.checks.context import QueueContext
from brokerage.framework import Derived, Filter, Reads, Verdict
from brokerage.model.explain import fmt, sentences


def _diskio_limits(ctx: QueueContext) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per queue: running jobs over the diskIO limit, the limit and the average diskIO per core."""
    maxio = ctx.qa["maxdiskio"].astype(float, copy=False)
    limit = np.where(maxio > 0, maxio, float(ctx.config["MAX_DISKIO_DEFAULT"]))
    avg = ctx.qa["diskio_avg"].astype(float, copy=False)
    return avg > limit, limit, avg


DISKIO_LIMITS = Derived("diskio limits", Reads(config=("MAX_DISKIO_DEFAULT",)), _diskio_limits)


def f_diskio(ctx: QueueContext) -> Verdict | None:
    """Skip queues whose running jobs exceed their diskIO limit for tasks whose diskIO is also above it."""
    task_io = ctx.task.get("diskio")
    if task_io is None:
        return None
    over, limit, avg = DISKIO_LIMITS(ctx)
    bad = over & (task_io > limit)
    io_text = fmt(task_io)
    return Verdict(
        ~bad,
        "-diskIO",
        sentences(lambda a, lim: f"diskIO per core {a} > limit {lim} kB/s and task diskIO={io_text}", avg, limit),
    )


DISKIO = Filter(
    "diskIO check",
    ("-diskIO",),
    "skip queues whose average diskIO per core is over their maxdiskio (or MAX_DISKIO_DEFAULT) "
    "when the task's diskIO is over it too",
    f_diskio,
    uses=DISKIO_LIMITS.reads,
)


def f_io(ctx: QueueContext) -> Verdict | None:
    """IO-intensive tasks: missing input at the queue must be < SIZE_CUTOFF_TO_MOVE_INPUT GB and < NUM_CUTOFF_TO_MOVE_INPUT files."""
    io = ctx.task.get("iointensity")
    cutoff = ctx.config["IO_INTENSITY_CUTOFF"]
    if io is None or io <= cutoff or ctx.avail["total_gb"] <= 0:
        return None
    mgb, mfiles = ctx.avail["missing_gb"], ctx.avail["missing_files"]
    size_cut, num_cut = ctx.config["SIZE_CUTOFF_TO_MOVE_INPUT"], ctx.config["NUM_CUTOFF_TO_MOVE_INPUT"]
    ok = (mgb < size_cut) & (mfiles < num_cut)
    io_text = fmt(io)
    limits = f"(limits {size_cut} GB / {num_cut} files)"
    why = f"ioIntensity={io_text} > IO_INTENSITY_CUTOFF={cutoff}"
    return Verdict(ok, "-io", sentences(lambda g, f: f"{why} and {g} GB / {f} files to move {limits}", mgb, mfiles))


IO = Filter(
    "IO check",
    ("-io",),
    "IO-intensive tasks (ioIntensity > IO_INTENSITY_CUTOFF) skip queues that would need more than "
    "SIZE_CUTOFF_TO_MOVE_INPUT GB or NUM_CUTOFF_TO_MOVE_INPUT files of input moved",
    f_io,
    uses=Reads(config=("IO_INTENSITY_CUTOFF", "SIZE_CUTOFF_TO_MOVE_INPUT", "NUM_CUTOFF_TO_MOVE_INPUT")),
)
