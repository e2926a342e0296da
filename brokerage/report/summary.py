"""Grid-wide totals of a report: outcomes, skips per criteria code, expected jobs per queue and per nucleus."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from brokerage.brokers.batch import shares  # one definition of a candidate's share, shared with the tuning page
from brokerage.model.explain import Decision
from brokerage.report.entry import TaskEntry


def _add(into: dict[str, float], items: Mapping[str, float], scale: float) -> None:
    for name, share in items.items():
        into[name] = into.get(name, 0.0) + share * scale


def _count(into: dict[str, int], decision: Decision) -> None:
    for code, n in decision.criteria_counts().items():  # counted from the masks: no Skip objects built
        into[code] = into.get(code, 0) + n


def _desc(d: Mapping[str, float]) -> dict[str, Any]:
    return dict(sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))


def summarise(entries: Iterable[TaskEntry]) -> dict[str, Any]:
    """Totals over ENTRIES; expected jobs of a queue = Σ over tasks of chunk_njobs × weight / Σ weights.

    Usage: ``summarise(report.tasks)["expected_jobs_per_queue"]``
    """
    n = with_cands = pending = errors = nuc_n = nuc_pending = 0
    skips: dict[str, int] = {}
    nuc_skips: dict[str, int] = {}
    per_queue: dict[str, float] = {}
    per_nucleus: dict[str, float] = {}
    tasks_per_nucleus: dict[str, float] = {}
    brokers: dict[str, int] = {}
    for e in entries:
        n += 1
        if e.error:
            errors += 1
        if e.job is not None:
            brokers[e.job.broker] = brokers.get(e.job.broker, 0) + 1
            if e.job.status == "ok" and e.job.candidates:
                with_cands += 1
            elif not e.error:
                pending += 1
            _count(skips, e.job)
            _add(per_queue, shares(e.job), e.njobs)
        if e.nucleus is not None:
            nuc_n += 1
            nuc_pending += e.nucleus.status != "ok"
            _count(nuc_skips, e.nucleus)
            s = shares(e.nucleus)
            _add(per_nucleus, s, e.njobs)
            _add(tasks_per_nucleus, s, 1.0)
    return {
        "tasks": n,
        "with_candidates": with_cands,
        "pending": pending,
        "errors": errors,
        "brokers": dict(sorted(brokers.items())),
        "nucleus_decisions": nuc_n,
        "nucleus_pending": nuc_pending,
        "skips_by_criteria": _desc(skips),
        "nucleus_skips_by_criteria": _desc(nuc_skips),
        "expected_jobs_per_queue": _desc({k: round(v, 6) for k, v in per_queue.items()}),
        "expected_jobs_per_nucleus": _desc({k: round(v, 6) for k, v in per_nucleus.items()}),
        "expected_tasks_per_nucleus": _desc({k: round(v, 6) for k, v in tasks_per_nucleus.items()}),
    }
