"""Paired-t intervals for replicated runs: the mean difference of matched pairs and its 95 % confidence interval."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

METHOD = (
    "paired t: replica i of every config runs with seed i (common random numbers); for each measure the differences "
    "d_i = proposed_i - stored_i give mean(d) ± t(0.975, n-1) · sd(d) / √n, Student's t quantile from a table; "
    "a difference is significant when its 95 % interval excludes 0"
)
CONFIDENCE = 0.95
# Student's t, two-sided 95 % (the 0.975 quantile) by degrees of freedom; between rows it is interpolated in 1/df
T975: tuple[tuple[float, float], ...] = (
    (1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (6, 2.447), (7, 2.365), (8, 2.306), (9, 2.262),
    (10, 2.228), (11, 2.201), (12, 2.179), (13, 2.160), (14, 2.145), (15, 2.131), (16, 2.120), (17, 2.110),
    (18, 2.101), (19, 2.093), (20, 2.086), (21, 2.080), (22, 2.074), (23, 2.069), (24, 2.064), (25, 2.060),
    (26, 2.056), (27, 2.052), (28, 2.048), (29, 2.045), (30, 2.042), (40, 2.021), (60, 2.000), (120, 1.980),
    (math.inf, 1.960),
)  # fmt: skip


def t975(df: int) -> float:
    """Student's t quantile 0.975 with DF degrees of freedom (the 95 % two-sided multiplier).

    Usage: ``t975(9)  # 2.262``
    """
    if df < 1:
        raise ValueError(f"df: {df} degrees of freedom; expected 1 or more")
    for (d0, t0), (d1, t1) in itertools.pairwise(T975):
        if df == d0:
            return t0
        if d0 < df < d1:
            w = (1 / d0 - 1 / df) / (1 / d0 - (0 if math.isinf(d1) else 1 / d1))
            return t0 + w * (t1 - t0)
    return T975[-1][1]


@dataclass(frozen=True)
class Interval:
    """A mean with its 95 % interval (None bounds with fewer than 2 values); significant when it excludes 0."""

    mean: float | None
    low: float | None
    high: float | None
    n: int

    @property
    def significant(self) -> bool:
        """The interval lies wholly above or wholly below 0."""
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, with ``significant``."""
        return {**asdict(self), "significant": self.significant}


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def mean_interval(values: Sequence[float | None]) -> Interval:
    """The mean of VALUES (missing ones left out) ± t(0.975, n-1) · sd / √n.

    Usage: ``mean_interval([1.0, 2.0, 3.0]).low  # 2 - 4.303 · 1 / √3``
    """
    xs = [float(x) for x in values if _finite(x)]  # type: ignore[arg-type]
    n = len(xs)
    if n == 0:
        return Interval(None, None, None, 0)
    m = sum(xs) / n
    if n < 2:
        return Interval(m, None, None, 1)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    half = t975(n - 1) * sd / math.sqrt(n)
    return Interval(m, m - half, m + half, n)


def differences(a: Sequence[float | None], b: Sequence[float | None]) -> list[float | None]:
    """B_i - A_i per pair; None where either is missing.

    Usage: ``differences([1, 2], [2, 4])  # [1.0, 2.0]``
    """
    if len(a) != len(b):
        raise ValueError(f"pairs: {len(a)} values against {len(b)}; replicas must be paired by seed")
    return [float(y) - float(x) if _finite(x) and _finite(y) else None for x, y in zip(a, b, strict=True)]  # type: ignore[arg-type]


def paired(a: Sequence[float | None], b: Sequence[float | None]) -> Interval:
    """The paired difference B - A (pair i from seed i) with its 95 % paired-t interval.

    Usage: ``paired(stored, proposed).significant``
    """
    return mean_interval(differences(a, b))
