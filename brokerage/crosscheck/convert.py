"""A snapshot as the offline JEDI inputs: the grid document the PanDA-side driver (``jedi/driver.py``) reads.

Every table maps onto what PanDA's fakes answer (shared/reference/jedi-offline.md §3 and §6): queues become
schedconfig JSON (CRIC key names) with their ATLAS site and role, endpoints and relations the rows of the fake
cursor, job counts the JOBS_SHARE_STATS rows, queue activity SiteData, the network rows NETWORK_MATRIX_KV, software
the SW_TAGS map, gdpconfig the CONFIG table. Times travel as ages (seconds before the snapshot was taken), so PanDA's
``naive_utcnow()`` sees the same ages. The tasks, their input chunks and rucio's view of their data are in
``brokerage.crosscheck.chunks``. The document is plain JSON: PanDA's side runs in its own venv without numpy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from brokerage.brokers.nucleus_context import task_rw_seconds
from brokerage.brokers.nucleus_panda import jedi_rw
from brokerage.crosscheck.chunks import task_document
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import REGISTRY, Config
from brokerage.model.snapshot import GridSnapshot

UNKNOWN_CLOUD = "XX"  # PanDA drops a production queue with an empty cloud (reference pitfall 5)
ACTIVITIES = ("read_lan", "write_lan", "read_wan", "write_wan")
PSEUDO_WORKER_LABEL = "managed"


def _ages(taken: pd.Timestamp, column: pd.Series) -> list[float | None]:
    """Seconds between each time of COLUMN and TAKEN (None where unknown)."""
    ts = pd.to_datetime(column, utc=True)
    return [None if pd.isna(t) else max((taken - t).total_seconds(), 0.0) for t in ts]


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def queue_rows(snap: GridSnapshot) -> dict[str, Any]:
    """schedconfig_json data of every queue, with its ATLAS site and the site's role (nucleus/satellite)."""
    sites = snap.sites.set_index("site_name")
    out: dict[str, Any] = {}
    for q in snap.queues.to_dict("records"):
        site = sites.loc[q["atlas_site"]] if q["atlas_site"] in sites.index else None
        catchall = str(q["catchall"] or "")
        bare = "" if site is None else str(site["bare_nucleus"] or "")
        if bare and "bareNucleus" not in catchall:
            catchall = ",".join(x for x in (catchall, f"bareNucleus={bare}") if x)
        cloud = q["cloud"] or ("" if site is None else str(site["cloud"] or "")) or UNKNOWN_CLOUD
        data = {
            "nickname": q["panda_queue"], "type": q["type"], "status": q["status"], "cloud": cloud,
            "corecount": int(q["corecount"]), "corepower": float(q["corepower"]), "maxrss": int(q["maxrss"]),
            "minrss": int(q["minrss"]), "maxtime": int(q["maxtime"]), "mintime": int(q["mintime"]),
            "maxwdir": int(q["maxwdir"]), "direct_access_lan": bool(q["direct_access_lan"]), "direct_access_wan": False,
            "transferringlimit": int(q["transferringlimit"]), "releases": list(q["releases"] or []),
            "jobseed": q["jobseed"], "capability": q["capability"], "catchall": catchall,
            "fairsharepolicy": q["fairsharepolicy"] or "", "wnconnectivity": q["wnconnectivity"] or "",
            "maxdiskio": int(q["maxdiskio"]), "pledgedcpu": 0,
            "workflow": "pull_ups" if q["capability"] == "ucore" else "pull",
        }  # fmt: skip
        out[q["panda_queue"]] = {"site": q["atlas_site"], "role": None if site is None else site["role"], "data": data}
    return out


def endpoint_rows(snap: GridSnapshot) -> dict[str, Any]:
    """ddm_endpoint rows (space in GB, detailed_status per activity)."""
    out = {}
    for e in snap.ddm_endpoints.to_dict("records"):
        total, free = float(e["space_total"]), float(e["space_free"])
        out[e["ddm_endpoint_name"]] = {
            "site_name": e["site_name"], "type": e["type"], "is_tape": bool(e["is_tape"]),
            "space_total": total, "space_free": free, "space_expired": float(e["space_expired"]),
            "space_used": max(total - free, 0.0), "space_min_free": 0, "space_unavailable": 0,
            "blacklisted": "N", "blacklisted_read": "N", "blacklisted_write": "N",
            "detailed_status": {a: e[a] for a in ACTIVITIES},
        }  # fmt: skip
    return out


def relation_rows(snap: GridSnapshot) -> list[dict[str, Any]]:
    """panda_ddm_relation rows: every relation reads input (read_lan); the default-write one also writes output."""
    tape = dict(zip(snap.ddm_endpoints["ddm_endpoint_name"], snap.ddm_endpoints["is_tape"], strict=True))
    rows, seen_read = [], set()
    for r in snap.panda_ddm_relation.to_dict("records"):
        q, ep, dw = r["panda_queue"], r["ddm_endpoint_name"], bool(r["default_write"])
        default_read = q not in seen_read and not tape.get(ep, False)
        if default_read:
            seen_read.add(q)
        rows.append({
            "panda_site_name": q, "ddm_endpoint_name": ep, "is_local": "Y", "default_read": "Y" if default_read else "N",
            "default_write": "Y" if dw else "N", "roles": "read_lan,write_lan" if dw else "read_lan",
            "order_read": 1, "order_write": 1, "scope": "default",
        })  # fmt: skip
    return rows


def activity_rows(snap: GridSnapshot, no_pilot_hours: float) -> dict[str, Any]:
    """SiteData per queue: pilots (getJob) and the age of the last job start."""
    q = snap.queues
    taken = pd.Timestamp(snap.taken_at)
    laststart = _ages(taken, q["laststart"])
    lastpilot = _ages(taken, q["lastpilot"])
    out = {}
    for name, npilot, ls, lp in zip(q["panda_queue"], q["npilot"], laststart, lastpilot, strict=True):
        pilots = int(npilot) if lp is None else (0 if lp > no_pilot_hours * 3600 else max(int(npilot), 1))
        out[name] = {"getJob": pilots, "updateJob": 0, "laststart_age": ls}
    return out


def job_stat_rows(snap: GridSnapshot) -> list[dict[str, Any]]:
    jc = snap.job_counts
    return [
        {"site": q, "gshare": g, "resource_type": rt, "status": s, "n": int(n), "vo": vo}
        for q, g, rt, s, n, vo in zip(jc["panda_queue"], jc["gshare"], jc["resource_type"], jc["jobstatus"],
                                      jc["njobs"], jc["vo"], strict=True)
    ]  # fmt: skip


def network_rows(snap: GridSnapshot) -> list[dict[str, Any]]:
    nw = snap.network
    ages = _ages(pd.Timestamp(snap.taken_at), nw["ts"])
    return [
        {"src": s, "dst": d, "key": k, "value": float(v), "age": a or 0.0}
        for s, d, k, v, a in zip(nw["src"], nw["dst"], nw["key"], nw["value"], ages, strict=True)
    ]


def harvester_rows(snap: GridSnapshot) -> tuple[dict[str, Any], list[list[Any]]]:
    """Harvester workers (running = nbatchjob) and numSlots (any share, any resource type) per queue."""
    q = snap.queues
    workers = {
        name: {"harvester": {PSEUDO_WORKER_LABEL: {"SCORE": {"running": int(n)}}}}
        for name, n in zip(q["panda_queue"], q["nbatchjob"], strict=True)
        if n > 0
    }
    slots = [[name, None, None, int(n)] for name, n in zip(q["panda_queue"], q["numslots"], strict=True) if n == n]
    return workers, slots


def software_rows(snap: GridSnapshot) -> dict[str, Any]:
    sw = snap.queue_software
    out = {}
    for r in sw.to_dict("records"):
        arch = r["architectures"]
        out[r["panda_queue"]] = {
            "cmtconfigs": list(r["cmtconfigs"] or []), "containers": list(r["containers"] or []),
            "cvmfs": list(r["cvmfs"] or []), "architectures": [arch] if isinstance(arch, dict) else list(arch or []),
            "tags": list(r["tags"] or []),
        }  # fmt: skip
    return out


def config_rows(config: Config) -> dict[str, Any]:
    """gdpconfig as PanDA's CONFIG table: component:key -> value, for every key PanDA reads (family members too)."""
    out = {}
    for key, value in config.effective().items():
        base = REGISTRY.get(key)
        if base is None:
            fam = [p for p in REGISTRY.values() if p.family and key.startswith(p.key + "_")]
            base = fam[0] if fam else None
        if base is not None and base.in_panda_config and value is not None:
            out[f"{base.component}:{key}"] = _plain(value)
    return out


def share_rows(snap: GridSnapshot) -> list[dict[str, Any]]:
    g = snap.gshares
    return [
        {"name": n, "value": _plain(v) if v == v else 1, "parent": p or None, "queue_id": 10000 + i}
        for i, (n, v, p) in enumerate(zip(g["gshare"], g["value"], g["parent"], strict=True))
    ]


def rw_maps(cache: GridCache, tasks: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, float]]:
    """calculateWorldRWwithPrio_JEDI answers: full RW per nucleus, and per (gshare, priority) of the brokered tasks."""
    out: dict[str, Any] = {"full": {}}
    for task in tasks:  # JEDI's own sums (brokers/nucleus_panda.py): full RW, and per share at the priority and above
        full, prio = jedi_rw(cache, task)
        out["full"] = full
        out[f"{task['gshare']}:{int(task['currentpriority'] or 0)}"] = prio
    own = {
        str(int(task["jeditaskid"])): float(task_rw_seconds(cache).get(int(task["jeditaskid"]), 0.0)) for task in tasks
    }
    return out, own


def analysis_rows(snap: GridSnapshot, config: Config) -> dict[str, Any]:
    """What the analysis broker reads besides the grid: per-user jobs, the task's finished/failed/closed jobs,
    to-running rates, and the Metrics rows (site classes, global-share usage, user and task evaluation)."""
    u = snap.user_job_counts
    user_jobs = [
        {"site": q, "gshare": g, "user": p, "wg": w or None, "status": s, "n": int(n), "cores": int(c)}
        for q, g, p, w, s, n, c in zip(u["panda_queue"], u["gshare"], u["produsername"], u["workinggroup"],
                                       u["jobstatus"], u["njobs"], u["ncores"], strict=True)
    ]  # fmt: skip
    tj = snap.task_job_counts
    ages = _ages(pd.Timestamp(snap.taken_at), tj["modificationtime"])
    task_jobs: dict[str, list[dict[str, Any]]] = {}
    for t, q, s, n, a in zip(tj["jeditaskid"], tj["panda_queue"], tj["jobstatus"], tj["njobs"], ages, strict=True):
        task_jobs.setdefault(str(int(t)), []).append({"site": q, "status": s, "n": int(n), "age": a or 0.0})
    q = snap.queues
    threshold_a = int(config["USER_USAGE_THRESHOLD_A"]) if "USER_USAGE_THRESHOLD_A" in config.effective() else 1000
    users = snap.users
    metrics = {
        "site_class": {n: int(c) for n, c in zip(q["panda_queue"], q["site_class"], strict=True) if c == c},
        "gshare_usage": {g: {"usage_perc": float(p) / 100.0} for g, p in zip(snap.gshares["gshare"], snap.gshares["usage_perc"], strict=True)},
        "user_eval": {p: {"rem_slots_A": max(threshold_a - int(h), 0), "rem_slots_B": max(threshold_a - int(h), 0)}
                      for p, h in zip(users["produsername"], users["running_slots_hi"], strict=True)},
        "task_eval": {str(int(t)): {"class": int(c)} for t, c in zip(snap.tasks["jeditaskid"], snap.tasks["task_class"], strict=True) if c == c},
    }  # fmt: skip
    trr = {n: float(r) for n, r in zip(q["panda_queue"], q["trr"], strict=True)}
    return {"user_jobs": user_jobs, "task_jobs": task_jobs, "trr": trr, "metrics": metrics}


def grid_document(cache: GridCache, config: Config, tasks: list[dict[str, Any]], seed: int = 0) -> dict[str, Any]:
    """One grid of the driver's input: every table PanDA's fakes answer from, and the TASKS to broker there.

    TASKS are task rows (``views.task_row``) with a ``brokers`` list (``prod``, ``nucleus``, ``anal``).
    Usage: ``grid_document(cache, Config(), [dict(views.task_row(cache, 1), brokers=["prod"])])``
    """
    snap = cache.snap
    workers, slots = harvester_rows(snap)
    world_rw, task_rw = rw_maps(cache, tasks)
    users = snap.users
    over = [p for p, x in zip(users["produsername"], users["disk_quota_exceeded"], strict=True) if x]
    rucio: dict[str, Any] = {
        "dids": {},
        "dataset_replicas": {},
        "file_replicas": {},
        "rules": {},
        "quota_exceeded": over,
    }
    docs = [task_document(cache, t, config, rucio, seed) for t in tasks]
    return {
        "seed": seed, "queues": queue_rows(snap), "ddm_endpoints": endpoint_rows(snap),
        "panda_ddm_relation": relation_rows(snap), "job_stats": job_stat_rows(snap),
        "avg_diskio": {q: float(v) for q, v in zip(snap.queues["panda_queue"], snap.queues["diskio_avg"], strict=True)},
        "site_data": activity_rows(snap, float(config["NO_PILOT_HOURS"])), "network": network_rows(snap),
        "worker_stats": workers, "harvester_slots": slots, "sw_tags": software_rows(snap),
        "config": config_rows(config), "gshares": share_rows(snap), "work_queues": [],
        "world_rw": world_rw, "task_rw": task_rw, "task_params": {d["spec"]["jediTaskID"]: d["task_params"] for d in docs},
        "rucio": rucio, "tasks": docs, **analysis_rows(snap, config),
    }  # fmt: skip
