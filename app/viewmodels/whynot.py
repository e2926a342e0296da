"""Why a named queue is or is not in a task's job brokerage: ranked, skipped, or never considered."""

from __future__ import annotations

import difflib
from typing import Any

from brokerage.brokers.analysis_filters import ANALYSIS_TYPES
from brokerage.model.explain import Decision
from brokerage.model.snapshot import GridSnapshot

# the queue types each job broker starts from (its preliminary candidates; see brokers/production.py and analysis.py)
START_TYPES: dict[str, tuple[str, ...]] = {"production": ("production", "unified"), "analysis": ANALYSIS_TYPES}
OWNER = {"production": "the production broker", "analysis": "the analysis broker", "unified": "both job brokers"}


def filter_text(filter_model: dict[str, Any] | None, field: str = "queue") -> str:
    """The text an operator typed into the grid's FIELD column filter ('' when none)."""
    f = (filter_model or {}).get(field) or {}
    return str(f.get("filter") or "").strip()


def why_not(snap: GridSnapshot, decision: Decision, name: str) -> tuple[str, str]:
    """(kind, sentence) saying where queue NAME stands in DECISION: ranked, skipped, not considered or unknown.

    Usage: ``why_not(snap, state.job_decision(42), "ANALY_CERN")[1]``
    """
    q = snap.queues
    names = q["panda_queue"].astype(str)
    hit = q[names.str.lower() == name.strip().lower()]
    if hit.empty:
        close = difflib.get_close_matches(name.strip().upper(), [n.upper() for n in names], n=3)
        close_names = [n for n in names if n.upper() in close]
        hint = f" Did you mean {', '.join(close_names)}?" if close_names else ""
        return "unknown", f"No queue is named {name.strip()!r} in this snapshot.{hint}"
    row = hit.iloc[0]
    qn, qtype = str(row["panda_queue"]), str(row.get("type", ""))
    for c in decision.candidates:
        if c.name == qn:
            return "ranked", f"{qn} is ranked #{c.rank} of {len(decision.candidates)} with weight {c.weight:.3g}."
    skip = decision.skip_of(qn)
    if skip is not None:
        return "skipped", f"{qn} was skipped by {skip.criteria} ({skip.stage}): {skip.reason}"
    if decision.extra.get("throttled"):
        return "not considered", f"{qn} was not considered: a throttle held task {decision.task} before any filter ran."
    t = snap.tasks[snap.tasks["jeditaskid"] == decision.task]
    site = str(t.iloc[0].get("site", "") or "") if not t.empty and "site" in t.columns else ""
    wanted = START_TYPES.get(decision.broker)
    if wanted and qtype not in wanted:
        owner = OWNER.get(qtype, f"no job broker (type {qtype!r})")
        return "not considered", (
            f"{qn} is {'an' if qtype[:1] in 'aeiou' else 'a'} {qtype} queue, brokered by {owner}: the {decision.broker} broker of task {decision.task} "
            f"starts only from {' and '.join(wanted)} queues, so it never considers {qn}."
        )
    where = f" (the task is pre-assigned to {site})" if site else ""
    return "not considered", (
        f"{qn} is not among the {decision.broker} broker's preliminary candidates for task {decision.task}{where}: "
        "pre-assigned tasks consider only their named queues."
    )
