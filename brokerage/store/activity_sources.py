"""Storage space (Rucio RSE usage), pilot activity (SiteData rows) and tasks (JEDI task and dataset rows) as files:
recognised, checked field by field and mapped to the stored grid's tables; the importer writes them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from brokerage.model.snapshot import GridSnapshot, frame
from brokerage.model.words import count
from brokerage.store.live_sources import LivePatch
from brokerage.store.panda_rows import dataset_rows, task_row, with_pilots
from brokerage.store.panda_schema import INT, READ_COLUMNS, TEXT, TIME

ACTIVITY_KINDS = ("rse_usage", "pilots", "tasks")
ACTIVITY_LABELS = {"rse_usage": "Rucio RSE usage", "pilots": "pilot activity (SiteData)", "tasks": "JEDI tasks"}
GB = 1024.0**3  # PanDA's configurator (configurator/aux.py) divides Rucio's bytes by 1024**3
# Rucio's rse_usage dump: per RSE one entry per source; the configurator reads storage, expired, min_free_space and
# unavailable; the others are known and not read.
RSE_SOURCES = frozenset({"storage", "expired", "min_free_space", "unavailable", "rucio", "obsolete", "quarantine"})
RSE_FIELDS = frozenset({"used", "free", "total", "files", "updated_at", "source"})
# PANDAMETA.SiteData's columns (pg_PANDAMETA_TABLE.sql); the brokers read getjob + updatejob, laststart, lastpilot
SITEDATA_COLUMNS = frozenset(
    {"site", "flag", "hours", "nwn", "memmin", "memmax", "si2kmin", "si2kmax", "os", "space", "minjobs", "maxjobs",
     "laststart", "lastend", "lastfail", "lastpilot", "lastpid", "nstart", "finished", "failed", "defined",
     "assigned", "waiting", "activated", "holding", "running", "transferring", "getjob", "updatejob", "lastmod",
     "ncpu", "ncpucurrent", "nslot", "nslotcurrent"}
)  # fmt: skip
SITEDATA_HOURS = 3  # getCurrentSiteData: the 3-hour rows
# JEDI_TASKS and JEDI_DATASETS columns (JediTaskSpec / JediDatasetSpec attributes, lower-cased as in PostgreSQL)
_TASK_WORDS = (
    "jeditaskid taskname status username creationdate modificationtime starttime endtime frozentime prodsourcelabel "
    "workinggroup vo corecount tasktype processingtype taskpriority currentpriority architecture transuses "
    "transhome transpath lockedby lockedtime termcondition splitrule walltime walltimeunit outdiskcount outdiskunit "
    "workdiskcount workdiskunit ramcount ramunit iointensity iointensityunit workqueue_id progress failurerate "
    "errordialog reqid oldstatus cloud site countrygroup parent_tid eventservice ticketid ticketsystemtype "
    "statechangetime superstatus campaign mergeramcount mergeramunit mergewalltime mergewalltimeunit throttledtime "
    "numthrottled mergecorecount goal assessmenttime cputime cputimeunit cpuefficiency basewalltime nucleus "
    "baseramcount ttcrequested ttcpredicted ttcpredictiondate rescuetime requesttype gshare resource_type usejumbo "
    "diskio diskiounit memory_leak_core memory_leak_x2 attemptnr container_name framework activatedtime queuedtime "
    "actiontime"
)
_DATASET_WORDS = (
    "jeditaskid datasetid datasetname containername type creationtime modificationtime vo cloud site masterid "
    "provenanceid status state statechecktime statecheckexpiration frozentime nfiles nfilestobeused nfilesused "
    "nfilesfinished nfilesfailed nfilesonhold nevents neventstobeused neventsused lockedby lockedtime attributes "
    "streamname storagetoken destination templateid nfileswaiting nfilesmissing"
)
JEDI_TASK_COLUMNS = frozenset(_TASK_WORDS.split())
JEDI_DATASET_COLUMNS = frozenset(_DATASET_WORDS.split())
TASK_STATES = ("registered", "defined", "assigning", "ready", "pending", "scouting", "running", "throttled")
DATASET_TYPES = ("input", "pseudo_input")
_DATASET_READ = {"jeditaskid": INT, "datasetid": INT, "datasetname": TEXT, "type": TEXT, "masterid": INT,
                 "nfiles": INT, "nevents": INT, "neventsused": INT}  # fmt: skip


def detect_activity_kind(data: Any) -> str | None:
    """Which of ACTIVITY_KINDS a parsed document is, or None.

    Usage: ``detect_activity_kind({"jedi_tasks": [...]}) == "tasks"``
    """
    if isinstance(data, dict) and "jedi_tasks" in data and set(data) <= {"jedi_tasks", "jedi_datasets"}:
        return "tasks"
    if (
        isinstance(data, list)
        and data
        and all(isinstance(r, dict) and set(r) & {"site", "flag"} for r in data)
        and any(set(r) & {"getjob", "updatejob", "lastpilot"} for r in data)
    ):
        return "pilots"
    if (
        isinstance(data, dict)
        and data
        and all(isinstance(v, dict) and v and set(v) & RSE_SOURCES for v in data.values())
    ):
        return "rse_usage"
    return None


def map_activity(kind: str, data: Any, snap: GridSnapshot) -> LivePatch:
    """The tables of SNAP that importing DATA (of KIND) replaces, with every problem and notes; nothing is written.

    Usage: ``patch = map_activity("pilots", rows, snap); assert not patch.problems``
    """
    return {"rse_usage": _rse_usage, "pilots": _pilots, "tasks": _tasks}[kind](data, snap)


# --- field checks: each appends its problem and returns None for a bad value ------------------------------------


def _check(value: Any, family: str, where: str, problems: list[str]) -> Any:
    """VALUE checked against a column FAMILY (integer, text, timestamp); None passes (a NULL)."""
    if value is None:
        return None
    if family == INT and isinstance(value, int) and not isinstance(value, bool):
        return value
    if family == TEXT and isinstance(value, str):
        return value
    if family == TIME and isinstance(value, str):
        try:
            t = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            problems.append(f"{where}: expected a time like 2026-11-20T12:00:00Z, got {value!r}")
            return None
        return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)
    expected = {INT: "an integer", TEXT: "a string", TIME: "a time string"}.get(family, "a number")
    if family not in (INT, TEXT, TIME) and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    problems.append(f"{where}: expected {expected}, got {value!r}")
    return None


def _unknown(rec: dict[str, Any], known: frozenset[str], where: str, problems: list[str]) -> None:
    for key in rec:
        if key not in known:
            problems.append(f"{where}.{key}: unknown field")


# --- Rucio RSE usage ----------------------------------------------------------------------------------------------


def _rse_usage(data: Any, snap: GridSnapshot) -> LivePatch:
    """Endpoint space as PanDA's configurator reads Rucio's rse_usage dump: storage.used / .free (bytes, / 1024**3),
    total = used + free, expired.used; min_free_space.used and unavailable.used are taken off the free space, so
    free + expired is PanDA's space_usable. Endpoints of the grid absent from the dump keep their figures (noted)."""
    patch = LivePatch()
    usage: dict[str, tuple[float, float, float]] = {}
    for rse, sources in data.items():
        _unknown(sources, RSE_SOURCES, str(rse), patch.problems)
        got: dict[str, dict[str, Any]] = {}
        for src in ("storage", "expired", "min_free_space", "unavailable"):
            entry = sources.get(src)
            if entry is None:
                continue
            if not isinstance(entry, dict):
                patch.problems.append(f"{rse}.{src}: expected an object {{used, free, updated_at}}, got {entry!r}")
                continue
            _unknown(entry, RSE_FIELDS, f"{rse}.{src}", patch.problems)
            got[src] = {k: _check(entry.get(k), "number", f"{rse}.{src}.{k}", patch.problems) for k in ("used", "free")}
        storage = got.get("storage")
        if storage is None or storage["used"] is None or storage["free"] is None:
            patch.problems.append(f"{rse}.storage: required with numbers used and free (bytes)")
            continue
        off = sum((got.get(s) or {}).get("used") or 0.0 for s in ("min_free_space", "unavailable"))
        expired = (got.get("expired") or {}).get("used") or 0.0
        used, free = storage["used"], storage["free"]
        usage[str(rse)] = ((used + free) / GB, max(free - off, 0.0) / GB, expired / GB)
    eps = snap.tables["ddm_endpoints"].to_dict("records")
    for ep in eps:
        if ep["ddm_endpoint_name"] in usage:
            ep["space_total"], ep["space_free"], ep["space_expired"] = usage[ep["ddm_endpoint_name"]]
    known = {ep["ddm_endpoint_name"] for ep in eps}
    extra = sorted(set(usage) - known)
    missing = sorted(known - set(usage))
    if extra:
        patch.notes.append(f"{count(len(extra), 'RSE')} not in the grid left out (import its DDM endpoints first): "
                           + ", ".join(extra[:20]))  # fmt: skip
    if missing:
        patch.notes.append(f"{count(len(missing), 'endpoint')} without usage keep their figures: "
                           + ", ".join(missing[:20]))  # fmt: skip
    patch.tables["ddm_endpoints"] = frame("ddm_endpoints", eps)
    patch.counts["ddm_endpoints"] = len(set(usage) & known)
    return patch


# --- pilot activity -----------------------------------------------------------------------------------------------


def _pilots(data: list[dict[str, Any]], snap: GridSnapshot) -> LivePatch:
    """Queues' npilot (getjob + updatejob), laststart and lastpilot from SiteData rows of the 3-hour window, paired as
    PanDA pairs them (ANALY_ queues the 'analysis' row, others 'production')."""
    patch = LivePatch()
    families = {"site": TEXT, "flag": TEXT, "hours": INT, "getjob": INT, "updatejob": INT, "laststart": TIME,
                "lastpilot": TIME}  # fmt: skip
    rows = []
    for i, rec in enumerate(data):
        where = f"[{i}]"
        _unknown(rec, SITEDATA_COLUMNS, where, patch.problems)
        row = {k: _check(rec.get(k), f, f"{where}.{k}", patch.problems) for k, f in families.items()}
        for key in ("site", "flag"):
            if rec.get(key) is None:
                patch.problems.append(f"{where}.{key}: required")
        for key in ("getjob", "updatejob"):
            if row[key] is not None and row[key] < 0:
                patch.problems.append(f"{where}.{key}: {row[key]} is below the minimum 0")
        if row["flag"] not in (None, "production", "analysis"):
            patch.problems.append(f"{where}.flag: {row['flag']!r} is not allowed; expected 'production' or 'analysis'")
        if row["hours"] in (None, SITEDATA_HOURS):
            rows.append(row)
    queues = set(snap.tables["queues"]["panda_queue"])
    unknown = sorted({str(r["site"]) for r in rows if r["site"] not in queues})
    if unknown:
        patch.notes.append(f"SiteData of {count(len(unknown), 'queue')} not in the grid left out: "
                           + ", ".join(unknown[:20]))  # fmt: skip
    patch.tables["queues"] = with_pilots(snap, rows).tables["queues"]
    patch.counts["queues"] = len({r["site"] for r in rows} & queues)
    return patch


# --- tasks --------------------------------------------------------------------------------------------------------


def _tasks(data: dict[str, Any], snap: GridSnapshot) -> LivePatch:
    """The tasks and their input datasets from JEDI_TASKS / JEDI_DATASETS rows (lower-case column names, JSON types):
    tasks waiting for or in brokerage (TASK_STATES) replace the grid's tasks, their input datasets its datasets."""
    patch = LivePatch()
    tasks_in, datasets_in = data.get("jedi_tasks"), data.get("jedi_datasets", [])
    for name, value in (("jedi_tasks", tasks_in), ("jedi_datasets", datasets_in)):
        if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
            patch.problems.append(f"{name}: expected a list of row objects")
    if patch.problems:
        return patch
    tasks = _checked_rows(tasks_in, "jedi_tasks", JEDI_TASK_COLUMNS, READ_COLUMNS["jedi_tasks"],
                          ("jeditaskid", "status"), patch.problems)  # fmt: skip
    datasets = _checked_rows(datasets_in, "jedi_datasets", JEDI_DATASET_COLUMNS, _DATASET_READ,
                             ("jeditaskid", "datasetid", "type"), patch.problems)  # fmt: skip
    if patch.problems:
        return patch
    kept = [task_row(r) for r in tasks if r["status"] in TASK_STATES]
    ids = {t["jeditaskid"] for t in kept}
    if len(kept) < len(tasks):
        patch.notes.append(f"{count(len(tasks) - len(kept), 'task')} in states brokerage does not look at left out")
    inputs = dataset_rows([d for d in datasets if d["type"] in DATASET_TYPES], ids)
    log = snap.tables["task_status_log"]
    patch.tables.update(
        tasks=frame("tasks", kept),
        datasets=frame("datasets", inputs),
        dataset_replicas=snap.tables["dataset_replicas"].iloc[0:0],
        task_status_log=log[log["jeditaskid"].isin(ids)] if not log.empty else log,
    )
    patch.counts.update(tasks=len(kept), datasets=len(inputs))
    return patch


def _checked_rows(
    rows: list[dict[str, Any]], table: str, known: frozenset[str], read: dict[str, str], required: tuple[str, ...],
    problems: list[str],
) -> list[dict[str, Any]]:  # fmt: skip
    """ROWS with the columns READ checked by type (every column read present, None when absent); unknown columns,
    missing REQUIRED ones and bad types are PROBLEMS."""
    out = []
    for i, rec in enumerate(rows):
        where = f"{table}[{i}]"
        _unknown(rec, known, where, problems)
        row = {k: _check(rec.get(k), f, f"{where}.{k}", problems) for k, f in read.items()}
        for key in required:
            if rec.get(key) is None:
                problems.append(f"{where}.{key}: required")
        out.append(row)
    return out
