"""Decision, Skip and funnel: what a broker decided and why, for every candidate."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class LazyTexts:
    """Reason sentences of one filter's removed rows, built together on first use.

    Brokers decide with criteria codes; the sentences are only needed when someone reads the
    explanation, so formatting them is deferred until then.
    """

    __slots__ = ("_build", "_idx", "_texts")

    def __init__(self, build: Callable[[Any], list[str]], idx: Any) -> None:
        self._build = build
        self._idx = idx
        self._texts: list[str] | None = None

    def __getitem__(self, k: int) -> str:
        if self._texts is None:
            self._texts = self._build(self._idx)
        return self._texts[k]


class Skip:
    """A candidate removed by a filter: JEDI criteria code, the filter, a sentence, and whether it may pass later."""

    __slots__ = ("_reason", "candidate", "criteria", "stage", "temporary")

    def __init__(
        self, candidate: str, criteria: str, reason: str | tuple[LazyTexts, int], stage: str, temporary: bool = False
    ) -> None:
        self.candidate = candidate
        self.criteria = criteria
        self._reason = reason
        self.stage = stage
        self.temporary = temporary

    @property
    def reason(self) -> str:
        """The sentence explaining the skip."""
        r = self._reason
        if not isinstance(r, str):
            r = self._reason = r[0][r[1]]
        return r

    def _key(self) -> tuple[str, str, str, str, bool]:
        return (self.candidate, self.criteria, self.reason, self.stage, self.temporary)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Skip) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        c, code, reason, stage, temp = self._key()
        return f"Skip(candidate={c!r}, criteria={code!r}, reason={reason!r}, stage={stage!r}, temporary={temp!r})"

    def to_dict(self, label: str = "queue") -> dict[str, Any]:
        """JSON form; LABEL names the candidate key (queue or nucleus)."""
        return {
            label: self.candidate,
            "criteria": self.criteria,
            "reason": self.reason,
            "stage": self.stage,
            "temporary": self.temporary,
        }


@dataclass(slots=True)
class FunnelStep:
    """How many candidates a filter saw and let through (JEDI's brokerage summary lines)."""

    filter: str
    before: int
    after: int

    @property
    def cut_percent(self) -> int:
        """Share removed, rounded up as in JEDI's summary."""
        return 0 if self.before == 0 else math.ceil((self.before - self.after) * 100 / self.before)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"filter": self.filter, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class Note:
    """Something the broker could not judge for a candidate (e.g. a check not implemented), shown, never hidden."""

    candidate: str
    check: str
    text: str


@dataclass
class Candidate:
    """A surviving candidate with its rank, weight and the factors that multiply into the weight."""

    name: str
    rank: int
    weight: float
    factors: dict[str, float]
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, label: str = "queue") -> dict[str, Any]:
        """JSON form; LABEL names the candidate key (queue or nucleus)."""
        out: dict[str, Any] = {label: self.name, "rank": self.rank, "weight": self.weight, "factors": self.factors}
        out.update(self.details)
        return out


@dataclass
class Decision:
    """The full result of one brokerage call: ranked candidates, skips, funnel and effective config.

    Usage: ``decision.to_dict()["candidates"][0]["queue"]``
    """

    broker: str
    task: int
    status: str  # "ok" or "pending"
    candidates: list[Candidate]
    skipped: list[Skip]
    funnel: list[FunnelStep]
    config: dict[str, Any]
    label: str = "queue"
    pending_minutes: int | None = None
    message: str = ""
    notes: list[Note] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ranked_names(self) -> list[str]:
        """Candidate names, best first."""
        return [c.name for c in self.candidates]

    def skip_of(self, name: str) -> Skip | None:
        """Why NAME was removed, or None if it was not."""
        for s in self.skipped:
            if s.candidate == name:
                return s
        return None

    def criteria_counts(self) -> dict[str, int]:
        """How many candidates each criteria code removed."""
        counts: dict[str, int] = {}
        for s in self.skipped:
            counts[s.criteria] = counts.get(s.criteria, 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        """The JSON object printed by ``brokerage jobs --json`` / ``brokerage nucleus --json``."""
        out: dict[str, Any] = {
            "broker": self.broker,
            "task": self.task,
            "status": self.status,
            "candidates": [c.to_dict(self.label) for c in self.candidates],
            "skipped": [s.to_dict(self.label) for s in self.skipped],
            "funnel": [f.to_dict() for f in self.funnel],
            "config": self.config,
        }
        if self.pending_minutes is not None:
            out["pending_minutes"] = self.pending_minutes
        if self.message:
            out["message"] = self.message
        if self.notes:
            out["notes"] = [{self.label: n.candidate, "check": n.check, "text": n.text} for n in self.notes]
        out.update(self.extra)
        return out

    def summary_lines(self) -> list[str]:
        """JEDI-style brokerage summary block."""
        title = "Task" if self.label == "nucleus" else "Job"
        lines = [f"===== {title} brokerage summary ====="]
        if self.funnel:
            lines.append(f"the number of initial candidates: {self.funnel[0].before}")
        for f in self.funnel:
            if f.after != f.before:
                lines.append(f"{f.before:>5} -> {f.after:>3} candidates, {f.cut_percent:>3}% cut : {f.filter}")
        lines.append(f"the number of final candidates: {len(self.candidates)}")
        return lines
