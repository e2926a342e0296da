"""Build a grid snapshot and a gdpconfig from a PanDA PostgreSQL database, read-only (its public schema's tables)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from brokerage.model.gdpconfig import ConfigError, ConfigRow, lookup_param, parse_value
from brokerage.model.tables import AGE_CLOCKS, DEFAULT_VO
from brokerage.store import config_store, database, panda_schema, repository
from brokerage.store.errors import database_errors
from brokerage.store.panda_rows import PandaGrid, build
from brokerage.store.panda_schema import META_COLUMNS, READ_COLUMNS, PandaSchemaError, schema_problems
from brokerage.store.schema import upgrade

__all__ = ["PandaGrid", "PandaSchemaError", "read_panda", "readonly_engine", "readonly_transaction", "schema_problems",
           "store_panda"]  # fmt: skip
SITEDATA_HOURS = 3  # the window PanDA's brokers read (getCurrentSiteData: HOURS=3)
# JEDI task states whose tasks brokerage looks at (waiting for, or in, brokerage); the rest are history.
TASK_STATES = ("registered", "defined", "assigning", "ready", "pending", "scouting", "running", "throttled")
DATASET_TYPES = ("input", "pseudo_input")
_VO_FILTERED = ("jobs_share_stats", "jobsdefined_share_stats", "jedi_tasks")
_COUNT_TABLES = ("jobs_share_stats", "jobsdefined_share_stats", "jobsactive4")


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


# --- reading ------------------------------------------------------------------------------------------------------


@database_errors()
def read_panda(url: str, schema: str | None = None, meta_schema: str | None = None, vo: str | None = None) -> PandaGrid:
    """Read a PanDA database at URL (tables in SCHEMA, default: the connection's current schema; SiteData in
    META_SCHEMA, default: SCHEMA when it holds sitedata, else the schema found holding it), never writing. With VO,
    only that VO's tasks and job counts are read (JEDI counts per VO); CONFIG rows of every VO are read.

    Raises PandaSchemaError listing every missing table or column and every wrong type (a missing optional one is a
    note naming what brokerage then cannot judge), StoreError when the database cannot be read.
    Usage: ``grid = read_panda("postgresql+psycopg://reader@pandadb/panda", "doma_panda", vo="wlcg")``
    """
    engine = readonly_engine(url)
    try:
        with readonly_transaction(engine) as conn:
            taken_at, data, notes = _read(conn, schema, meta_schema, vo)
    finally:
        engine.dispose()
    where = engine.url.render_as_string(hide_password=True).split("@")[-1]
    return build(data, _utc(taken_at), f"panda:{where}", notes)


def _read(
    conn: Connection, schema: str | None, meta_schema: str | None, vo: str | None
) -> tuple[datetime, dict[str, list[dict[str, Any]]], list[str]]:
    """Check the schemas, then select every table read: (now, rows by table, notes on what is missing)."""
    schema = panda_schema.resolve_schema(conn, schema)
    meta, notes = panda_schema.resolve_meta(conn, schema, meta_schema)
    found = panda_schema.columns_of(conn, schema)
    problems, missing = panda_schema.check(found, schema, READ_COLUMNS)
    if not found:
        problems = [f"schema {schema} holds no table; PanDA's PostgreSQL layout names it e.g. doma_panda or "
                    "atlas_panda (--schema)"]  # fmt: skip
    meta_problems, _ = panda_schema.check(panda_schema.columns_of(conn, meta), meta, META_COLUMNS)
    if meta_problems:
        meta_problems = [f"{p} ({panda_schema.meta_suggestion(conn, schema)})" for p in meta_problems]
    if problems or meta_problems:
        raise PandaSchemaError(problems + meta_problems)
    notes += panda_schema.missing_notes(missing, schema)
    taken_at = conn.execute(sa.text("SELECT now()")).scalar()
    data = {t: _select(conn, schema, t, set(missing), vo) for t in READ_COLUMNS if t not in missing}
    data["sitedata"] = _select(conn, meta, "sitedata", set(), None)
    age_tables, age_notes = panda_schema.age_sources(found, schema)
    notes += age_notes
    data["job_ages"] = _job_ages(conn, schema, age_tables, vo) if age_tables else []
    for table in _COUNT_TABLES:
        if f"{table}.vo" in missing:  # an older schema's counts carry no VO: the VO read (else atlas) takes them
            for r in data.get(table, []):
                r["vo"] = vo or DEFAULT_VO
    if vo is None:
        vos = _vos(data)
        if len(vos) > 1:
            notes.append(f"tasks and jobs of {len(vos)} VOs ({', '.join(vos)}) were read; job counts and user job "
                         "counts are kept per VO (each task's brokerage counts its VO's jobs)")  # fmt: skip
    return taken_at, data, notes


def _vos(data: dict[str, list[dict[str, Any]]]) -> list[str]:
    return sorted({str(r["vo"]) for t in (*_VO_FILTERED, "jobsactive4") for r in data.get(t, []) if r.get("vo")})


def _select(conn: Connection, schema: str, table: str, missing: set[str], vo: str | None) -> list[dict[str, Any]]:
    """The rows of TABLE as brokerage reads them; a MISSING optional column reads as NULL; VO filters tasks and
    job counts to that VO."""
    columns = ", ".join(
        f'NULL AS "{c}"' if f"{table}.{c}" in missing else f'"{c}"' for c in {**READ_COLUMNS, **META_COLUMNS}[table]
    )
    sql = f'SELECT {columns} FROM "{schema}"."{table}"'
    params: dict[str, Any] = {}
    where = [_VO_SQL] if vo is not None and table in _VO_FILTERED and f"{table}.vo" not in missing else []
    if vo is not None:
        params["vo"] = vo
    if table == "jedi_tasks":
        sql += " WHERE " + " AND ".join([*where, "status = ANY(:states)"]) + " ORDER BY jeditaskid"
        params["states"] = list(TASK_STATES)
    elif table == "jedi_datasets":
        sql += (
            f' WHERE type = ANY(:types) AND jeditaskid IN (SELECT jeditaskid FROM "{schema}"."jedi_tasks"'
            " WHERE status = ANY(:states)) ORDER BY jeditaskid, datasetid"
        )
        params.update(types=list(DATASET_TYPES), states=list(TASK_STATES))
    elif table == "jobsactive4":
        sql = _user_jobs_sql(schema, "jobsactive4.vo" not in missing, vo is not None)
    elif table == "sitedata":
        sql += f" WHERE hours = {SITEDATA_HOURS} AND flag IN ('production', 'analysis')"
    elif table == "panda_ddm_relation":
        sql += " ORDER BY scope, panda_site_name, ddm_endpoint_name"
    elif where:
        sql += " WHERE " + " AND ".join(where)
    return [dict(r._mapping) for r in conn.execute(sa.text(sql), params)]


_VO_SQL = "vo = :vo"


def _user_jobs_sql(schema: str, has_vo: bool, by_vo: bool) -> str:
    """Per-user counts of analysis jobs as JEDI's getUsersJobsStats reads them: merge jobs aside, and with them
    every job of NULL processingType (SQL's <> is not true for NULL, so JEDI's query drops those too); grouped by VO
    as well where the table HAS_VO (a user is a (USERNAME, VO) pair), one VO's when BY_VO (--vo)."""
    vo = "vo" if has_vo else "NULL AS vo"
    group = "computingsite, gshare, produsername, workinggroup, jobstatus" + (", vo" if has_vo else "")
    return (
        f"SELECT computingsite, gshare, produsername, workinggroup, jobstatus, {vo}, COUNT(*) AS njobs,"
        f' SUM(COALESCE(corecount, 1)) AS ncores FROM "{schema}"."jobsactive4"'
        " WHERE prodsourcelabel = 'user' AND processingtype <> 'pmerge'" + (" AND vo = :vo" if has_vo and by_vo else "")
        + f" GROUP BY {group} ORDER BY {group}"
    )  # fmt: skip


def _job_ages(conn: Connection, schema: str, tables: list[tuple[str, bool]], vo: str | None) -> list[dict[str, Any]]:
    """Per job group (queue, share, resource type, status, VO, keyed as job counts are) of the live jobs in TABLES
    (jobsActive4, jobsDefined4): the oldest, median and newest creationtime and modificationtime."""
    parts = []
    for table, has_vo in tables:
        vo_col = "vo" if has_vo else "CAST(:default_vo AS varchar)"
        where = " WHERE vo = :vo" if has_vo and vo is not None else ""
        parts.append(f"SELECT computingsite, COALESCE(gshare, '') AS gshare, COALESCE(resource_type, 'SCORE') AS"
                     f" resource_type, jobstatus, {vo_col} AS vo, creationtime, modificationtime"
                     f' FROM "{schema}"."{table}"{where}')  # fmt: skip
    ranks = ", ".join(
        f"MIN({c}) AS oldest_{c}, percentile_disc(0.5) WITHIN GROUP (ORDER BY {c}) AS median_{c}, MAX({c}) AS newest_{c}"
        for c in AGE_CLOCKS
    )
    sql = (f"SELECT computingsite, gshare, resource_type, jobstatus, vo, {ranks} FROM ({' UNION ALL '.join(parts)}) AS j"
           " WHERE vo IS NOT NULL GROUP BY computingsite, gshare, resource_type, jobstatus, vo"
           " ORDER BY computingsite, gshare, resource_type, jobstatus, vo")  # fmt: skip
    params = {"default_vo": vo or DEFAULT_VO, **({"vo": vo} if vo is not None else {})}
    return [dict(r._mapping) for r in conn.execute(sa.text(sql), params)]


def _utc(t: Any) -> datetime:
    if not isinstance(t, datetime):
        return datetime.now(UTC)
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


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
        if is_json and r.value_json is None:
            notes.append(f"CONFIG {r.component}/{r.key}: type json without VALUE_JSON; left out (the default applies)")
            continue
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
