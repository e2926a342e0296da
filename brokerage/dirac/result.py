"""The result of matching one pilot: per-queue verdicts and reasons, probabilities, the job, JSON and Decision forms."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from brokerage.dirac.pilot import Resource
from brokerage.dirac.rules import RULE_NAMES
from brokerage.dirac.selection import JobChoice
from brokerage.dirac.taskqueues import TaskQueues
from brokerage.framework import Verdict
from brokerage.model.explain import Candidate, Decision, FunnelStep, SkipList
from brokerage.model.gdpconfig import Config


@dataclass
class DiracMatch:
    """One pilot matched against every task queue: per-queue verdicts and reasons, probabilities, the draw.

    ``fails[i, j]`` says task queue row i fails rule ``RULE_NAMES[j]``; sentences are built only by ``to_dict``.
    Usage: ``m = match(snap, "Site=LCG.CERN.cern,CPUTime=40000"); m.to_dict()["matched"]``
    """

    pilot: dict[str, Any]
    resource: Resource
    status: str  # matched, no_match, refused
    message: str
    tqs: TaskQueues
    fails: np.ndarray
    verdicts: dict[str, Verdict | None]
    eligible: np.ndarray
    drawn_from: np.ndarray
    probability: np.ndarray
    matched_row: int | None
    job: JobChoice | None
    funnel: list[FunnelStep]
    skips: SkipList
    not_applied: dict[str, str]
    notes: list[str]
    config: Config
    seed: int

    def verdict_of(self, row: int) -> str:
        """matched, eligible, outranked, excluded or refused."""
        if self.status == "refused":
            return "refused"
        if row == self.matched_row:
            return "matched"
        if self.drawn_from[row]:
            return "eligible"
        return "outranked" if self.eligible[row] else "excluded"

    def reasons(self) -> list[list[dict[str, str]]]:
        """Every failing rule of every task queue row, with its sentence."""
        out: list[list[dict[str, str]]] = [[] for _ in range(len(self.tqs))]
        for j, rule in enumerate(RULE_NAMES):
            idx = np.flatnonzero(self.fails[:, j])
            v = self.verdicts.get(rule)
            if v is None or not len(idx):
                continue
            for i, text in zip(idx.tolist(), v.texts(idx), strict=True):
                out[i].append({"rule": rule, "text": text})
        return out

    def sentence(self, row: int, reasons: list[dict[str, str]]) -> str:
        """One sentence on task queue ROW."""
        verdict = self.verdict_of(row)
        p = float(self.probability[row])
        if verdict == "refused":
            return f"request refused: {self.message}"
        if verdict == "matched":
            return f"matched (chance {p:.4g}); job {self.job.job if self.job else '?'} taken"
        if verdict == "eligible":
            return f"could be matched with probability {p:.4g}"
        if verdict == "outranked":
            top = int(self.tqs.cpu_time[self.drawn_from].max()) if self.drawn_from.any() else 0
            return f"passes every rule, but the seed takes the highest CPUTime bucket first ({top} s)"
        return "; ".join(r["text"] for r in reasons)

    def to_dict(self) -> dict[str, Any]:
        """The JSON printed by ``brokerage dirac match --json``."""
        tq = self.tqs
        reasons = self.reasons() if self.status != "refused" else [[] for _ in range(len(tq))]
        rows = []
        for i in range(len(tq)):
            prio = float(tq.priority[i])
            rows.append(
                {
                    "id": int(tq.tq_id[i]),
                    "verdict": self.verdict_of(i),
                    "reasons": reasons[i],
                    "sentence": self.sentence(i, reasons[i]),
                    "priority": None if prio != prio else prio,
                    "probability": float(self.probability[i]),
                    "jobs": int(tq.njobs[i]),
                    "CPUTime": int(tq.cpu_time[i]),
                    "Owner": str(tq.owner[i]),
                    "OwnerGroup": str(tq.group[i]),
                }
            )
        matched = None
        if self.matched_row is not None and self.job is not None:
            matched = {
                "taskqueue": int(tq.tq_id[self.matched_row]),
                "job": self.job.job,
                "probability": float(self.probability[self.matched_row]),
                "job_priority": self.job.job_priority,
                "job_probability": self.job.job_probability(self.job.job),
                "priorities": self.job.priorities,
                "candidates": {str(k): v for k, v in self.job.candidates.items()},
            }
        return {
            "pilot": self.pilot,
            "resource": self.resource.to_dict(),
            "status": self.status,
            "message": self.message,
            "seed": self.seed,
            "matched": matched,
            "taskqueues": rows,
            "funnel": [f.to_dict() for f in self.funnel],
            "not_applied": self.not_applied,
            "notes": self.notes,
            "config": {k: v for k, v in self.config.changed().items() if k.startswith("DIRAC_")},
        }

    def as_decision(self) -> Decision:
        """The match in the framework's Decision form (candidates = task queues that could be drawn)."""
        rows = np.flatnonzero(self.drawn_from)
        order = rows[np.lexsort((self.tqs.tq_id[rows], -self.probability[rows]))]
        cands = [
            Candidate(
                str(int(self.tqs.tq_id[i])),
                k + 1,
                float(self.tqs.priority[i]),
                {"priority": float(self.tqs.priority[i]), "probability": float(self.probability[i])},
            )
            for k, i in enumerate(order.tolist())
        ]
        return Decision(
            "dirac",
            0,
            "ok" if self.status == "matched" else "pending",
            cands,
            self.skips,
            self.funnel,
            self.config.changed(),
            label="taskqueue",
            message=self.message,
        )
