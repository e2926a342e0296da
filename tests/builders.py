"""Tiny hand-built grids for hand-computed broker tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from brokerage.model.snapshot import GridSnapshot, frame
from brokerage.model.tables import TABLES

TAKEN_AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
RECENT = "2026-11-20T11:50:00Z"


def queue(name: str, site: str, **kw: Any) -> dict[str, Any]:
    """A healthy online production queue at SITE; keyword arguments override columns."""
    row = {
        "panda_queue": name,
        "atlas_site": site,
        "type": "production",
        "status": "online",
        "corecount": 1,
        "corepower": 10.0,
        "maxrss": 4000,
        "maxtime": 172800,
        "maxwdir": 20000,
        "releases": ["ANY"],
        "laststart": RECENT,
        "npilot": 10,
    }
    row.update(kw)
    return row


def counts(q: str, gshare: str = "MC Simulation", **status: int) -> list[dict[str, Any]]:
    """job_counts rows for queue Q, e.g. counts('A', running=10, activated=3)."""
    return [{"panda_queue": q, "gshare": gshare, "jobstatus": s, "njobs": n} for s, n in status.items()]


def task(tid: int = 1, **kw: Any) -> dict[str, Any]:
    """A plain single-core production task; keyword arguments override columns."""
    row = {
        "jeditaskid": tid,
        "prodsourcelabel": "managed",
        "status": "ready",
        "gshare": "MC Simulation",
        "processingtype": "simul",
        "currentpriority": 500,
        "taskpriority": 500,
        "corecount": 1,
        "ramcount": 2000,
        "ramunit": "MBPerCore",
    }
    row.update(kw)
    return row


def grid(
    queues: list[dict[str, Any]],
    tasks: list[dict[str, Any]],
    sites: list[dict[str, Any]] | None = None,
    **tables: list[dict[str, Any]],
) -> GridSnapshot:
    """A validated snapshot: sites default to one per queue site (role satellite), one DATADISK each."""
    if sites is None:
        sites = [{"site_name": s, "role": "satellite"} for s in sorted({q["atlas_site"] for q in queues})]
    site_names = [s["site_name"] for s in sites]
    tables.setdefault(
        "ddm_endpoints",
        [
            {"ddm_endpoint_name": f"{s}_DATADISK", "site_name": s, "space_total": 1e6, "space_free": 5e5}
            for s in site_names
        ],
    )
    tables.setdefault(
        "panda_ddm_relation",
        [
            {"panda_queue": q["panda_queue"], "ddm_endpoint_name": f"{q['atlas_site']}_DATADISK", "default_write": True}
            for q in queues
        ],
    )
    data: dict[str, Any] = {"taken_at": TAKEN_AT.strftime("%Y-%m-%dT%H:%M:%SZ"), "queues": queues, "tasks": tasks}
    data["sites"] = sites
    data.update(tables)
    snap_tables = {name: frame(name, data.get(name, [])) for name in TABLES}
    snap = GridSnapshot(snap_tables, TAKEN_AT, "test")
    # round-trip through validation so fixtures obey the same rules as files
    return GridSnapshot.from_dict(snap.to_dict())


def anal_queue(name: str, site: str, **kw: Any) -> dict[str, Any]:
    """A healthy online analysis queue at SITE (mid-class, no VP); keyword arguments override columns."""
    row = queue(name, site, type="analysis", site_class=0)
    row.update(kw)
    return row


def anal_task(tid: int = 1, **kw: Any) -> dict[str, Any]:
    """A plain single-core User Analysis task of user 'alice' without input; keyword arguments override columns."""
    row = task(
        tid,
        prodsourcelabel="user",
        gshare="User Analysis",
        processingtype="panda-client",
        username="alice",
        taskpriority=1000,
        currentpriority=1000,
        task_class=1,
        chunk_njobs=10,
    )
    row.update(kw)
    return row


def user_counts(
    q: str, user: str = "alice", gshare: str = "User Analysis", workinggroup: str = "", cores: int = 1, **status: int
) -> list[dict[str, Any]]:
    """user_job_counts rows for USER at queue Q, e.g. user_counts('A', running=10, activated=3); ncores = njobs x CORES."""
    return [
        {"panda_queue": q, "gshare": gshare, "produsername": user, "workinggroup": workinggroup, "jobstatus": s,
         "njobs": n, "ncores": n * cores}
        for s, n in status.items()
    ]  # fmt: skip


def task_counts(tid: int, q: str, when: str = RECENT, **status: int) -> list[dict[str, Any]]:
    """task_job_counts rows of task TID at queue Q ended at WHEN, e.g. task_counts(1, 'A', failed=3, finished=1)."""
    return [
        {"jeditaskid": tid, "panda_queue": q, "jobstatus": s, "modificationtime": when, "njobs": n}
        for s, n in status.items()
    ]


# --- helpers for task (nucleus) brokerage tests ---------------------------------------------------


def site(name: str, role: str = "nucleus", **kw: Any) -> dict[str, Any]:
    """A sites row (a nucleus by default); keyword arguments override columns, e.g. bare_nucleus='only'."""
    return {"site_name": name, "role": role, **kw}


def endpoint(name: str, site_name: str, **kw: Any) -> dict[str, Any]:
    """A DDM endpoint at SITE_NAME: 1000 TB total, 500 TB free unless overridden (sizes in GB)."""
    return {"ddm_endpoint_name": name, "site_name": site_name, "space_total": 1e6, "space_free": 5e5, **kw}


def dataset(tid: int, did: int, **kw: Any) -> dict[str, Any]:
    """A master input dataset of task TID; keyword arguments override columns (nfiles, size_gb, nevents, ...)."""
    return {"jeditaskid": tid, "datasetid": did, "is_master": True, **kw}


def replica(tid: int, did: int, rse: str, **kw: Any) -> dict[str, Any]:
    """Files of dataset DID of task TID held at endpoint RSE (nfiles, size_gb)."""
    return {"jeditaskid": tid, "datasetid": did, "ddm_endpoint_name": rse, **kw}


def queued_to(nucleus: str, files: float, src: str = "SAT") -> dict[str, Any]:
    """A fresh network row: FILES of production output queued from SRC to NUCLEUS."""
    return {"src": src, "dst": nucleus, "key": "Production Output_queued", "value": files, "ts": RECENT}


SIM_LEAVES = {"Production": ("MC Simulation", "Reprocessing", "Express"), "Analysis": ("User Analysis",)}


def sim_tables(queues: list[dict[str, Any]], job_counts: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The simulator's tables for a small grid: a share tree (Production 80 / Analysis 20, leaves equal within
    their branch, all throttled), one catch-all work queue per label, and each queue's slots = its running jobs."""
    shares = [{"gshare": b, "parent": "", "value": v} for b, v in (("Production", 80.0), ("Analysis", 20.0))]
    shares += [{"gshare": leaf, "parent": b, "value": 1.0} for b, leaves in SIM_LEAVES.items() for leaf in leaves]
    wqs = [
        {"queue_id": 1, "queue_name": "managed", "queue_type": "managed", "queue_order": 100},
        {"queue_id": 2, "queue_name": "user", "queue_type": "user", "queue_order": 100},
    ]
    running: dict[str, int] = {}
    for row in job_counts:
        if row["jobstatus"] == "running":
            running[row["panda_queue"]] = running.get(row["panda_queue"], 0) + int(row["njobs"])
    slots = [{"panda_queue": q["panda_queue"], "nslots": running.get(q["panda_queue"], 0)} for q in queues]
    return {"gshares": shares, "work_queues": wqs, "queue_slots": slots}


def sim_grid_snapshot(
    queues: list[dict[str, Any]], tasks: list[dict[str, Any]], **tables: list[dict[str, Any]]
) -> GridSnapshot:
    """grid() with the simulator's tables (sim_tables) unless TABLES gives them."""
    defaults = sim_tables(queues, tables.get("job_counts", []))
    return grid(queues, tasks, **{**defaults, **tables})
