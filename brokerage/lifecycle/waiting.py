"""Which tasks are waiting for brokerage: the statuses JEDI's brokers act on, highest priority first."""

from __future__ import annotations

from brokerage.snapshot import GridSnapshot

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


def needs_nucleus(snap: GridSnapshot, task_ids: list[int] | None = None) -> list[int]:
    """Production tasks among TASK_IDS (default: all) still in 'assigning' without a nucleus: task brokerage's input.

    Usage: ``needs_nucleus(snap)``
    """
    t = snap.tasks
    if t.empty:
        return []
    m = (t["status"] == "assigning") & t["nucleus"].isna() & (t["prodsourcelabel"] != "user")
    ids = [int(x) for x in t.loc[m, "jeditaskid"]]
    if task_ids is None:
        return ids
    keep = set(ids)
    return [int(x) for x in task_ids if int(x) in keep]
