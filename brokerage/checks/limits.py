"""A per-queue value against the queue's own [lower, upper] limits, where a limit <= 0 means none."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from brokerage.framework import Verdict
from brokerage.model import views
from brokerage.model.explain import fmt_many

Sentence = Callable[[str, str], str]  # (formatted value, formatted limit) -> reason


def within_limits(
    value: np.ndarray,
    qa: views.QueueArrays,
    limits: tuple[str, str],
    over: tuple[str, Sentence],
    under: tuple[str, Sentence],
) -> Verdict:
    """Queues where VALUE > their LIMITS[1] column fail with OVER's code, VALUE < LIMITS[0] with UNDER's;
    non-positive limits are unset.

    Usage: ``within_limits(mem, qa, ("minrss", "maxrss"), ("-lowmemory", over_text), ("-highmemory", under_text))``
    """
    lower = qa[limits[0]].astype(float, copy=False)
    upper = qa[limits[1]].astype(float, copy=False)
    too_high = (upper > 0) & (value > upper)
    too_low = (lower > 0) & (value < lower)
    # one code when only one limit is crossed (the usual case): no array of strings to build
    codes: str | np.ndarray
    if not too_low.any():
        codes = over[0]
    elif not too_high.any():
        codes = under[0]
    else:
        codes = np.where(too_high, over[0], under[0])

    def reasons(idx: np.ndarray) -> list[str]:
        high = too_high[idx]
        crossed = fmt_many(np.where(high, upper[idx], lower[idx]))  # only the limit each row crossed
        above, below = over[1], under[1]
        return [
            above(v, lim) if h else below(v, lim)
            for v, lim, h in zip(fmt_many(value[idx]), crossed, high.tolist(), strict=True)
        ]

    return Verdict(~(too_high | too_low), codes, reasons)
