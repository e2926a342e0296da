"""Before/after of a report made with what-if edits: each task's candidates under the stored config and the edits."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from brokerage.model.explain import Decision
from brokerage.report.entry import TaskEntry
from brokerage.whatif.compare import FilterChange, TaskDiff, compare

TOP_SHOWN = 5  # candidates listed before and after per decision
WHY_SHOWN = 6  # reasons listed per decision (the ones about the top candidates first)


@dataclass(frozen=True)
class Change:
    """One decision of a task that the edits changed: its top candidate and status before and after, the best
    candidates of each side and the reasons (the filter verdicts and weight factors that differ)."""

    task: int
    broker: str
    kind: str  # "job" (a queue) or "nucleus"
    status_before: str
    status_after: str
    top_before: str
    top_after: str
    before: list[tuple[str, float]]  # (candidate, weight), best first
    after: list[tuple[str, float]]
    why: list[str]

    @property
    def moved(self) -> bool:
        """Whether the task's chosen queue (or nucleus) or its status changed, not only weights further down."""
        return self.top_before != self.top_after or self.status_before != self.status_after

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the change."""
        return {
            "task": self.task, "broker": self.broker, "kind": self.kind, "moved": self.moved,
            "status": {"before": self.status_before, "after": self.status_after},
            "top": {"before": self.top_before or None, "after": self.top_after or None},
            "candidates": {"before": [list(c) for c in self.before], "after": [list(c) for c in self.after]},
            "why": self.why,
        }  # fmt: skip


@dataclass(frozen=True)
class WhatIfSection:
    """The report's before/after: the edits (stored → what-if value), how many decisions were compared, and every
    decision the edits changed (moved ones first)."""

    edits: dict[str, dict[str, Any]]
    compared: int
    changes: list[Change] = field(default_factory=list)

    @property
    def moved(self) -> list[Change]:
        """The changes that moved a task's queue, nucleus or status."""
        return [c for c in self.changes if c.moved]

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the section."""
        return {
            "edits": self.edits,
            "decisions_compared": self.compared,
            "decisions_changed": len(self.changes),
            "tasks_moved": len({c.task for c in self.moved}),
            "changes": [c.to_dict() for c in self.changes],
        }


def top_of(d: Decision) -> str:
    """The chosen candidate of D: the nucleus the task brokerage picked, or the best-ranked queue ('' if none).

    Usage: ``top_of(entry.job)``
    """
    if d.label == "nucleus":
        return str(d.extra.get("chosen") or "")
    return d.candidates[0].name if d.candidates else ""


def _filter_reason(f: FilterChange) -> str:
    if f.change == "newly passes":
        return f"{f.name} no longer removed by {f.criteria_before} ({f.reason_before})"
    if f.change == "newly fails":
        return f"{f.name} now removed by {f.criteria_after} ({f.reason_after})"
    return f"{f.name} removed by {f.criteria_after} instead of {f.criteria_before} ({f.reason_after})"


def reasons(diff: TaskDiff, tops: Iterable[str]) -> list[str]:
    """Why DIFF's decision changed, in words: filter verdicts that changed (criteria code and reason) and weight
    factors that changed (before → after), those about TOPS (the top candidates) first; at most WHY_SHOWN.

    Usage: ``reasons(compare(before, after), ["Q1", "Q2"])``
    """
    first = {t for t in tops if t}
    found: list[tuple[bool, str]] = []
    if diff.status_before != diff.status_after:
        found.append((True, f"status {diff.status_before} → {diff.status_after}"))
    found += [(f.name in first, _filter_reason(f)) for f in diff.filter_changes]
    found += [
        (f.name in first, f"{f.name} factor {f.factor} {f.before:.4g} → {f.after:.4g}") for f in diff.factor_changes
    ]
    ordered = [text for key, text in found if key] + [text for key, text in found if not key]
    return ordered[:WHY_SHOWN] + ([f"… and {len(ordered) - WHY_SHOWN} more"] if len(ordered) > WHY_SHOWN else [])


def _best(d: Decision) -> list[tuple[str, float]]:
    return [(c.name, float(c.weight)) for c in d.candidates[:TOP_SHOWN]]


def change_of(before: Decision, after: Decision, kind: str) -> Change | None:
    """The change between a decision under the stored config and under the edits, or None when nothing an operator
    would see differs.

    Usage: ``change_of(stored_entry.job, whatif_entry.job, "job")``
    """
    diff = compare(before, after)
    if not diff.changed:
        return None
    tb, ta = top_of(before), top_of(after)
    return Change(
        before.task, before.broker, kind, before.status, after.status, tb, ta, _best(before), _best(after),
        reasons(diff, (tb, ta)),
    )  # fmt: skip


def whatif_section(
    stored: Iterable[TaskEntry], whatif: Iterable[TaskEntry], edits: Mapping[str, Mapping[str, Any]]
) -> WhatIfSection:
    """Compare each task's decisions under the stored config (STORED) and the edits (WHATIF); only brokers that
    read an edited key are in STORED (the others cannot change). EDITS: key → {"stored", "whatif"} values.

    Usage: ``whatif_section(stored_entries, report.tasks, report.meta["changed_from_stored"])``
    """
    by_task = {e.task: e for e in whatif}
    changes: list[Change] = []
    compared = 0
    for b in stored:
        a = by_task.get(b.task)
        if a is None:
            continue
        for kind, db, da in (("job", b.job, a.job), ("nucleus", b.nucleus, a.nucleus)):
            if db is None or da is None or db.broker != da.broker:
                continue
            compared += 1
            if (c := change_of(db, da, kind)) is not None:
                changes.append(c)
    changes.sort(key=lambda c: (not c.moved, c.task, c.kind))
    return WhatIfSection({k: dict(v) for k, v in edits.items()}, compared, changes)
