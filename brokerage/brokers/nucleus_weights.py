"""The nucleus weight (seed 000 step 3): remaining work, local input, tape and free space factors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from brokerage.brokers.nucleus_context import SECONDS_PER_DAY, NucleusContext
from brokerage.framework import Reads, Step

# the weight's denominator never drops below one HS06 second, so RW_OFFSET=0 at an idle nucleus stays finite
MIN_RW_DAYS = 1.0 / SECONDS_PER_DAY


@dataclass(frozen=True)
class NucleusWeights:
    """The factors of every nucleus' weight (arrays over nuclei); their product is the weight."""

    rw: np.ndarray  # 1 / max(rwOffset, RW)
    local: np.ndarray  # localInputSize / totalInputSize (IO-intensive tasks), else 1
    tape: np.ndarray  # tapeWeight
    space: np.ndarray  # (spaceFree + spaceExpired) / spaceTotal
    weight: np.ndarray
    io_intensive: bool


STEPS: tuple[Step, ...] = (
    Step("rw", Reads(config=("RW_OFFSET",)), "weight"),
    Step("local", Reads(config=("MIN_IO_INTENSITY_WITH_LOCAL_DATA",)), "weight"),
    Step("tape", Reads(config=("TAPE_WEIGHT",)), "weight"),
    Step("space", kind="weight"),
)
"""The weight's factors (step 3, in the decision's order) and the gdpconfig keys each reads."""


def weights(ctx: NucleusContext) -> NucleusWeights:
    """Seed 000 step 3: weight = [localInputSize/totalInputSize ×] tapeWeight × (free+expired) / (max(rwOffset, RW) × spaceTotal).

    Usage: ``weights(ctx).weight``
    """
    cfg, na, inp = ctx.config, ctx.na, ctx.inputs
    io = ctx.task.get("iointensity")
    io_intensive = io is not None and float(io) > cfg["MIN_IO_INTENSITY_WITH_LOCAL_DATA"]
    rw = 1.0 / np.maximum(max(float(cfg["RW_OFFSET"]), MIN_RW_DAYS), ctx.rw_days)
    use_data = not ctx.locality.get("disabled", False) and inp.total_gb > 0
    local = inp.local_gb / inp.total_gb if io_intensive and use_data else np.ones(ctx.n)
    # tape: part of the input the nucleus holds is there only on tape
    on_tape_only = inp.local_gb > inp.local_disk_gb
    tape = np.where(on_tape_only & use_data, float(cfg["TAPE_WEIGHT"]), 1.0)
    total = na.space_total
    free = na.space_free + na.space_expired
    space = np.divide(free, total, out=np.zeros(ctx.n), where=np.nan_to_num(total) > 0)
    return NucleusWeights(rw, local, tape, space, local * tape * space * rw, io_intensive)
