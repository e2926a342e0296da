"""Vectorised filter pipeline: ordered named filters over a candidate table, producing skips and a funnel."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from brokerage.explain import FunnelStep, LazyTexts, Skip, SkipList

ReasonFn = Callable[[np.ndarray], list[str]]


@dataclass
class Verdict:
    """What a filter says about every row: which pass, and for the others the code and sentence.

    ``criteria`` is one code for all failing rows or an array of codes per row; ``reasons`` builds the
    sentences only for the rows that are actually removed (indices into the table), so explanation
    costs nothing for rows that pass.
    """

    passed: np.ndarray
    criteria: str | np.ndarray
    reasons: ReasonFn | str
    temporary: bool = False

    def codes(self, idx: np.ndarray) -> list[str]:
        """Criteria codes of rows IDX."""
        if isinstance(self.criteria, str):
            return [self.criteria] * len(idx)
        return [str(c) for c in self.criteria[idx].tolist()]

    def texts(self, idx: np.ndarray) -> list[str]:
        """Reason sentences of rows IDX."""
        if isinstance(self.reasons, str):
            return [self.reasons] * len(idx)
        return self.reasons(idx)


@dataclass(frozen=True)
class Filter:
    """A named, ordered check. ``run`` returns None when the check does not apply to this task."""

    name: str
    run: Callable[[Any], Verdict | None]
    temporary: bool = False


def all_pass(n: int) -> np.ndarray:
    """A mask where every row passes."""
    return np.ones(n, dtype=bool)


def apply_filters(
    names: np.ndarray,
    alive: np.ndarray,
    filters: Sequence[Filter],
    ctx: Any,
    skips: SkipList | list[Skip] | None = None,
    funnel: list[FunnelStep] | None = None,
) -> tuple[np.ndarray, SkipList, list[FunnelStep]]:
    """Run FILTERS in order over the rows still ALIVE; return the survivors, the skips and the funnel.

    Each filter's removed rows are kept as indices with their codes; Skip objects and sentences are
    built only when the skips are read (see SkipList).
    Usage: ``alive, skips, funnel = apply_filters(names, alive, FILTERS, ctx)``
    """
    skips = skips if isinstance(skips, SkipList) else SkipList(skips or ())
    funnel = [] if funnel is None else funnel
    alive = alive.copy()
    left = int(np.count_nonzero(alive))
    for f in filters:
        before = left
        if before == 0:
            funnel.append(FunnelStep(f.name, 0, 0))
            continue
        verdict = f.run(ctx)
        if verdict is not None:
            idx = (alive > verdict.passed).nonzero()[0]  # alive and not passed
            if len(idx):
                crit = verdict.criteria
                codes = crit if isinstance(crit, str) else crit[idx]
                reasons = verdict.reasons
                texts = reasons if isinstance(reasons, str) else LazyTexts(reasons, idx)
                skips.add(names, idx, codes, texts, f.name, verdict.temporary or f.temporary)
                alive[idx] = False
                left -= len(idx)
        funnel.append(FunnelStep(f.name, before, left))
    return alive, skips, funnel


def fmt(x: float, digits: int = 3) -> str:
    """Compact number for reason sentences (integers without decimals)."""
    x = float(x)
    if x != x:  # NaN
        return "n/a"
    if abs(x) < 1e15 and x.is_integer():
        return str(int(x))
    return f"{x:.{digits}g}"


def fmt_many(values: Any, digits: int = 3) -> list[str]:
    """``fmt`` of every value of an array, in one pass.

    Usage: ``fmt_many(np.array([2.0, 0.12345, np.nan])) == ["2", "0.123", "n/a"]``
    """
    v = np.asarray(values, dtype=float)
    if v.size < 8:  # numpy's per-call overhead outweighs the loop
        return [fmt(x, digits) for x in v.tolist()]
    whole = (np.abs(v) < 1e15) & (v == np.trunc(v))
    ints = np.where(whole, v, 0.0).astype(np.int64).tolist()
    spec = f".{digits}g"
    return [
        str(i) if w else ("n/a" if x != x else format(x, spec))
        for x, i, w in zip(v.tolist(), ints, whole.tolist(), strict=True)
    ]
