"""New tasks arriving during a run, at the creation rates the snapshot's recent history shows (issue 30).

The plan is drawn once per run from the snapshot and the seed alone (never the config), so two configs compared
from one seed see the same arrivals. Per (prodSourceLabel, global share): the tasks whose first logged status
(``task_status_log``, their creation) lies in the last ARRIVAL_WINDOW_H before the snapshot, over that window, are
the hourly rate; with no history at all, every share's live tasks renew once in DEFAULT_TASK_LIFETIME_H. Arrival
times are a Poisson process per share; each new task copies a task of its share drawn from the snapshot (its
label, needs and input size), its master input whole again, and enters as ``registered``: the agent moves it to
``defined`` (TaskRefiner), from where ContentsFeeder and TaskBroker take it as any other task.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from brokerage.model.snapshot import GridSnapshot

ARRIVAL_WINDOW_H = 168.0  # the recent history read: tasks created in the last 7 days
DEFAULT_TASK_LIFETIME_H = 168.0  # no history: a share's live tasks renew once a week
PLAN_HOURS = 528.0  # arrivals are planned this far (the simulator's longest run, 22 days)
LIVE_STATUSES = ("registered", "defined", "assigning", "ready", "pending", "scouting", "scouted", "running")


@dataclass(frozen=True)
class Plan:
    """Arrival times (s from the run's start, ascending), the snapshot task each copies, and the hourly rates."""

    at_s: np.ndarray
    template: np.ndarray  # jeditaskid of the copied task
    rates: dict[tuple[str, str], float]  # (prodsourcelabel, gshare) -> tasks per hour
    source: str  # "history" or "default"


def rates(snap: GridSnapshot) -> tuple[dict[tuple[str, str], float], str]:
    """Tasks per hour per (prodsourcelabel, gshare): created in the last ARRIVAL_WINDOW_H (the first entry of each
    task in task_status_log) over the window; with an empty log, live tasks / DEFAULT_TASK_LIFETIME_H.

    Usage: ``rates(demo_grid())[0][("managed", "MC Simulation")]``
    """
    t = snap.tables["tasks"]
    log = snap.tables["task_status_log"]
    keys = t.set_index("jeditaskid")[["prodsourcelabel", "gshare"]]
    if len(log) and len(t):
        first = pd.to_datetime(log.groupby("jeditaskid")["modificationtime"].min(), utc=True)
        age_h = (pd.Timestamp(snap.taken_at) - first).dt.total_seconds() / 3600.0
        recent = age_h[(age_h >= 0) & (age_h <= ARRIVAL_WINDOW_H)].index
        made = keys.reindex(recent).dropna().value_counts()
        return {(str(k[0]), str(k[1])): n / ARRIVAL_WINDOW_H for k, n in made.items()}, "history"
    live = keys[t.set_index("jeditaskid")["status"].isin(LIVE_STATUSES)].value_counts()
    return {(str(k[0]), str(k[1])): n / DEFAULT_TASK_LIFETIME_H for k, n in live.items()}, "default"


def plan(snap: GridSnapshot, seed: int, hours: float = PLAN_HOURS) -> Plan:
    """The run's arrivals over HOURS, from SNAP and SEED only: per share a Poisson process at its rate, each
    arrival copying a task of its share drawn uniformly.

    Usage: ``p = plan(snap, seed=0); len(p.at_s)``
    """
    rng = np.random.default_rng([seed, 3])
    per_share, source = rates(snap)
    t = snap.tables["tasks"]
    at: list[np.ndarray] = []
    tpl: list[np.ndarray] = []
    for (label, share), rate in sorted(per_share.items()):
        ids = t.loc[(t["prodsourcelabel"] == label) & (t["gshare"] == share), "jeditaskid"].to_numpy(np.int64)
        n = int(rng.poisson(rate * hours)) if len(ids) else 0
        at.append(np.sort(rng.uniform(0.0, hours * 3600.0, n)))
        tpl.append(np.sort(ids)[rng.integers(0, len(ids), n)] if n else np.zeros(0, np.int64))
    times = np.concatenate(at) if at else np.zeros(0)
    templates = np.concatenate(tpl) if tpl else np.zeros(0, np.int64)
    order = np.argsort(times, kind="stable")
    return Plan(times[order], templates[order], per_share, source)


def new_tables(
    snap: GridSnapshot, templates: np.ndarray, first_id: int, first_dataset: int
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tasks, datasets and replicas of new tasks copying TEMPLATES (ids from FIRST_ID, dataset ids from
    FIRST_DATASET), registered, without nucleus, their inputs unused.

    Usage: ``tasks, ds, reps = new_tables(snap, np.array([42]), 10**9, 10**9)``
    """
    t = snap.tables["tasks"].set_index("jeditaskid")
    new_ids = np.arange(first_id, first_id + len(templates), dtype=np.int64)
    tasks = t.loc[templates].reset_index(drop=True)
    tasks.insert(0, "jeditaskid", new_ids)
    tasks["status"] = "registered"
    tasks["nucleus"] = None
    tasks["frozentime"] = pd.NaT
    tasks["modificationtime"] = pd.NaT
    tasks["currentpriority"] = tasks["taskpriority"]
    tasks = tasks[snap.tables["tasks"].columns]
    ds = snap.tables["datasets"]
    reps = snap.tables["dataset_replicas"]
    ds_parts, rep_parts = [], []
    next_ds = first_dataset
    for pos, tpl in enumerate(templates.tolist()):
        d = ds[ds["jeditaskid"] == tpl].copy()
        ids = np.arange(next_ds, next_ds + len(d), dtype=np.int64)
        next_ds += len(d)
        r = reps[reps["jeditaskid"] == tpl].copy()
        r["datasetid"] = r["datasetid"].map(dict(zip(d["datasetid"], ids, strict=True)))
        d["datasetid"], d["neventsused"] = ids, 0
        d["jeditaskid"] = r["jeditaskid"] = int(new_ids[pos])
        ds_parts.append(d)
        rep_parts.append(r.dropna(subset=["datasetid"]))
    return (tasks, pd.concat([ds.iloc[:0], *ds_parts], ignore_index=True),
            pd.concat([reps.iloc[:0], *rep_parts], ignore_index=True))  # fmt: skip
