"""One task's entry in a report: its job brokerage and, while it needs one, its nucleus brokerage."""

from __future__ import annotations

from dataclasses import dataclass

from brokerage.model.explain import Decision


@dataclass(frozen=True)
class TaskEntry:
    """One task of a report: its job brokerage and, while it still needs one, its nucleus brokerage."""

    task: int
    label: str  # prodsourcelabel: picks the job broker
    task_status: str  # JEDI task status
    njobs: float  # chunk_njobs: jobs of this cycle spread over the candidates
    job: Decision | None
    nucleus: Decision | None = None
    error: str = ""
