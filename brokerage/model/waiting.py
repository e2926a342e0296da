"""Which tasks are waiting for brokerage: the statuses JEDI's brokers act on, highest priority first."""

from __future__ import annotations

from brokerage.model.snapshot import GridSnapshot

# statuses in which JEDI still brokers a task's next jobs (or, for 'assigning', its nucleus)
WAITING_TASK_STATUSES: tuple[str, ...] = ("ready", "pending", "assigning", "scouting", "defined", "registered")


def waiting_task_ids(snap: GridSnapshot, limit: int | None = None) -> list[int]:
    """Ids of tasks waiting for brokerage, highest currentpriority first (ties by id), at most LIMIT.

    Usage: ``waiting_task_ids(snap, 100)[0]``
    """
    t = snap.tasks
    if t.empty:
        return []
    w = t[t["status"].isin(WAITING_TASK_STATUSES)].sort_values(
        ["currentpriority", "jeditaskid"], ascending=[False, True]
    )
    ids = w["jeditaskid"] if limit is None else w["jeditaskid"].head(limit)
    return [int(x) for x in ids]
