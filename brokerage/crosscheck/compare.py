"""Ours against PanDA's, per task and per queue (or nucleus): verdict, weight, probability; and the totals.

A name's verdict is ``+use`` (a candidate) or the criteria code that removed it (``?-token`` for a JEDI token
without a code of ours, ``absent`` when a side never mentions the name). Weights agree within a relative 1e-9;
nucleus probabilities (weight / Σ weight) within an absolute 1e-9. A task is identical when every verdict, weight
and probability agrees; *accepted* when the only differences are covered by the allow-list
(``crosscheck/allowlist.py``, argued in docs/crosscheck.md) or a known PanDA crash. Allowed differences are counted
apart.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from brokerage.crosscheck.allowlist import allowed
from brokerage.crosscheck.verdicts import Verdicts

REL_TOL = 1e-9
ABS_TOL = 1e-9
USE = "+use"
ABSENT = "absent"

KNOWN_PANDA_BUGS: dict[str, str] = {
    "nRunning = max(int(numStandby / tmpSiteSpec.coreCount), nRunning)": "AtlasProdJobBroker.py:1801 (and AtlasAnalJobBroker.py:1884) "
    "divides numSlots by the queue's coreCount: a queue with corecount 0 (any) and numSlots > 0 raises ZeroDivisionError and the "
    "whole brokerage of the task fails",
    "weight = bw_map[_basic_weight_version]": "AtlasAnalJobBroker.py:2193 reads the new basic weight that a swallowed "
    "exception left unset: InputChunk.getSubChunk (InputChunk.py:605) divides by the task's coreCount, so an "
    "analysis task with corecount 0 raises ZeroDivisionError inside the weight block, then KeyError 'new'",
}
"""PanDA 1.0.4 crashes the crosscheck met, by a line of the traceback: reported apart, never counted as agreement."""


@dataclass
class QueueRow:
    """One name's verdicts on both sides and which field differs ('' when they agree)."""

    name: str
    ours: str
    jedi: str
    ours_weight: float | None = None
    jedi_weight: float | None = None
    differs: str = ""  # verdict, weight, probability
    ours_reason: str = ""
    jedi_reason: str = ""
    allowed: str = ""
    tie: str = ""  # why a +use / -low_weight swap is the same decision (equal weights at the cut)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in ("", None)} | {"agree": not self.differs}


@dataclass
class TaskComparison:
    """One task, one broker: both sides' verdicts for every name either side mentions."""

    task: int
    broker: str
    ours: Verdicts
    jedi: Verdicts
    rows: list[QueueRow] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """Every verdict, weight and probability agrees and PanDA did not fail (the allow-list not used)."""
        return all(not r.differs for r in self.rows) and not self.jedi.error

    @property
    def accepted(self) -> bool:
        """Identical once the allow-list's differences and known PanDA crashes are set aside."""
        return all(not r.differs or r.allowed for r in self.rows) and (not self.jedi.error or bool(self.panda_bug))

    def differing(self) -> list[QueueRow]:
        return [r for r in self.rows if r.differs]

    @property
    def panda_bug(self) -> str:
        """The known PanDA crash behind the JEDI side's error ('' when none or unknown)."""
        return next((why for line, why in KNOWN_PANDA_BUGS.items() if line in self.jedi.error), "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task, "broker": self.broker, "identical": self.identical, "accepted": self.accepted,
            **({"panda_bug": self.panda_bug} if self.panda_bug else {}),
            "ours": {"ok": self.ours.ok, "ms": round(self.ours.ms, 3), "candidates": self.ours.candidates},
            "jedi": {"ok": self.jedi.ok, "ms": round(self.jedi.ms, 3), "candidates": self.jedi.candidates,
                     "unmapped": sorted(self.jedi.unmapped), **({"error": self.jedi.error} if self.jedi.error else {})},
            "queues": [r.to_dict() for r in self.rows],
        }  # fmt: skip


def _verdict(v: Verdicts, name: str) -> str:
    if name in v.candidates:
        return USE
    if name in v.skips:
        return v.skips[name][0]
    return ABSENT


def _close(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)


def compare(task: int, broker: str, ours: Verdicts, jedi: Verdicts) -> TaskComparison:
    """Compare one task's verdicts name by name (names in either side's candidates or skips, sorted)."""
    out = TaskComparison(task, broker, ours, jedi)
    names = sorted(set(ours.candidates) | set(ours.skips) | set(jedi.candidates) | set(jedi.skips))
    p_ours, p_jedi = (ours.probabilities(), jedi.probabilities()) if broker == "nucleus" else ({}, {})
    for name in names:
        row = QueueRow(name, _verdict(ours, name), _verdict(jedi, name))
        if row.jedi == ABSENT and jedi.all_failed and row.ours == jedi.all_failed:
            row.jedi = jedi.all_failed  # JEDI failed every nucleus left at that check in one error line
        if row.jedi == ABSENT and row.ours in jedi.silent:
            row.jedi = row.ours  # JEDI's check ran and removed names without a line (its summary counts them)
        row.ours_reason = ours.skips.get(name, ("", ""))[1]
        row.jedi_reason = jedi.skips.get(name, ("", ""))[1]
        if row.ours != row.jedi:
            row.differs = "verdict"
        elif row.ours == USE:
            row.ours_weight, row.jedi_weight = ours.candidates[name], jedi.candidates[name]
            if not _close(row.ours_weight, row.jedi_weight):
                row.differs = "weight"
            elif p_ours and abs(p_ours[name] - p_jedi[name]) > ABS_TOL:
                row.differs = "probability"
        if row.differs:
            row.allowed = allowed(broker, row.differs, row.ours, row.jedi, task) or (
                f"known PanDA crash: {out.panda_bug}" if out.panda_bug else ""
            )
        out.rows.append(row)
    if broker == "anal":
        mark_ties(ours, jedi, out.rows)
        for row in out.rows:
            if row.tie:
                row.allowed = ""
    return out


LOW_WEIGHT = "-low_weight"
TIE_NOTE = "equal weights at the best-10 cut: JEDI shuffles them (AtlasAnalJobBroker.py:2250-2259)"
JEDI_WEIGHT = re.compile(r"\bweight=([-+0-9.eE]+)")
OUR_CUT = re.compile(r"^weight=(\S+) below the best \d+ \(cut at (\S+)\)$")


def _tie_weight(ours: Verdicts, jedi: Verdicts, row: QueueRow) -> float | None:
    """JEDI's weight of ROW's queue when ROW is a +use / -low_weight swap at a tie: JEDI's weight (its candidate
    weight or the weight= of its -low_weight line) equals ours (our candidate weight, or our -low_weight reason
    saying the queue's weight is the cut weight); else None."""
    if {row.ours, row.jedi} != {USE, LOW_WEIGHT}:
        return None
    m = JEDI_WEIGHT.search(row.jedi_reason) if row.jedi == LOW_WEIGHT else None
    jw = jedi.candidates[row.name] if row.jedi == USE else float(m[1]) if m else None
    if jw is None:
        return None
    if row.ours == USE:
        printed = m[1] if m else ""  # JEDI's line prints the weight with a fixed number of decimals
        decimals = len(printed.partition(".")[2]) if "." in printed and "e" not in printed.lower() else None
        w = ours.candidates[row.name]
        near = _close(w, jw) or (decimals is not None and abs(w - jw) <= 0.5 * 10.0**-decimals)
        return jw if near else None
    cut = OUR_CUT.match(row.ours_reason)
    return jw if cut and cut[1] == cut[2] == f"{jw:.4g}" else None


def mark_ties(ours: Verdicts, jedi: Verdicts, rows: list[QueueRow]) -> None:
    """Analysis: JEDI orders the candidates by weight and shuffles equal weights (random.shuffle), then keeps the
    best 10; ours breaks ties by name. Swaps between +use and -low_weight among queues of one weight at the cut, as
    many each way, are the same decision: those rows agree, marked ``tie``."""
    groups: dict[str, list[QueueRow]] = {}
    for row in rows:
        w = _tie_weight(ours, jedi, row) if row.differs == "verdict" else None
        if w is not None:
            groups.setdefault(f"{w:.7f}", []).append(row)  # JEDI's line prints weight={weight:.7f}
    for group in groups.values():
        if sum(r.ours == USE for r in group) == sum(r.jedi == USE for r in group):
            for r in group:
                r.differs, r.tie = "", TIE_NOTE


@dataclass
class Totals:
    """Agreement of one broker over many tasks."""

    tasks: int = 0
    identical: int = 0
    accepted: int = 0
    verdicts: int = 0
    verdicts_agree: int = 0
    weights: int = 0
    weights_agree: int = 0
    errors: int = 0
    panda_bugs: Counter = field(default_factory=Counter)
    ours_ms: float = 0.0
    jedi_ms: float = 0.0
    kinds: Counter = field(default_factory=Counter)  # (field, ours, jedi) -> count, not allowed
    allowed: Counter = field(default_factory=Counter)  # the same, covered by the allow-list or a known crash
    unmapped: Counter = field(default_factory=Counter)
    ties: int = 0  # +use / -low_weight swaps at equal weights (mark_ties), counted as agreeing

    def add(self, c: TaskComparison) -> None:
        self.tasks += 1
        self.identical += c.identical
        self.accepted += c.accepted
        self.errors += bool(c.jedi.error) and not c.panda_bug
        if c.panda_bug:
            self.panda_bugs[c.panda_bug] += 1
        self.ours_ms += c.ours.ms
        self.jedi_ms += c.jedi.ms
        self.unmapped.update(c.jedi.unmapped)
        for r in c.rows:
            self.ties += bool(r.tie)
            self.verdicts += 1
            self.verdicts_agree += r.differs != "verdict"
            if r.ours == USE and r.jedi == USE:
                self.weights += 1
                self.weights_agree += r.differs not in ("weight", "probability")
            if r.differs and r.allowed:
                self.allowed[(r.differs, r.ours, r.jedi)] += 1
            elif r.differs:
                self.kinds[(r.differs, r.ours, r.jedi)] += 1

    def to_dict(self) -> dict[str, Any]:
        def pct(a: int, b: int) -> float | None:
            return round(100.0 * a / b, 3) if b else None

        return {
            "tasks": self.tasks, "tasks_identical": self.identical, "tasks_identical_pct": pct(self.identical, self.tasks),
            "tasks_accepted": self.accepted, "tasks_accepted_pct": pct(self.accepted, self.tasks),
            "verdicts": self.verdicts, "verdicts_agree": self.verdicts_agree,
            "verdicts_agree_pct": pct(self.verdicts_agree, self.verdicts), "weights": self.weights,
            "weights_agree": self.weights_agree, "weights_agree_pct": pct(self.weights_agree, self.weights),
            "jedi_errors": self.errors, "panda_bugs": dict(self.panda_bugs), "ours_ms_per_task": round(self.ours_ms / self.tasks, 3) if self.tasks else None,
            "jedi_ms_per_task": round(self.jedi_ms / self.tasks, 3) if self.tasks else None,
            "differences": [{"field": k[0], "ours": k[1], "jedi": k[2], "count": n} for k, n in self.kinds.most_common()],
            "allowed_differences": [{"field": k[0], "ours": k[1], "jedi": k[2], "count": n}
                                    for k, n in self.allowed.most_common()],
            "unmapped_tokens": dict(self.unmapped), "tie_swaps": self.ties,
        }  # fmt: skip
