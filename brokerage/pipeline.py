"""Vectorised filter pipeline: ordered named filters over a candidate table, producing skips and a funnel."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from brokerage.explain import FunnelStep, LazyTexts, Skip

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
        return [str(c) for c in self.criteria[idx]]

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
    skips: list[Skip] | None = None,
    funnel: list[FunnelStep] | None = None,
) -> tuple[np.ndarray, list[Skip], list[FunnelStep]]:
    """Run FILTERS in order over the rows still ALIVE; return the survivors, the skips and the funnel.

    Usage: ``alive, skips, funnel = apply_filters(names, alive, FILTERS, ctx)``
    """
    skips = [] if skips is None else skips
    funnel = [] if funnel is None else funnel
    alive = alive.copy()
    for f in filters:
        before = int(alive.sum())
        if before == 0:
            funnel.append(FunnelStep(f.name, 0, 0))
            continue
        verdict = f.run(ctx)
        if verdict is not None:
            removed = alive & ~verdict.passed
            idx = np.flatnonzero(removed)
            if len(idx):
                temporary = verdict.temporary or f.temporary
                stage = f.name
                if isinstance(verdict.reasons, str):
                    texts: list[Any] = [verdict.reasons] * len(idx)
                else:
                    lazy = LazyTexts(verdict.reasons, idx)
                    texts = [(lazy, k) for k in range(len(idx))]
                skips.extend(
                    Skip(name, code, text, stage, temporary)
                    for name, code, text in zip(names[idx].tolist(), verdict.codes(idx), texts, strict=True)
                )
                alive &= ~removed
        funnel.append(FunnelStep(f.name, before, int(alive.sum())))
    return alive, skips, funnel


def fmt(x: float, digits: int = 3) -> str:
    """Compact number for reason sentences (integers without decimals)."""
    x = float(x)
    if x != x:  # NaN
        return "n/a"
    if abs(x) < 1e15 and x == int(x):
        return str(int(x))
    return f"{x:.{digits}g}"
