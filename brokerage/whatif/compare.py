"""What-if for one task: how a gdpconfig edit moves its candidates, filters and weight factors."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from brokerage.brokers import batch
from brokerage.brokers.batch import TOP_N, shares
from brokerage.brokers.uses import brokers_reading
from brokerage.model.explain import Decision, Skip, SkipList

FACTOR_TOLERANCE = 1e-9  # relative change below which a weight factor counts as unchanged

ALL_BROKERS = batch.ALL_BROKERS

Progress = Callable[[int, int], None]


def affected_brokers(keys: Iterable[str]) -> frozenset[str]:
    """Brokers whose decisions may change when KEYS change: those with a rule declaring one of them (the nucleus
    broker's -job check runs the production filters, so their keys reach it too); every broker for an unknown key.

    Usage: ``affected_brokers(["NQUEUED_SAT_CAP"]) == {"production", "task"}``
    """
    found = brokers_reading(keys)
    return ALL_BROKERS if found is None else found


# ---------------------------------------------------------------- one task


@dataclass(frozen=True)
class RankMove:
    """A candidate's place before and after (None = not a candidate), with its weight and share."""

    name: str
    before: int | None
    after: int | None
    weight_before: float | None
    weight_after: float | None
    share_before: float
    share_after: float

    @property
    def move(self) -> int | None:
        """Places gained (positive = up), None when it entered or left the candidates."""
        if self.before is None or self.after is None:
            return None
        return self.before - self.after

    @property
    def arrow(self) -> str:
        """▲ up, ▼ down, = same, new, out."""
        if self.before is None:
            return "new"
        if self.after is None:
            return "out"
        m = self.before - self.after
        return f"▲{m}" if m > 0 else f"▼{-m}" if m < 0 else "="


@dataclass(frozen=True)
class FilterChange:
    """A candidate that newly passes (was skipped before) or newly fails (skipped after), with the criteria."""

    name: str
    change: str  # "newly passes" | "newly fails" | "other filter"
    criteria_before: str
    reason_before: str
    criteria_after: str
    reason_after: str


@dataclass(frozen=True)
class FactorChange:
    """One weight factor of one candidate that changed."""

    name: str
    factor: str
    before: float
    after: float


@dataclass
class TaskDiff:
    """Before/after of one task's brokerage under two configs."""

    task: int
    broker: str
    label: str
    status_before: str
    status_after: str
    moves: list[RankMove]
    filter_changes: list[FilterChange]
    factor_changes: list[FactorChange]
    top_before: str | None
    top_after: str | None
    funnel: list[tuple[str, int, int, int, int]] = field(default_factory=list)  # filter, before/after × 2

    @property
    def changed(self) -> bool:
        """Whether anything an operator would see differs."""
        return bool(
            self.status_before != self.status_after
            or self.filter_changes
            or self.factor_changes
            or any(m.move != 0 for m in self.moves)
        )


def _close(a: float, b: float) -> bool:
    if math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(a, b, rel_tol=FACTOR_TOLERANCE, abs_tol=1e-12)


def _skip_codes(decision: Decision) -> dict[str, str]:
    skipped = decision.skipped
    if isinstance(skipped, SkipList):
        return skipped.criteria_by_candidate()
    return {s.candidate: s.criteria for s in skipped}


def _skips_of(decision: Decision, names: Sequence[str]) -> dict[str, Skip]:
    skipped = decision.skipped
    if isinstance(skipped, SkipList):
        return skipped.of(names)
    wanted = set(names)
    return {s.candidate: s for s in skipped if s.candidate in wanted}


def compare(before: Decision, after: Decision, top: int = TOP_N) -> TaskDiff:
    """Compare two decisions of the same task: rank moves of the top candidates, filter and factor changes.

    Usage: ``diff = compare(broker(snap, t, cfg), broker(snap, t, cfg.with_overrides({...})))``
    """
    if before.task != after.task or before.broker != after.broker:
        raise ValueError(f"cannot compare task {before.task} ({before.broker}) with {after.task} ({after.broker})")
    rb = {c.name: c for c in before.candidates}
    ra = {c.name: c for c in after.candidates}
    sb, sa = shares(before), shares(after)
    shown = list(dict.fromkeys([*(c.name for c in after.candidates[:top]), *(c.name for c in before.candidates[:top])]))
    moves = []
    for name in shown:
        b, a = rb.get(name), ra.get(name)
        moves.append(
            RankMove(
                name,
                b.rank if b else None,
                a.rank if a else None,
                b.weight if b else None,
                a.weight if a else None,
                sb.get(name, 0.0),
                sa.get(name, 0.0),
            )
        )
    codes_b, codes_a = _skip_codes(before), _skip_codes(after)
    moved = [n for n in sorted(codes_b.keys() | codes_a.keys()) if codes_b.get(n) != codes_a.get(n)]
    # Skip objects (and their sentences) only for the candidates whose fate changed
    skips_b, skips_a = _skips_of(before, moved), _skips_of(after, moved)
    changes = []
    for name in moved:
        b, a = skips_b.get(name), skips_a.get(name)
        kind = "other filter" if b and a else "newly passes" if b else "newly fails"
        changes.append(
            FilterChange(
                name,
                kind,
                b.criteria if b else "",
                b.reason if b else "",
                a.criteria if a else "",
                a.reason if a else "",
            )
        )
    factors = []
    for name in shown:
        b, a = rb.get(name), ra.get(name)
        if not (b and a):
            continue
        for key in dict.fromkeys([*b.factors, *a.factors]):
            fb, fa = float(b.factors.get(key, math.nan)), float(a.factors.get(key, math.nan))
            if not _close(fb, fa):
                factors.append(FactorChange(name, key, fb, fa))
    fa_by = {f.filter: f for f in after.funnel}
    funnel = [
        (f.filter, f.before, f.after, fa_by[f.filter].before, fa_by[f.filter].after)
        for f in before.funnel
        if f.filter in fa_by
    ]
    return TaskDiff(
        before.task,
        before.broker,
        before.label,
        before.status,
        after.status,
        moves,
        changes,
        factors,
        before.candidates[0].name if before.candidates else None,
        after.candidates[0].name if after.candidates else None,
        funnel,
    )
