"""Pending tasks and why: throttles, every queue skipped, no nucleus; rows for /pending and /api/pending."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from brokerage.brokers.batch import GridRun, Key
from brokerage.model.explain import Decision
from brokerage.model.snapshot import GridSnapshot

THROTTLE = "throttle"
ALL_SKIPPED = "all queues skipped"
NO_NUCLEUS = "no nucleus"
BROKER_LABEL = {"task": "nucleus", "production": "production jobs", "analysis": "analysis jobs"}
PENDING_COLUMNS = ("task", "taskname", "kind", "reason", "top_criteria", "broker", "user", "gshare", "status")


def throttle_sentence(decision: Decision) -> str | None:
    """The throttle that held the task before any filter ran, as a headline sentence; None when none held.

    Usage: ``throttle_sentence(state.job_decision(7))``
    """
    if not decision.extra.get("throttled"):
        return None
    why = decision.message.removeprefix("throttle to generate jobs due to ").strip()
    return f"Held before any filter ran: no jobs are generated because {why}."


def top_criteria(criteria: Mapping[str, int], top: int = 3) -> str:
    """The criteria codes that removed most candidates, e.g. "-nucleus_only 406, -status 59"."""
    ranked = sorted(criteria.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return ", ".join(f"{code} {n}" for code, n in ranked)


def reason(broker: str, criteria: Mapping[str, int], decision: Decision | None) -> tuple[str, str]:
    """(kind, sentence) of why a pending brokerage found nothing; DECISION is needed only when CRITERIA is empty."""
    if decision is not None and (sentence := throttle_sentence(decision)):
        return THROTTLE, sentence
    skipped = sum(criteria.values())
    what = "nuclei" if broker == "task" else "queues"
    kind = NO_NUCLEUS if broker == "task" else ALL_SKIPPED
    if not skipped:
        msg = decision.message if decision is not None and decision.message else "no candidate to consider"
        return kind, f"No {what} to consider: {msg}."
    return kind, f"All {skipped} {what} skipped; most by {top_criteria(criteria)}."


def pending_rows(
    snap: GridSnapshot, run: GridRun, decide: Callable[[Key], Decision], criteria: str | None = None
) -> list[dict[str, Any]]:
    """One row per pending brokerage of the run, with its reason; DECIDE(key) is called only for unexplained rows.
    CRITERIA (a code such as "-cpucore") keeps the brokerages in which that code removed a candidate.

    Usage: ``pending_rows(snap, whatif.base_run(), lambda k: state.job_decision(k[1]))``
    """
    tasks = snap.tasks.set_index("jeditaskid")
    rows: list[dict[str, Any]] = []
    for key in sorted(run.outcomes):
        o = run.outcomes[key]
        if o.status == "ok" or (criteria and not o.criteria.get(criteria)):
            continue
        broker, tid = key
        kind, sentence = reason(broker, o.criteria, None if o.criteria else decide(key))
        t = tasks.loc[tid] if tid in tasks.index else {}
        rows.append(
            {
                "task": tid,
                "taskname": str(t.get("taskname", "") or ""),
                "kind": kind,
                "reason": sentence,
                "top_criteria": top_criteria(o.criteria),
                **({"removed_by_criteria": int(o.criteria[criteria])} if criteria else {}),
                "broker": BROKER_LABEL.get(broker, broker),
                "user": str(t.get("username", "") or ""),
                "gshare": str(t.get("gshare", "") or ""),
                "status": str(t.get("status", "") or ""),
            }
        )
    return rows


def kind_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many pending rows each kind of reason holds, e.g. {"throttle": 2, "all queues skipped": 5}."""
    out: dict[str, int] = {}
    for r in rows:
        out[r["kind"]] = out.get(r["kind"], 0) + 1
    return out
