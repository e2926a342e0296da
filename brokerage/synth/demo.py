"""Realistic, deterministic demo grid generator: ATLAS-like sites, queues, storage, links, jobs and tasks.

The grid is deterministic from its seed: the same (seed, queues, tasks, taken_at) gives the same snapshot, bit
for bit. Each table family draws from its own random stream (so the task count leaves queues, sites, storage
and links unchanged), and inside a family the draws come in a fixed order. The tables are built in
``sites``, ``queues``, ``storage``, ``network``, ``jobs`` (with ``users`` and ``shares``), ``software`` and
``tasks`` (with ``task_needs``, ``task_software``, ``chains``, ``datasets`` and ``recent_jobs``); this module
only seeds the streams and assembles the snapshot. ``describe`` counts the cases the grid holds per rule.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from brokerage.dirac.demo import dirac_columns
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import PROFILE_KEY, PROFILES, SEED
from brokerage.model.snapshot import TABLES, GridSnapshot
from brokerage.synth.common import DEFAULT_TAKEN_AT, MAX_SITES, QUEUES_PER_SITE
from brokerage.synth.describe import describe
from brokerage.synth.jobs import job_count_rows, make_jobs
from brokerage.synth.network import network
from brokerage.synth.placement import reach
from brokerage.synth.queues import make_queues
from brokerage.synth.shares import SHARES, share_usage, shares_and_slots
from brokerage.synth.sites import site_catalog, site_columns
from brokerage.synth.software import software_rows
from brokerage.synth.storage import endpoints, relations
from brokerage.synth.tables import table
from brokerage.synth.tasks import make_tasks
from brokerage.synth.users import user_rows

__all__ = ["DEFAULT_TAKEN_AT", "demo_snapshot", "describe", "grid_columns"]

# one random stream per table family, spawned in this order from the seed (never reorder: the grid would change)
_STREAMS = ("sites", "queues", "ep", "net", "jobs", "sw", "tasks", "rows")


def grid_columns(
    seed: int, queues: int, tasks: int, taken: pd.Timestamp, sustained: bool = True, rules: str = SEED
) -> dict[str, dict[str, Any]]:
    """Every table of the demo grid as column arrays. SUSTAINED: each share's jobs sit only at queues its tasks'
    job brokerage accepts under the rule profile RULES (the grid is drawn once, its tasks brokered, and the job
    counts drawn again, from the same streams, kept to those queues), so the simulator can keep the grid running
    under that profile (issue 30).

    Usage: ``grid_columns(0, 60, 200, pd.Timestamp(DEFAULT_TAKEN_AT))["queues"]["panda_queue"]``
    """
    columns = _columns(seed, queues, tasks, taken, None)
    if not sustained:
        return columns
    snap = GridSnapshot({name: table(name, columns[name]) for name in TABLES}, taken.to_pydatetime())
    return _columns(seed, queues, tasks, taken, reach(snap, SHARES, Config().with_overrides({PROFILE_KEY: rules})))


def _columns(
    seed: int, queues: int, tasks: int, taken: pd.Timestamp, where: np.ndarray | None
) -> dict[str, dict[str, Any]]:
    """The tables as column arrays, the job counts kept to WHERE (queue, share) when given."""
    streams = np.random.SeedSequence(seed).spawn(len(_STREAMS))
    rng = {k: np.random.default_rng(s) for k, s in zip(_STREAMS, streams, strict=True)}
    n_sites = max(1, min(MAX_SITES, round(queues / QUEUES_PER_SITE), queues))
    sites = site_catalog(rng["sites"], n_sites)
    q = make_queues(rng["queues"], sites, queues)
    ep = endpoints(rng["ep"], sites, q)
    jobs = make_jobs(rng["jobs"], sites, q, taken, where)
    jc_rows = job_count_rows(rng["rows"], q, jobs)
    users_jobs, users = user_rows(q, jobs.pairs, jobs.users, jobs.user_group)
    running = None if where is None else dict(zip(SHARES, jobs.jc[:, :, 0].sum(axis=0).tolist(), strict=True))
    task_cols, ds, reps, history = make_tasks(rng["tasks"], tasks, sites, q, ep, jobs, taken, running)
    queue_cols: dict[str, Any] = {
        "panda_queue": q.name,
        "atlas_site": sites.name[q.site],
        "cloud": sites.cloud[q.site],
        "type": q.type,
        "status": q.status,
        "corecount": q.corecount,
        **q.cols,
        **jobs.dynamic,
    }
    usage = share_usage(rng["rows"])
    return {
        "queues": queue_cols,
        "sites": site_columns(sites),
        "ddm_endpoints": ep,
        "panda_ddm_relation": relations(sites, q, ep),
        "network": network(rng["net"], sites, taken),
        "job_counts": jc_rows,
        "job_ages": {},  # the demo's jobs have no recorded ages: the simulator draws them
        "user_job_counts": users_jobs,
        "task_job_counts": history,
        "users": users,
        **shares_and_slots(q.name, jobs.jc, jobs.dynamic["numslots"], usage),
        "tasks": task_cols,
        "datasets": ds,
        "dataset_replicas": reps,
        "queue_software": software_rows(rng["sw"], q),
        "task_status_log": {"jeditaskid": [], "status": [], "modificationtime": []},
        **dirac_columns(seed),
    }


def demo_snapshot(
    seed: int = 0,
    queues: int = 700,
    tasks: int = 3000,
    taken_at: datetime | None = None,
    sustained: bool = True,
    rules: str = SEED,
) -> GridSnapshot:
    """A realistic ATLAS-like grid, identical for the same (seed, queues, tasks, taken_at, rules); SUSTAINED (the
    default) keeps each share's jobs where its tasks can go under the rule profile RULES (``grid_columns``).

    Usage: ``snap = demo_snapshot(seed=1); describe(snap)["backlogged_nuclei"]``
    """
    if seed < 0:
        raise ValueError(f"seed: {seed} is below the minimum 0")
    if queues < 1:
        raise ValueError(f"queues: {queues} is below the minimum 1")
    if tasks < 0:
        raise ValueError(f"tasks: {tasks} is below the minimum 0")
    when = taken_at or DEFAULT_TAKEN_AT
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    taken = pd.Timestamp(when).tz_convert("UTC").floor("s")
    if rules not in PROFILES:
        raise ValueError(f"rules: {rules!r} is not a rule profile; allowed: {', '.join(PROFILES)}")
    columns = grid_columns(seed, queues, tasks, taken, sustained, rules)
    tables = {name: table(name, columns[name]) for name in TABLES}
    name = f"demo-s{seed}-q{queues}-t{tasks}" + ("" if rules == SEED else f"-{rules}")
    return GridSnapshot(tables, taken.to_pydatetime(), snapshot_id=name)
