"""Which tasks' brokerage changed between two grid runs: top candidate, top-10 set, pending."""

from __future__ import annotations

from dataclasses import dataclass

from brokerage.brokers.batch import GridRun, Key, Outcome
from brokerage.whatif.compare import TOP_N

ASPECTS = ("top", "top10", "pending")


@dataclass(frozen=True)
class Change:
    """One brokerage (broker, task) whose outcome differs from the old grid version to the new one."""

    key: Key
    aspects: tuple[str, ...]  # of ASPECTS
    before: Outcome
    after: Outcome

    @property
    def task(self) -> int:
        """The jediTaskID."""
        return self.key[1]

    @property
    def entered(self) -> tuple[str, ...]:
        """Candidates in the new top 10 that were not in the old one."""
        return tuple(q for q in self.after.top[:TOP_N] if q not in self.before.top[:TOP_N])

    @property
    def left(self) -> tuple[str, ...]:
        """Candidates of the old top 10 that are not in the new one."""
        return tuple(q for q in self.before.top[:TOP_N] if q not in self.after.top[:TOP_N])

    def headline(self) -> str:
        """One line: what changed for the task."""
        parts = []
        if "top" in self.aspects:
            parts.append(f"top {_first(self.before)} → {_first(self.after)}")
        if "top10" in self.aspects and (self.entered or self.left):
            moved = [f"+{q}" for q in self.entered[:3]] + [f"-{q}" for q in self.left[:3]]
            parts.append("top 10 " + " ".join(moved))
        if "pending" in self.aspects:
            parts.append(f"{self.before.status} → {self.after.status}")
        return f"{self.key[0]} brokerage of task {self.task}: " + "; ".join(parts)


def _first(o: Outcome) -> str:
    return o.top[0] if o.top else "none"


def aspects(before: Outcome, after: Outcome) -> tuple[str, ...]:
    """The ASPECTS in which two outcomes of one brokerage differ.

    Usage: ``aspects(run_a.outcomes[key], run_b.outcomes[key])``
    """
    out = []
    if _first(before) != _first(after):
        out.append("top")
    if set(before.top[:TOP_N]) != set(after.top[:TOP_N]):
        out.append("top10")
    if (before.status == "pending") != (after.status == "pending"):
        out.append("pending")
    return tuple(out)


def reproduces(change: Change, replay: Outcome) -> bool:
    """True if REPLAY shows every aspect of CHANGE as the new version has it (same top, same top-10 set,
    same pending state)."""
    ok = True
    if "top" in change.aspects:
        ok &= _first(replay) == _first(change.after)
    if "top10" in change.aspects:
        ok &= set(replay.top[:TOP_N]) == set(change.after.top[:TOP_N])
    if "pending" in change.aspects:
        ok &= (replay.status == "pending") == (change.after.status == "pending")
    return ok


def changes(before: GridRun, after: GridRun) -> tuple[list[Change], list[Key], list[Key]]:
    """(changed brokerages in BEFORE's order, keys only in AFTER (new), keys only in BEFORE (gone)).

    Usage: ``changed, new, gone = changes(run_old, run_new)``
    """
    out = []
    for key, old in before.outcomes.items():
        new = after.outcomes.get(key)
        if new is not None and (diff := aspects(old, new)):
            out.append(Change(key, diff, old, new))
    fresh = [k for k in after.outcomes if k not in before.outcomes]
    gone = [k for k in before.outcomes if k not in after.outcomes]
    return out, fresh, gone
