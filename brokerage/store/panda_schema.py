"""Which of PanDA's tables and columns from-panda reads, which it can do without, and the check of a live schema."""

from __future__ import annotations

import re

import sqlalchemy as sa
from sqlalchemy import Connection

from brokerage.model.errors import InputError
from brokerage.model.words import count

# The tables and columns read, with the type family each must have (PanDA's public schema,
# panda-database schema/postgres/sqls/pg_PANDA_TABLE.sql). A missing one or a wrong type stops the read, unless
# OPTIONAL names it: then it is read as NULL and a note says what brokerage loses.
TEXT, INT, NUM, TIME, JSON = "text", "integer", "number", "timestamp", "JSON"
_SHARE_STATS = {
    "computingsite": TEXT, "gshare": TEXT, "resource_type": TEXT, "jobstatus": TEXT, "njobs": INT, "vo": TEXT,
}  # fmt: skip
READ_COLUMNS: dict[str, dict[str, str]] = {
    "schedconfig_json": {"panda_queue": TEXT, "data": JSON, "last_update": TIME},
    "site": {"site_name": TEXT, "role": TEXT, "tier_level": INT, "state": TEXT},
    "ddm_endpoint": {
        "ddm_endpoint_name": TEXT, "site_name": TEXT, "type": TEXT, "is_tape": TEXT, "space_total": NUM,
        "space_free": NUM, "space_expired": NUM, "detailed_status": JSON,
    },
    "panda_ddm_relation": {"panda_site_name": TEXT, "ddm_endpoint_name": TEXT, "default_write": TEXT, "scope": TEXT},
    "network_matrix_kv": {"src": TEXT, "dst": TEXT, "key": TEXT, "value": NUM, "ts": TIME},
    # JEDI reads running/activated/starting/... from JOBS_SHARE_STATS (jobsActive4) and defined/assigned/waiting
    # from JOBSDEFINED_SHARE_STATS (jobsDefined4): getJobStatisticsByGlobalShare unions the two
    "jobs_share_stats": _SHARE_STATS,
    "jobsdefined_share_stats": _SHARE_STATS,
    "jedi_tasks": {
        "jeditaskid": INT, "taskname": TEXT, "status": TEXT, "username": TEXT, "modificationtime": TIME,
        "frozentime": TIME, "site": TEXT, "prodsourcelabel": TEXT, "workinggroup": TEXT, "corecount": INT,
        "processingtype": TEXT, "taskpriority": INT, "currentpriority": INT, "architecture": TEXT, "transhome": TEXT,
        "outdiskcount": INT, "outdiskunit": TEXT, "workdiskcount": INT, "ramcount": INT, "ramunit": TEXT,
        "iointensity": INT, "parent_tid": INT, "eventservice": INT, "cputime": INT, "cputimeunit": TEXT,
        "cpuefficiency": INT, "basewalltime": INT, "nucleus": TEXT, "baseramcount": INT, "gshare": TEXT,
        "resource_type": TEXT, "diskio": INT, "container_name": TEXT, "vo": TEXT, "cloud": TEXT, "walltime": INT,
        "walltimeunit": TEXT, "splitrule": TEXT,
    },
    "jedi_datasets": {
        "jeditaskid": INT, "datasetid": INT, "datasetname": TEXT, "type": TEXT, "masterid": INT, "nfiles": INT,
        "nevents": INT, "neventsused": INT,
    },
    "jobsactive4": {
        "prodsourcelabel": TEXT, "jobstatus": TEXT, "computingsite": TEXT, "workinggroup": TEXT,
        "processingtype": TEXT, "produsername": TEXT, "corecount": INT, "gshare": TEXT, "vo": TEXT,
    },
    "sw_tags": {"panda_queue": TEXT, "data": JSON},
    "global_shares": {"name": TEXT, "value": INT, "parent": TEXT, "throttled": TEXT},
    "jedi_work_queue": {
        "queue_id": INT, "queue_name": TEXT, "queue_type": TEXT, "vo": TEXT, "status": TEXT, "queue_order": INT,
        "criteria": TEXT, "variables": TEXT, "queue_function": TEXT, "partitionid": INT,
    },
    "config": {"app": TEXT, "component": TEXT, "key": TEXT, "value": TEXT, "type": TEXT, "vo": TEXT, "value_json": JSON},
    # Harvester's provisioned slots: the brokers' numSlots, and the queues fast rebrokerage leaves alone
    "harvester_slots": {"pandaqueuename": TEXT, "gshare": TEXT, "resourcetype": TEXT, "numslots": INT,
                        "expirationtime": TIME},
}  # fmt: skip
# The job tables the snapshot's job ages come from (job_ages): the live jobs' creation and modification times per
# job group. Each table is read when it has every column (vo aside: the VO read, else atlas); else a note.
AGE_COLUMNS: dict[str, dict[str, str]] = {
    table: {"computingsite": TEXT, "gshare": TEXT, "resource_type": TEXT, "jobstatus": TEXT,
            "creationtime": TIME, "modificationtime": TIME}
    for table in ("jobsactive4", "jobsdefined4")
}  # fmt: skip
# PanDA's pilot activity per queue (PANDAMETA.SiteData; schema doma_pandameta in PanDA's PostgreSQL layout):
# the brokers' -nopilot and -inactive checks read it, so without it every queue would look pilot-less.
META_COLUMNS: dict[str, dict[str, str]] = {
    "sitedata": {"site": TEXT, "flag": TEXT, "hours": INT, "getjob": INT, "updatejob": INT, "laststart": TIME,
                 "lastpilot": TIME},
}  # fmt: skip
# What a database older than the columns (or without the table) costs brokerage; read as NULL / no rows.
OPTIONAL: dict[str, str] = {
    "ddm_endpoint.detailed_status": "every endpoint is taken as ON for every activity: the blacklist checks "
    "(-blacklist, nucleus 'storage blacklisted') cannot judge",
    "config.value_json": "CONFIG rows of type json are left out (their defaults apply)",
    "jobsdefined_share_stats": "no defined/assigned/waiting job counts: the weights' nDefined/nAssigned terms and "
    "the queued caps (-cap) see only jobsActive4",
    "jedi_tasks.container_name": "tasks carry no container: the container part of the software check (-cache) "
    "cannot judge",
    "jedi_tasks.diskio": "tasks carry no diskIO: the -diskIO check cannot judge",
    "jedi_tasks.vo": "every task is taken as VO atlas: tasks of other VOs go to the ATLAS brokers",
    "jedi_tasks.cloud": "tasks carry no cloud: the generic broker's candidates are every queue",
    "jobs_share_stats.vo": "job counts carry no VO: all are taken as the VO read's (--vo, else atlas), so that VO's "
    "brokerage counts every VO's jobs",
    "jobsdefined_share_stats.vo": "job counts carry no VO: all are taken as the VO read's (--vo, else atlas)",
    "jedi_tasks.walltime": "tasks carry no walltime: the generic broker's walltime check cannot judge",
    "jedi_tasks.walltimeunit": "tasks carry no walltime unit (shown only)",
    "jedi_tasks.splitrule": "tasks carry no split rule: the simulator's jobs take chunk_nevents / chunk_njobs events "
    "(nEventsPerJob, nFilesPerJob, nGBPerJob, tgtMaxOutputForNG, maxWalltime and nMaxFilesPerJob read as not set)",
    "jobsactive4.vo": "user job counts carry no VO: all are taken as the VO read's (--vo, else atlas), so that VO's "
    "user caps and Stabilizer count every VO's users",
    "network_matrix_kv.ts": "network metrics carry no time",
    "harvester_slots": "no Harvester slot entries: numSlots is undefined at every queue (the brokers' numSlots rules "
    "and fast rebrokerage's Harvester_Slots exemption see none)",
    "jedi_work_queue.partitionid": "work queues carry no partition link: each sub queue is run on its own",
}
_FAMILIES = {
    TEXT: {"character varying", "character", "text"},
    INT: {"smallint", "integer", "bigint", "numeric"},
    NUM: {"smallint", "integer", "bigint", "numeric", "double precision", "real"},
    TIME: {"timestamp without time zone", "timestamp with time zone", "date"},
    JSON: {"json", "jsonb", "text", "character varying"},  # SW_TAGS.DATA is text in the public schema
}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class PandaSchemaError(InputError, ValueError):
    """The PanDA database lacks a table or column brokerage reads, or one has the wrong type; lists every one."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(
            f"the PanDA database cannot be read ({count(len(problems), 'problem')}): {'; '.join(problems)}"
        )
        self.problems = problems


Found = dict[str, dict[str, str]]  # table -> column -> data_type, as information_schema has them


def columns_of(conn: Connection, schema: str) -> Found:
    """Every table's columns and types in SCHEMA (names lower-cased, as PanDA's PostgreSQL schema has them).

    Usage: ``columns_of(conn, "doma_panda")["site"]["tier_level"] == "smallint"``
    """
    rows = conn.execute(
        sa.text("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = :s"),
        {"s": schema},
    ).all()
    found: Found = {}
    for table, column, data_type in rows:
        found.setdefault(table.lower(), {})[column.lower()] = data_type
    return found


def check(found: Found, schema: str, tables: dict[str, dict[str, str]]) -> tuple[list[str], list[str]]:
    """(problems, missing optional items) of FOUND against TABLES: a missing table or column, a wrong type family.

    Usage: ``problems, missing = check(columns_of(conn, "doma_panda"), "doma_panda", READ_COLUMNS)``
    """
    problems: list[str] = []
    missing: list[str] = []
    for table, columns in tables.items():
        if table not in found:
            (missing if table in OPTIONAL else problems).append(
                table if table in OPTIONAL else f"table {schema}.{table} is missing"
            )
            continue
        for column, family in columns.items():
            have = found[table].get(column)
            if have is None and f"{table}.{column}" in OPTIONAL:
                missing.append(f"{table}.{column}")
            elif have is None:
                problems.append(f"{schema}.{table}.{column}: column is missing (expected type {family})")
            elif have not in _FAMILIES[family]:
                problems.append(f"{schema}.{table}.{column}: expected a column of type {family}, found {have}")
    return problems, missing


def schema_problems(conn: Connection, schema: str, tables: dict[str, dict[str, str]] | None = None) -> list[str]:
    """Every table or column of TABLES (default READ_COLUMNS) missing in SCHEMA (optional ones aside), or present
    with another type family.

    Usage: ``assert not schema_problems(conn, "doma_panda")``
    """
    return check(columns_of(conn, schema), schema, READ_COLUMNS if tables is None else tables)[0]


def age_sources(found: Found, schema: str) -> tuple[list[tuple[str, bool]], list[str]]:
    """The job tables of AGE_COLUMNS FOUND holds whole, each with whether it has a vo column, and a note per table
    that lacks one (its jobs' ages are then drawn by the simulator).

    Usage: ``tables, notes = age_sources(columns_of(conn, "doma_panda"), "doma_panda")``
    """
    tables: list[tuple[str, bool]] = []
    notes: list[str] = []
    for table, columns in AGE_COLUMNS.items():
        lacking = [c for c in columns if c not in found.get(table, {})]
        if lacking:
            what = f"{schema}.{table}" + ("" if table not in found else f" lacks {', '.join(lacking)}")
            notes.append(f"{what}: its jobs carry no recorded ages; the simulator draws them")
        else:
            tables.append((table, "vo" in found[table]))
    return tables, notes


def missing_notes(missing: list[str], schema: str) -> list[str]:
    """One note per missing optional table or column: what it is and what brokerage cannot judge without it."""
    return [f"{schema}.{item} is missing (older schema): {OPTIONAL[item]}" for item in missing]


def resolve_schema(conn: Connection, given: str | None) -> str:
    """The schema to read: GIVEN as spelled, else lower-cased (PanDA's config templates write DOMA_PANDA, PostgreSQL
    folds unquoted names to doma_panda), else the connection's current schema.

    Usage: ``resolve_schema(conn, "DOMA_PANDA") == "doma_panda"``
    """
    if not given:
        return str(conn.execute(sa.text("SELECT current_schema()")).scalar())
    if not _IDENT.match(given):
        raise PandaSchemaError([f"schema {given!r}: expected a plain identifier"])
    names = set(conn.execute(sa.text("SELECT schema_name FROM information_schema.schemata")).scalars())
    if given in names:
        return given
    return given.lower() if given.lower() in names else given


def meta_candidates(conn: Connection, schema: str) -> list[str]:
    """Schemas other than SCHEMA holding a sitedata table, the one named SCHEMA + 'meta' first (PanDA's layout:
    doma_panda / doma_pandameta, atlas_panda / atlas_pandameta).

    Usage: ``meta_candidates(conn, "doma_panda") == ["doma_pandameta"]``
    """
    rows = conn.execute(
        sa.text("SELECT table_schema FROM information_schema.tables WHERE lower(table_name) = 'sitedata'")
    ).scalars()
    found = sorted({str(s) for s in rows if s != schema}, key=lambda s: (s != f"{schema}meta", s))
    return found


def resolve_meta(conn: Connection, schema: str, given: str | None) -> tuple[str, list[str]]:
    """The schema of SiteData and notes: GIVEN (resolved as ``resolve_schema``), else SCHEMA when it holds sitedata,
    else the one schema that does (named in a note); several candidates or none: SCHEMA, whose check then fails
    with a suggestion.

    Usage: ``meta, notes = resolve_meta(conn, "doma_panda", None)``
    """
    if given:
        return resolve_schema(conn, given), []
    if "sitedata" in columns_of(conn, schema):
        return schema, []
    found = meta_candidates(conn, schema)
    if len(found) == 1 or (found and found[0] == f"{schema}meta"):
        return found[0], [f"SiteData read from {found[0]} (found; give --meta-schema to choose another)"]
    return schema, []


def meta_suggestion(conn: Connection, schema: str) -> str:
    """A hint for a missing sitedata table: where it lives, or PanDA's layout name.

    Usage: ``meta_suggestion(conn, "doma_panda")``
    """
    found = meta_candidates(conn, schema)
    if found:
        return f"sitedata lives in {found[0]}: add --meta-schema {found[0]}"
    return f"PanDA keeps SiteData in the meta schema (e.g. {schema}meta): add --meta-schema"
