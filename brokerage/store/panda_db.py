"""Build a grid snapshot and a gdpconfig from a PanDA PostgreSQL database, read-only (its public schema's tables)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from brokerage.model.errors import InputError
from brokerage.model.gdpconfig import ConfigError, ConfigRow, lookup_param, parse_value
from brokerage.model.snapshot import GridSnapshot, empty_snapshot, frame
from brokerage.model.tables import ENDPOINT_ACTIVITIES, ENDPOINT_STATUSES, JOB_STATUSES, TABLES
from brokerage.model.words import count
from brokerage.store import config_store, database, repository
from brokerage.store.cric import map_queues
from brokerage.store.errors import database_errors
from brokerage.store.live_sources import map_live
from brokerage.store.schema import upgrade

# The tables and columns read, with the type family each must have (PanDA's public schema,
# panda-database schema/postgres/sqls/pg_PANDA_TABLE.sql). A missing one or a wrong type stops the read.
TEXT, INT, NUM, TIME, JSON = "text", "integer", "number", "timestamp", "JSON"
READ_COLUMNS: dict[str, dict[str, str]] = {
    "schedconfig_json": {"panda_queue": TEXT, "data": JSON, "last_update": TIME},
    "site": {"site_name": TEXT, "role": TEXT, "tier_level": INT, "state": TEXT},
    "ddm_endpoint": {
        "ddm_endpoint_name": TEXT, "site_name": TEXT, "type": TEXT, "is_tape": TEXT, "space_total": NUM,
        "space_free": NUM, "space_expired": NUM, "detailed_status": JSON,
    },
    "panda_ddm_relation": {"panda_site_name": TEXT, "ddm_endpoint_name": TEXT, "default_write": TEXT, "scope": TEXT},
    "network_matrix_kv": {"src": TEXT, "dst": TEXT, "key": TEXT, "value": NUM, "ts": TIME},
    "jobs_share_stats": {"computingsite": TEXT, "gshare": TEXT, "resource_type": TEXT, "jobstatus": TEXT, "njobs": INT},
    "jedi_tasks": {
        "jeditaskid": INT, "taskname": TEXT, "status": TEXT, "username": TEXT, "modificationtime": TIME,
        "frozentime": TIME, "site": TEXT, "prodsourcelabel": TEXT, "workinggroup": TEXT, "corecount": INT,
        "processingtype": TEXT, "taskpriority": INT, "currentpriority": INT, "architecture": TEXT, "transhome": TEXT,
        "outdiskcount": INT, "outdiskunit": TEXT, "workdiskcount": INT, "ramcount": INT, "ramunit": TEXT,
        "iointensity": INT, "parent_tid": INT, "eventservice": INT, "cputime": INT, "cputimeunit": TEXT,
        "cpuefficiency": INT, "basewalltime": INT, "nucleus": TEXT, "baseramcount": INT, "gshare": TEXT,
        "resource_type": TEXT, "diskio": INT, "container_name": TEXT,
    },
    "jedi_datasets": {
        "jeditaskid": INT, "datasetid": INT, "datasetname": TEXT, "type": TEXT, "masterid": INT, "nfiles": INT,
        "nevents": INT, "neventsused": INT,
    },
    "jobsactive4": {
        "prodsourcelabel": TEXT, "jobstatus": TEXT, "computingsite": TEXT, "workinggroup": TEXT,
        "processingtype": TEXT, "produsername": TEXT, "corecount": INT, "gshare": TEXT,
    },
    "sw_tags": {"panda_queue": TEXT, "data": JSON},
    "global_shares": {"name": TEXT, "value": INT, "parent": TEXT, "throttled": TEXT},
    "jedi_work_queue": {
        "queue_id": INT, "queue_name": TEXT, "queue_type": TEXT, "vo": TEXT, "status": TEXT, "queue_order": INT,
        "criteria": TEXT, "variables": TEXT, "queue_function": TEXT,
    },
    "config": {"app": TEXT, "component": TEXT, "key": TEXT, "value": TEXT, "type": TEXT, "vo": TEXT, "value_json": JSON},
}  # fmt: skip
# PanDA's pilot activity per queue (PANDAMETA.SiteData; schema doma_pandameta in PanDA's PostgreSQL layout):
# the brokers' -nopilot and -inactive checks read it, so without it every queue would look pilot-less.
META_COLUMNS: dict[str, dict[str, str]] = {
    "sitedata": {"site": TEXT, "flag": TEXT, "hours": INT, "getjob": INT, "updatejob": INT, "laststart": TIME,
                 "lastpilot": TIME},
}  # fmt: skip
SITEDATA_HOURS = 3  # the window PanDA's brokers read (getCurrentSiteData: HOURS=3)
_FAMILIES = {
    TEXT: {"character varying", "character", "text"},
    INT: {"smallint", "integer", "bigint", "numeric"},
    NUM: {"smallint", "integer", "bigint", "numeric", "double precision", "real"},
    TIME: {"timestamp without time zone", "timestamp with time zone", "date"},
    JSON: {"json", "jsonb", "text", "character varying"},  # SW_TAGS.DATA is text in the public schema
}
# JEDI task states whose tasks brokerage looks at (waiting for, or in, brokerage); the rest are history.
TASK_STATES = ("registered", "defined", "assigning", "ready", "pending", "scouting", "running", "throttled")
DATASET_TYPES = ("input", "pseudo_input")
RAM_UNITS = ("MB", "MBPerCore", "MBPerCoreFixed")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class PandaSchemaError(InputError, ValueError):
    """The PanDA database lacks a table or column brokerage reads, or one has the wrong type; lists every one."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(
            f"the PanDA database cannot be read ({count(len(problems), 'problem')}): {'; '.join(problems)}"
        )
        self.problems = problems


@dataclass
class PandaGrid:
    """What a PanDA database gives: the snapshot, its CONFIG rows, and notes on what was skipped."""

    snapshot: GridSnapshot
    config_rows: list[ConfigRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --- connection ---------------------------------------------------------------------------------------------------


def readonly_engine(url: str) -> Engine:
    """An engine whose every session is read-only (default_transaction_read_only), PostgreSQL via psycopg 3.

    Usage: ``with readonly_engine("postgresql+psycopg://reader@host/panda").connect() as conn: ...``
    """
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    parsed = sa.make_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise PandaSchemaError(
            [f"{parsed.render_as_string(hide_password=True)}: only PostgreSQL PanDA databases are read"]
        )
    return sa.create_engine(
        parsed, connect_args={"options": "-c default_transaction_read_only=on"}, poolclass=sa.NullPool
    )


@contextmanager
def readonly_transaction(engine: Engine) -> Iterator[Connection]:
    """One REPEATABLE READ, READ ONLY transaction: a consistent view, and any write raises.

    Usage: ``with readonly_transaction(readonly_engine(url)) as conn: conn.execute(...)``
    """
    with engine.connect() as conn, conn.begin():
        conn.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield conn


# --- schema check -------------------------------------------------------------------------------------------------


def schema_problems(conn: Connection, schema: str, tables: dict[str, dict[str, str]] | None = None) -> list[str]:
    """Every table or column of TABLES (default READ_COLUMNS) missing in SCHEMA, or present with another type family.

    Usage: ``assert not schema_problems(conn, "doma_panda")``
    """
    rows = conn.execute(
        sa.text("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = :s"),
        {"s": schema},
    ).all()
    found: dict[str, dict[str, str]] = {}
    for table, column, data_type in rows:
        found.setdefault(table.lower(), {})[column.lower()] = data_type
    problems: list[str] = []
    for table, columns in (READ_COLUMNS if tables is None else tables).items():
        if table not in found:
            problems.append(f"table {schema}.{table} is missing")
            continue
        for column, family in columns.items():
            have = found[table].get(column)
            if have is None:
                problems.append(f"{schema}.{table}.{column}: column is missing (expected type {family})")
            elif have not in _FAMILIES[family]:
                problems.append(f"{schema}.{table}.{column}: expected a column of type {family}, found {have}")
    return problems


# --- reading ------------------------------------------------------------------------------------------------------


@database_errors()
def read_panda(url: str, schema: str | None = None, meta_schema: str | None = None) -> PandaGrid:
    """Read a PanDA database at URL (tables in SCHEMA, default: the connection's current schema; SiteData in
    META_SCHEMA, default: SCHEMA), never writing.

    Raises PandaSchemaError listing every missing table or column and every wrong type, StoreError when the database
    cannot be read.
    Usage: ``grid = read_panda("postgresql+psycopg://reader@pandadb/panda", "doma_panda"); grid.snapshot.queues``
    """
    engine = readonly_engine(url)
    try:
        with readonly_transaction(engine) as conn:
            schema = schema or str(conn.execute(sa.text("SELECT current_schema()")).scalar())
            meta_schema = meta_schema or schema
            for given in (schema, meta_schema):
                if not _IDENT.match(given):
                    raise PandaSchemaError([f"schema {given!r}: expected a plain identifier"])
            problems = schema_problems(conn, schema) + schema_problems(conn, meta_schema, META_COLUMNS)
            if problems:
                raise PandaSchemaError(problems)
            taken_at = conn.execute(sa.text("SELECT now()")).scalar()
            data = {table: _select(conn, schema, table) for table in READ_COLUMNS}
            data["sitedata"] = _select(conn, meta_schema, "sitedata")
    finally:
        engine.dispose()
    where = engine.url.render_as_string(hide_password=True).split("@")[-1]
    return _build(data, _utc(taken_at) or datetime.now(UTC), f"panda:{where}")


def _select(conn: Connection, schema: str, table: str) -> list[dict[str, Any]]:
    columns = ", ".join(f'"{c}"' for c in {**READ_COLUMNS, **META_COLUMNS}[table])
    sql = f'SELECT {columns} FROM "{schema}"."{table}"'
    params: dict[str, Any] = {}
    if table == "jedi_tasks":
        sql += " WHERE status = ANY(:states) ORDER BY jeditaskid"
        params["states"] = list(TASK_STATES)
    elif table == "jedi_datasets":
        sql += (
            f' WHERE type = ANY(:types) AND jeditaskid IN (SELECT jeditaskid FROM "{schema}"."jedi_tasks"'
            " WHERE status = ANY(:states)) ORDER BY jeditaskid, datasetid"
        )
        params.update(types=list(DATASET_TYPES), states=list(TASK_STATES))
    elif table == "jobsactive4":
        # per-user counts of analysis jobs, as JEDI's getUsersJobsStats reads them (merge jobs aside)
        sql = (
            "SELECT computingsite, gshare, produsername, workinggroup, jobstatus, COUNT(*) AS njobs,"
            f' SUM(COALESCE(corecount, 1)) AS ncores FROM "{schema}"."jobsactive4"'
            " WHERE prodsourcelabel = 'user' AND COALESCE(processingtype, '') <> 'pmerge'"
            " GROUP BY computingsite, gshare, produsername, workinggroup, jobstatus"
            " ORDER BY computingsite, gshare, produsername, workinggroup, jobstatus"
        )
    elif table == "sitedata":
        sql += f" WHERE hours = {SITEDATA_HOURS} AND flag IN ('production', 'analysis')"
    elif table == "panda_ddm_relation":
        sql += " WHERE scope = 'default' ORDER BY panda_site_name, ddm_endpoint_name"
    return [dict(r._mapping) for r in conn.execute(sa.text(sql), params)]


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


def _build(data: dict[str, list[dict[str, Any]]], taken_at: datetime, snapshot_id: str) -> PandaGrid:
    """The snapshot and CONFIG rows of the tables read, with a note for everything left out."""
    notes: list[str] = []
    snap = _sites_and_endpoints(data, taken_at, snapshot_id, notes)
    snap = _with_queues(snap, data, notes)
    queues = set(snap.tables["queues"]["panda_queue"])
    rel_table = _relations(data["panda_ddm_relation"], snap, queues, notes)
    counts = _job_counts(data["jobs_share_stats"], queues, notes)
    tasks = [_task(r) for r in data["jedi_tasks"]]
    snap = snap.replace(
        panda_ddm_relation=rel_table,
        network=frame("network", _network(data["network_matrix_kv"], set(snap.tables["sites"]["site_name"]))),
        job_counts=frame("job_counts", _job_count_rows(counts)),
        user_job_counts=frame("user_job_counts", _user_counts(data["jobsactive4"], queues)),
        tasks=frame("tasks", tasks),
        datasets=frame("datasets", _datasets(data["jedi_datasets"], {t["jeditaskid"] for t in tasks})),
        gshares=frame("gshares", _gshares(data["global_shares"])),
        work_queues=frame("work_queues", [_work_queue(r) for r in data["jedi_work_queue"]]),
        queue_slots=frame("queue_slots", _slots(counts, queues)),
    )
    snap = _with_sw_tags(snap, data["sw_tags"], taken_at, notes)
    snap = GridSnapshot(snap.tables, taken_at, snapshot_id, 0)
    return PandaGrid(snap, _config_rows(data["config"]), notes)


def _sites_and_endpoints(
    data: dict[str, list[dict[str, Any]]], taken_at: datetime, snapshot_id: str, notes: list[str]
) -> GridSnapshot:
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


def _with_queues(snap: GridSnapshot, data: dict[str, list[dict[str, Any]]], notes: list[str]) -> GridSnapshot:
    """SNAP with the queues of SCHEDCONFIG_JSON (a queue brokerage cannot use is left out and named) and pilots."""
    entries = [(r["panda_queue"], _json(r["data"])) for r in data["schedconfig_json"]]
    bad = [name for name, rec in entries if not isinstance(rec, dict)]
    entries = [(n, rec) for n, rec in entries if isinstance(rec, dict)]
    patch = map_queues(entries, snap)
    if patch.problems:  # a live database is not refused for one bad queue: the queue is left out and named
        broken = {p.split(".", 1)[0] for p in patch.problems}
        bad += sorted(broken)
        patch = map_queues([(n, rec) for n, rec in entries if n not in broken], snap)
    if bad:
        notes.append(
            f"left out {count(len(bad), 'queue')} whose schedconfig JSON brokerage cannot use: {', '.join(bad[:20])}"
        )
    notes += patch.notes
    return _with_pilots(patch.apply(snap), data["sitedata"])


def _relations(rows: list[dict[str, Any]], snap: GridSnapshot, queues: set[str], notes: list[str]) -> pd.DataFrame:
    """PANDA_DDM_RELATION rows of known queues and endpoints; without any, the queues' astorages give them."""
    known_eps = set(snap.tables["ddm_endpoints"]["ddm_endpoint_name"])
    relations = [
        {"panda_queue": r["panda_site_name"], "ddm_endpoint_name": r["ddm_endpoint_name"],
         "default_write": (r["default_write"] or "N").upper() == "Y"}
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


JobCounts = dict[tuple[str, str, str, str], int]  # (queue, gshare, resource type, job status) -> jobs


def _job_counts(rows: list[dict[str, Any]], queues: set[str], notes: list[str]) -> JobCounts:
    """JOBS_SHARE_STATS summed per queue, gshare, resource type and status (states brokerage reads only)."""
    counts: JobCounts = {}
    odd_status: set[str] = set()
    for r in rows:
        if r["computingsite"] not in queues:
            continue
        if r["jobstatus"] not in JOB_STATUSES:
            odd_status.add(str(r["jobstatus"]))
            continue
        k = (r["computingsite"], r["gshare"] or "", r["resource_type"] or "SCORE", r["jobstatus"])
        counts[k] = counts.get(k, 0) + int(r["njobs"] or 0)
    if odd_status:
        notes.append(f"job counts in states brokerage does not use were left out: {', '.join(sorted(odd_status))}")
    return counts


def _job_count_rows(counts: JobCounts) -> list[dict[str, Any]]:
    return [
        {"panda_queue": q, "gshare": g, "resource_type": rt, "jobstatus": s, "njobs": n}
        for (q, g, rt, s), n in counts.items()
    ]


def _user_counts(rows: list[dict[str, Any]], queues: set[str]) -> list[dict[str, Any]]:
    """Per-user analysis job counts (JOBSACTIVE4 grouped) at queues of the grid."""
    return [
        {"panda_queue": r["computingsite"], "gshare": r["gshare"] or "", "produsername": r["produsername"] or "",
         "workinggroup": r["workinggroup"] or "", "jobstatus": r["jobstatus"], "njobs": int(r["njobs"]),
         "ncores": int(r["ncores"] or 0)}
        for r in rows
        if r["computingsite"] in queues and r["jobstatus"] in JOB_STATUSES
    ]  # fmt: skip


def _datasets(rows: list[dict[str, Any]], task_ids: set[int]) -> list[dict[str, Any]]:
    """JEDI_DATASETS input rows of the tasks read."""
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
    for (q, _, _, status), n in counts.items():
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


def _with_pilots(snap: GridSnapshot, sitedata: list[dict[str, Any]]) -> GridSnapshot:
    """Queues with npilot (getJob + updateJob), laststart and lastpilot of their SiteData row, as PanDA pairs
    them: ANALY_ queues take the 'analysis' row, the others the 'production' row."""
    rows = {
        r["site"]: r
        for r in sitedata
        if r["flag"] == ("analysis" if str(r["site"]).startswith("ANALY_") else "production")
    }
    records = snap.tables["queues"].to_dict("records")
    for q in records:
        r = rows.get(q["panda_queue"])
        if r is not None:
            q["npilot"] = int(r["getjob"] or 0) + int(r["updatejob"] or 0)
            q["laststart"], q["lastpilot"] = _utc(r["laststart"]), _utc(r["lastpilot"])
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
    }  # fmt: skip


def _task(r: dict[str, Any]) -> dict[str, Any]:
    """A jedi_tasks row as a snapshot task (NULLs take the snapshot's defaults)."""
    cols = {c.name: c for c in TABLES["tasks"]}
    row: dict[str, Any] = {}
    for name, value in r.items():
        if name in cols and value is not None:
            row[name] = value
    row["jeditaskid"] = int(r["jeditaskid"])
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
        "cpuefficiency",
        "outdiskcount",
    ):
        if name in row:
            row[name] = max(int(row[name]), 0)
    return row


# --- gdpconfig ----------------------------------------------------------------------------------------------------


def config_changes(
    rows: list[ConfigRow],
) -> tuple[dict[tuple[str, str, str, str], tuple[str, str, str]], list[str], list[str]]:
    """CONFIG rows as store entries {(app, component, key, vo): (type, text, descr)}, the keys outside the
    registry ("not modelled", kept as they are) and notes on registry values that were refused.

    Usage: ``wanted, not_modelled, notes = config_changes(grid.config_rows)``
    """
    wanted: dict[tuple[str, str, str, str], tuple[str, str, str]] = {}
    not_modelled: list[str] = []
    notes: list[str] = []
    for r in rows:
        coord = (r.app, r.component, r.key, r.vo or "")
        is_json = r.type.lower() == "json"
        text = json.dumps(r.value_json, sort_keys=True) if is_json else (r.value or "")
        try:
            param = lookup_param(r.key)
        except ConfigError:
            not_modelled.append(f"{r.app}/{r.component}/{r.key}" + (f"@{r.vo}" if r.vo else ""))
            wanted[coord] = ("json" if is_json else r.type, text, r.descr)
            continue
        try:
            parse_value(r.key, r.value_json if is_json else r.value, r.type)
        except ConfigError as exc:
            notes.append(f"CONFIG {r.component}/{r.key}: {exc}; left out (the default applies)")
            continue
        wanted[coord] = ("json" if is_json else r.type, text, param.description)
    return wanted, not_modelled, notes


# --- storing ------------------------------------------------------------------------------------------------------


@dataclass
class StoredPanda:
    """What store_panda wrote: the grid version, the gdpconfig version and the keys kept as not modelled."""

    grid_version: int
    config_version: int
    not_modelled: list[str]
    notes: list[str]


def store_panda(engine: Engine, grid: PandaGrid, who: str = "from-panda") -> StoredPanda:
    """Store GRID's snapshot as a new grid version and its CONFIG rows as a new gdpconfig version.

    Usage: ``store_panda(make_engine(database_url()), read_panda(url)).grid_version``
    """
    upgrade(engine)
    wanted, not_modelled, notes = config_changes(grid.config_rows)
    repository.check_storable(grid.snapshot)
    version = repository.save_snapshot(engine, grid.snapshot) or 0
    head = config_store.current_version(engine)
    comment = f"CONFIG of {grid.snapshot.snapshot_id} at {grid.snapshot.taken_at:%Y-%m-%dT%H:%M:%SZ}"
    with database.write_transaction(engine, "config") as conn:
        config_version = config_store.apply_entries(conn, wanted, who, comment, None) if wanted else head
    return StoredPanda(int(version), int(config_version), not_modelled, grid.notes + notes)
