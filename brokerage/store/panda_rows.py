"""PanDA's table rows (as from-panda selects them) mapped to a grid snapshot, with a note for everything left out."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from brokerage.model.gdpconfig import ConfigRow
from brokerage.model.snapshot import GridSnapshot, empty_snapshot, frame
from brokerage.model.tables import (
    AGE_CLOCKS,
    AGE_RANKS,
    DEFAULT_VO,
    ENDPOINT_ACTIVITIES,
    ENDPOINT_STATUSES,
    JOB_STATUSES,
    TABLES,
)
from brokerage.model.words import count
from brokerage.store.cric import map_queues
from brokerage.store.live_sources import map_live

RAM_UNITS = ("MB", "MBPerCore", "MBPerCoreFixed")
Rows = dict[str, list[dict[str, Any]]]  # table -> its rows as selected


@dataclass
class PandaGrid:
    """What a PanDA database gives: the snapshot, its CONFIG rows, and notes on what was skipped."""

    snapshot: GridSnapshot
    config_rows: list[ConfigRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _utc(t: Any) -> datetime | None:
    if t is None or (not isinstance(t, datetime) and pd.isna(t)):
        return None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def _json(value: Any) -> Any:
    """A JSON column's value: psycopg decodes json/jsonb, text columns hold the document."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return value


def build(data: Rows, taken_at: datetime, snapshot_id: str, notes: list[str] | None = None) -> PandaGrid:
    """The snapshot and CONFIG rows of the tables read (DATA), with a note for everything left out (after NOTES).

    Usage: ``build({"site": [...], ...}, datetime.now(UTC), "panda:host").snapshot``
    """
    notes = list(notes or [])
    snap = _sites_and_endpoints(data, taken_at, snapshot_id, notes)
    snap = _with_queues(snap, data, notes)
    queues = set(snap.tables["queues"]["panda_queue"])
    rel_table = _relations(data["panda_ddm_relation"], snap, queues, notes)
    counts = _job_counts(data["jobs_share_stats"] + data.get("jobsdefined_share_stats", []), queues, notes)
    tasks = [task_row(r) for r in data["jedi_tasks"]]
    snap = snap.replace(
        panda_ddm_relation=rel_table,
        network=frame("network", _network(data["network_matrix_kv"], set(snap.tables["sites"]["site_name"]))),
        job_counts=frame("job_counts", _job_count_rows(counts)),
        user_job_counts=frame("user_job_counts", _user_counts(data["jobsactive4"], queues, notes)),
        tasks=frame("tasks", tasks),
        datasets=frame("datasets", dataset_rows(data["jedi_datasets"], {t["jeditaskid"] for t in tasks})),
        gshares=frame("gshares", _gshares(data["global_shares"])),
        work_queues=frame("work_queues", [_work_queue(r) for r in data["jedi_work_queue"]]),
        queue_slots=frame("queue_slots", _slots(counts, queues)),
        job_ages=frame("job_ages", _age_rows(data.get("job_ages", []), counts)),
    )
    snap = _with_harvester_slots(snap, data.get("harvester_slots", []), taken_at)
    snap = _with_sw_tags(snap, data["sw_tags"], taken_at, notes)
    snap = GridSnapshot(snap.tables, taken_at, snapshot_id, 0)
    return PandaGrid(snap, _config_rows(data["config"]), notes)


def _sites_and_endpoints(data: Rows, taken_at: datetime, snapshot_id: str, notes: list[str]) -> GridSnapshot:
    """An empty snapshot with the sites and DDM endpoints (an endpoint's unknown site becomes a satellite)."""
    sites = {
        r["site_name"]: {
            "site_name": r["site_name"],
            "role": "nucleus" if (r["role"] or "").lower() == "nucleus" else "satellite",
            "tier_level": r["tier_level"] if r["tier_level"] is not None else 2,
            "state": r["state"] or "ACTIVE",
        }
        for r in data["site"]
    }
    endpoints = []
    for r in data["ddm_endpoint"]:
        site = r["site_name"]
        if not site:
            notes.append(f"endpoint {r['ddm_endpoint_name']} has no site: skipped")
            continue
        sites.setdefault(site, {"site_name": site, "role": "satellite"})
        status = _json(r["detailed_status"]) or {}
        row = {
            "ddm_endpoint_name": r["ddm_endpoint_name"],
            "site_name": site,
            "type": r["type"] or "DATADISK",
            "is_tape": (r["is_tape"] or "N").upper() == "Y",
            "space_total": float(max(r["space_total"] or 0, 0)),
            "space_free": float(max(r["space_free"] or 0, 0)),
            "space_expired": float(max(r["space_expired"] or 0, 0)),
        }
        for activity in ENDPOINT_ACTIVITIES:
            value = str(status.get(activity, "ON")).upper() if isinstance(status, dict) else "ON"
            row[activity] = value if value in ENDPOINT_STATUSES else "ON"
        endpoints.append(row)
    base = empty_snapshot(taken_at)
    return GridSnapshot(
        {
            **base.tables,
            "sites": frame("sites", list(sites.values())),
            "ddm_endpoints": frame("ddm_endpoints", endpoints),
        },
        taken_at,
        snapshot_id,
    )


def _with_queues(snap: GridSnapshot, data: Rows, notes: list[str]) -> GridSnapshot:
    """SNAP with the queues of SCHEDCONFIG_JSON (a queue brokerage cannot use is left out and named with its
    problems) and pilots. Endpoints a queue names but DDM_ENDPOINT lacks are not invented: PanDA's SiteMapper does
    not know them either."""
    entries = [(r["panda_queue"], _json(r["data"])) for r in data["schedconfig_json"]]
    why: dict[str, list[str]] = {n: ["data is not a JSON object"] for n, rec in entries if not isinstance(rec, dict)}
    entries = [(n, rec) for n, rec in entries if isinstance(rec, dict)]
    patch = map_queues(entries, snap, add_endpoints=False)
    if patch.problems:  # a live database is not refused for one bad queue: the queue is left out and named
        for p in patch.problems:
            name, _, problem = p.partition(".")
            why.setdefault(name, []).append(problem)
        patch = map_queues([(n, rec) for n, rec in entries if n not in why], snap, add_endpoints=False)
    if why:
        shown = "; ".join(f"{n} ({', '.join(why[n])})" for n in sorted(why)[:20])
        notes.append(f"left out {count(len(why), 'queue')} whose schedconfig JSON brokerage cannot use: {shown}")
    notes += patch.notes
    return with_pilots(patch.apply(snap), data["sitedata"])


def _relations(rows: list[dict[str, Any]], snap: GridSnapshot, queues: set[str], notes: list[str]) -> pd.DataFrame:
    """PANDA_DDM_RELATION rows of known queues and endpoints, every scope (the analysis broker writes to the
    'analysis' scope's endpoint where a queue has one); without any row, the queues' astorages give them."""
    known_eps = set(snap.tables["ddm_endpoints"]["ddm_endpoint_name"])
    relations = [
        {"panda_queue": r["panda_site_name"], "ddm_endpoint_name": r["ddm_endpoint_name"],
         "default_write": (r["default_write"] or "N").upper() == "Y", "scope": r["scope"] or "default"}
        for r in rows
        if r["panda_site_name"] in queues and r["ddm_endpoint_name"] in known_eps
    ]  # fmt: skip
    if not rows:
        return snap.tables["panda_ddm_relation"]  # no relation rows: the queues' astorages give them
    dropped = len(rows) - len(relations)
    if dropped:
        notes.append(f"left out {count(dropped, 'DDM relation')} of queues or endpoints not in the grid")
    return frame("panda_ddm_relation", relations)


def _network(rows: list[dict[str, Any]], site_names: set[str]) -> list[dict[str, Any]]:
    """NETWORK_MATRIX_KV rows between sites of the grid."""
    return [
        {"src": r["src"], "dst": r["dst"], "key": r["key"], "value": float(r["value"]), "ts": _utc(r["ts"])}
        for r in rows
        if r["src"] in site_names and r["dst"] in site_names and r["value"] is not None
    ]


JobCounts = dict[tuple[str, str, str, str, str], int]  # (queue, gshare, resource type, status, VO) -> jobs


def _job_counts(rows: list[dict[str, Any]], queues: set[str], notes: list[str]) -> JobCounts:
    """JOBS_SHARE_STATS and JOBSDEFINED_SHARE_STATS summed per queue, gshare, resource type, status and VO (states
    brokerage reads only). Rows without a VO are left out: JEDI selects one VO's rows (vo=:vo), never those."""
    counts: JobCounts = {}
    odd_status: set[str] = set()
    no_vo = 0
    for r in rows:
        if r["computingsite"] not in queues:
            continue
        if r["jobstatus"] not in JOB_STATUSES:
            odd_status.add(str(r["jobstatus"]))
            continue
        if not r["vo"]:
            no_vo += 1
            continue
        k = (r["computingsite"], r["gshare"] or "", r["resource_type"] or "SCORE", r["jobstatus"], str(r["vo"]))
        counts[k] = counts.get(k, 0) + int(r["njobs"] or 0)
    if odd_status:
        notes.append(f"job counts in states brokerage does not use were left out: {', '.join(sorted(odd_status))}")
    if no_vo:
        notes.append(f"left out {count(no_vo, 'job count row')} without a VO: JEDI counts one VO's jobs (vo=:vo), "
                     "never those")  # fmt: skip
    return counts


def _age_rows(rows: list[dict[str, Any]], counts: JobCounts) -> list[dict[str, Any]]:
    """The job groups' recorded times (from-panda's job_ages select) of the groups the job counts hold."""
    keys = ("computingsite", "gshare", "resource_type", "jobstatus", "vo")
    times = [f"{rank}_{clock}" for clock in AGE_CLOCKS for rank in AGE_RANKS]
    return [
        {"panda_queue": r["computingsite"], "gshare": r["gshare"], "resource_type": r["resource_type"],
         "jobstatus": r["jobstatus"], "vo": str(r["vo"]), **{t: _utc(r[t]) for t in times}}
        for r in rows
        if tuple(str(r[k]) for k in keys) in counts
    ]  # fmt: skip


def _with_harvester_slots(snap: GridSnapshot, rows: list[dict[str, Any]], taken_at: datetime) -> GridSnapshot:
    """SNAP's queues with numSlots from Harvester_Slots rows not expired (as the brokers read them): the queue-wide
    row (no gshare, no resource type) where there is one, else the largest of the queue's rows; the queue's slots
    for the simulator are then its running jobs or its numSlots, the larger (as the demo grid's)."""
    slots: dict[str, tuple[bool, int]] = {}
    for r in rows:
        expires = _utc(r["expirationtime"])
        if r["numslots"] is None or int(r["numslots"]) < 0 or (expires is not None and expires <= taken_at):
            continue
        key = (r["gshare"] is None and r["resourcetype"] is None, int(r["numslots"]))
        slots[r["pandaqueuename"]] = max(slots.get(r["pandaqueuename"], key), key)
    if not slots:
        return snap
    q = snap.tables["queues"].copy()
    found = q["panda_queue"].map({name: n for name, (_, n) in slots.items()})
    q["numslots"] = found.where(found.notna(), q["numslots"])
    slots = snap.tables["queue_slots"].copy()
    published = slots["panda_queue"].map(q.set_index("panda_queue")["numslots"]).fillna(0)
    slots["nslots"] = np.maximum(slots["nslots"].to_numpy(np.int64), published.to_numpy(np.int64))
    return snap.replace(queues=q, queue_slots=slots)


def _job_count_rows(counts: JobCounts) -> list[dict[str, Any]]:
    return [
        {"panda_queue": q, "gshare": g, "resource_type": rt, "jobstatus": s, "njobs": n, "vo": vo}
        for (q, g, rt, s, vo), n in counts.items()
    ]


def _user_counts(rows: list[dict[str, Any]], queues: set[str], notes: list[str]) -> list[dict[str, Any]]:
    """Per-user analysis job counts (JOBSACTIVE4 grouped) at queues of the grid, each under its VO (a user is a
    (USERNAME, VO) pair); a job without a VO is taken as atlas' (the VO of what names none), with a note."""
    out = [
        {"panda_queue": r["computingsite"], "gshare": r["gshare"] or "", "produsername": r["produsername"] or "",
         "workinggroup": r["workinggroup"] or "", "jobstatus": r["jobstatus"], "njobs": int(r["njobs"]),
         "ncores": int(r["ncores"] or 0), "vo": str(r.get("vo") or DEFAULT_VO)}
        for r in rows
        if r["computingsite"] in queues and r["jobstatus"] in JOB_STATUSES
    ]  # fmt: skip
    no_vo = sum(int(r["njobs"]) for r in rows if not r.get("vo") and r["computingsite"] in queues)
    if no_vo:
        notes.append(f"{count(no_vo, 'user job')} without a VO counted as VO {DEFAULT_VO}'s")
    return out


def dataset_rows(rows: list[dict[str, Any]], task_ids: set[int]) -> list[dict[str, Any]]:
    """JEDI_DATASETS input rows of the tasks read.

    Usage: ``dataset_rows([{"jeditaskid": 1, "datasetid": 2, "masterid": None, ...}], {1})``
    """
    return [
        {"jeditaskid": int(r["jeditaskid"]), "datasetid": int(r["datasetid"]), "datasetname": r["datasetname"] or "",
         "is_master": r["masterid"] is None, "nfiles": int(r["nfiles"] or 0), "nevents": int(r["nevents"] or 0),
         "neventsused": int(r["neventsused"] or 0)}
        for r in rows
        if int(r["jeditaskid"]) in task_ids
    ]  # fmt: skip


def _gshares(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """GLOBAL_SHARES as the share tree."""
    return [
        {"gshare": r["name"], "parent": r["parent"] or "", "value": float(r["value"] or 0),
         "throttled": (r["throttled"] or "Y") != "N"}
        for r in rows
    ]  # fmt: skip


def _slots(counts: JobCounts, queues: set[str]) -> list[dict[str, Any]]:
    """A PanDA database holds no slot capacity per queue: the simulator starts from its running jobs (steady state)."""
    running: dict[str, int] = {}
    for (q, _, _, status, _), n in counts.items():
        if status == "running":
            running[q] = running.get(q, 0) + n
    return [{"panda_queue": q, "nslots": running.get(q, 0)} for q in queues]


def _with_sw_tags(snap: GridSnapshot, rows: list[dict[str, Any]], taken_at: datetime, notes: list[str]) -> GridSnapshot:
    """SNAP with the queues' software from SW_TAGS, mapped as the CRIC SW tags live source (left out on problems)."""
    sw = {r["panda_queue"]: _json(r["data"]) for r in rows if isinstance(_json(r["data"]), dict)}
    sw_patch = map_live("sw_tags", sw, snap, taken_at)
    notes += sw_patch.notes + [f"SW tags: {p}" for p in sw_patch.problems]
    if not sw_patch.problems:
        snap = snap.replace(**sw_patch.tables)
    return snap


def _config_rows(rows: list[dict[str, Any]]) -> list[ConfigRow]:
    return [
        ConfigRow(
            app=r["app"], component=r["component"], key=r["key"], value=r["value"], type=r["type"] or "str",
            vo=r["vo"] or None, value_json=_json(r["value_json"]),
        )
        for r in rows
    ]  # fmt: skip


def with_pilots(snap: GridSnapshot, sitedata: list[dict[str, Any]]) -> GridSnapshot:
    """Queues with npilot (getJob + updateJob), laststart and lastpilot of their SiteData row, as PanDA pairs
    them: ANALY_ queues take the 'analysis' row, the others the 'production' row.

    Usage: ``with_pilots(snap, [{"site": "AGLT2", "flag": "production", "getjob": 30, "updatejob": 12}])``
    """
    rows = {
        r["site"]: r
        for r in sitedata
        if r["flag"] == ("analysis" if str(r["site"]).startswith("ANALY_") else "production")
    }
    records = snap.tables["queues"].to_dict("records")
    for q in records:
        r = rows.get(q["panda_queue"])
        if r is not None:
            q["npilot"] = int(r.get("getjob") or 0) + int(r.get("updatejob") or 0)
            q["laststart"], q["lastpilot"] = _utc(r.get("laststart")), _utc(r.get("lastpilot"))
        for name in ("laststart", "lastpilot"):
            if q.get(name) is not None and pd.isna(q[name]):
                q[name] = None
    return snap.replace(queues=frame("queues", records))


def _work_queue(r: dict[str, Any]) -> dict[str, Any]:
    """One JEDI_WORK_QUEUE row; its VARIABLES (JSON text of bind variables) read as an object."""
    variables = _json(r["variables"]) if r["variables"] else {}
    return {
        "queue_id": int(r["queue_id"]), "queue_name": r["queue_name"] or "", "queue_type": r["queue_type"] or "",
        "vo": r["vo"] or "", "queue_order": r["queue_order"], "criteria": r["criteria"] or "",
        "variables": variables if isinstance(variables, dict) else {}, "queue_function": r["queue_function"] or "",
        "status": "inactive" if (r["status"] or "active") != "active" else "active",
        "partitionid": r.get("partitionid"),
    }  # fmt: skip


# JEDI_TASKS.SPLITRULE tokens (task_split_rules.split_rule_dict) of the split rules the simulator sizes jobs with
SPLIT_TOKENS = {"NE": "neventsperjob", "NF": "nfilesperjob", "NG": "ngbperjob", "TN": "tgtmaxoutputforng",
                "MW": "maxwalltime", "MF": "nmaxfilesperjob"}  # fmt: skip


def split_fields(rule: str | None) -> dict[str, int]:
    """The split rules of a SPLITRULE string ("NE=1000,NG=10,..."): snapshot task fields, those it sets.

    Usage: ``split_fields("NE=1000,TN=10")  # {"neventsperjob": 1000, "tgtmaxoutputforng": 10}``
    """
    out: dict[str, int] = {}
    for token, name in SPLIT_TOKENS.items():
        if m := re.search(rf"(?:^|,){token}=(\d+)", rule or ""):
            out[name] = int(m.group(1))
    return out


def task_row(r: dict[str, Any]) -> dict[str, Any]:
    """A jedi_tasks row as a snapshot task (NULLs take the snapshot's defaults).

    Usage: ``task_row({"jeditaskid": 1, "status": "ready", "vo": "wlcg"})["vo"] == "wlcg"``
    """
    cols = {c.name: c for c in TABLES["tasks"]}
    row: dict[str, Any] = {}
    for name, value in r.items():
        if name in cols and value is not None:
            row[name] = value
    row["jeditaskid"] = int(r["jeditaskid"])
    row.update(split_fields(r.get("splitrule")))
    if "eventservice" in row:
        row["eventservice"] = bool(row["eventservice"])
    if row.get("ramunit") not in RAM_UNITS:
        row.pop("ramunit", None)
    for name in ("iointensity", "diskio", "cputime"):
        if name in row:
            row[name] = float(row[name])
    for name in ("frozentime", "modificationtime"):
        if name in row:
            row[name] = _utc(row[name]).strftime("%Y-%m-%dT%H:%M:%SZ")  # type: ignore[union-attr]
    for name in (
        "corecount",
        "ramcount",
        "baseramcount",
        "workdiskcount",
        "basewalltime",
        "walltime",
        "cpuefficiency",
        "outdiskcount",
    ):
        if name in row:
            row[name] = max(int(row[name]), 0)
    return row
