"""Engines, locking transactions, and whole-snapshot save/load over the PanDA-shaped tables."""

from __future__ import annotations

import json
import os
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa
from sqlalchemy import Connection, Engine, event

from brokerage.model.snapshot import (
    GridSnapshot,
    SnapshotError,
    check_json_columns,
    check_references,
    empty_snapshot,
    frame,
)
from brokerage.model.tables import TABLES, Col
from brokerage.sim.status_log import log_problems
from brokerage.sim.task_states import TransitionError, describe_transition_error, is_allowed
from brokerage.store.models import (
    GRID_MODELS,
    JSON_TABLES,
    NATURAL_KEYS,
    JediTasks,
    SnapshotMeta,
    TaskStatusLog,
    UTCDateTime,
    table_of,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SQLITE = REPO_ROOT / "data" / "brokerage.sqlite"
# a writer waits this long for another writer's lock, then gets a plain "busy" message: a server thread must
# not hang for half a minute (BROKERAGE_SQLITE_BUSY_MS overrides it, e.g. for long batch imports)
SQLITE_BUSY_TIMEOUT_MS = int(os.environ.get("BROKERAGE_SQLITE_BUSY_MS", "3000"))
# PostgreSQL advisory lock ids: writers of the same kind queue up, readers never wait.
_PG_LOCKS = {"grid": 7_310_001, "config": 7_310_002, "schema": 7_310_003, "sim": 7_310_004}


class StoreError(ValueError):
    """A store operation refers to something the database does not hold."""


class DatabaseFileError(StoreError):
    """The SQLite file is missing, or was deleted or replaced under a running process: writes are refused."""


class StoreBusyError(StoreError):
    """Another writer held the database lock longer than the busy timeout."""

    def __init__(self) -> None:
        super().__init__("the database is busy with another write; nothing was saved, try again in a moment")


URL_HELP = "expected sqlite:///path/file.sqlite or postgresql+psycopg://user@host/db"


# --- engines ------------------------------------------------------------------------------------------------


def database_url() -> str:
    """DATABASE_URL from the environment, else the embedded SQLite file data/brokerage.sqlite.

    Usage: ``engine = make_engine(database_url())``
    """
    url = os.environ.get("DATABASE_URL", "").strip()
    return url or f"sqlite:///{DEFAULT_SQLITE}"


def make_engine(url: str, *, create: bool = True) -> Engine:
    """An engine for URL: SQLite in WAL mode with foreign keys and a busy timeout, or PostgreSQL via psycopg 3.

    With ``create=False`` a missing SQLite file is a StoreError instead of a new empty database.
    Usage: ``engine = make_engine("sqlite:///data/brokerage.sqlite")``
    """
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    try:
        parsed = sa.make_url(url)
        backend = parsed.get_backend_name()
        if backend not in ("sqlite", "postgresql"):
            raise StoreError(f"DATABASE_URL: the {backend!r} database is not supported; {URL_HELP}")
        if backend == "sqlite":
            path = Path(parsed.database) if parsed.database and parsed.database != ":memory:" else None
            if path is not None and not create and not path.exists():
                raise DatabaseFileError(f"the database file {path} does not exist; create it with `brokerage db init`")
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            engine = sa.create_engine(parsed)
            _configure_sqlite(engine, path)
            return engine
        return sa.create_engine(parsed, pool_pre_ping=True)
    except sa.exc.ArgumentError as exc:  # never echo the URL: it may hold a password
        raise StoreError(f"DATABASE_URL is not a usable database URL ({str(exc).splitlines()[0]}); {URL_HELP}") from exc


@cache
def get_engine(url: str | None = None) -> Engine:
    """One shared engine per URL for a process (the dashboard); defaults to database_url().

    Usage: ``get_engine().dialect.name``
    """
    return make_engine(url or database_url())


# engine -> (file, (st_dev, st_ino)) when the engine first connected
_FILE_IDS: weakref.WeakKeyDictionary[Engine, tuple[Path, tuple[int, int]]] = weakref.WeakKeyDictionary()


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def check_database_file(engine: Engine) -> None:
    """Raise DatabaseFileError if ENGINE's SQLite file was deleted or replaced since the engine first opened it.

    A connection keeps writing into a deleted file's inode, so without this check saves would vanish silently.
    Usage: ``check_database_file(engine)`` before a write
    """
    known = _FILE_IDS.get(engine)
    if known is None:
        return
    path, ident = known
    now = _file_id(path)
    if now is None:
        raise DatabaseFileError(
            f"the database file {path} was deleted while the server was running; nothing was saved "
            "(restore the file or run `brokerage db init`, then restart the server)"
        )
    if now != ident:
        raise DatabaseFileError(
            f"the database file {path} was replaced while the server was running; nothing was saved "
            "(restart the server to use the new file)"
        )


def _configure_sqlite(engine: Engine, path: Path | None = None) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # pysqlite's own implicit BEGIN cannot be made IMMEDIATE; emit BEGIN ourselves (see _on_begin)
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")  # safe in WAL mode; full fsync per commit is not needed
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()
        if path is not None and engine not in _FILE_IDS and (ident := _file_id(path)) is not None:
            _FILE_IDS[engine] = (path, ident)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")


@contextmanager
def write_transaction(engine: Engine, lock: str = "grid") -> Iterator[Connection]:
    """A transaction that holds the write lock LOCK until commit: BEGIN IMMEDIATE on SQLite, an advisory
    transaction lock on PostgreSQL. Writers of one kind run one after another; readers are not blocked.

    Usage: ``with write_transaction(engine, "config") as conn: ...``
    """
    if engine.dialect.name == "sqlite":
        check_database_file(engine)
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            conn.execution_options(sqlite_begin="IMMEDIATE")
            check_database_file(engine)  # the first connect records the file; a reused one re-checks it
        try:
            tx = conn.begin()
        except sa.exc.OperationalError as exc:
            if "locked" in str(exc.orig) or "busy" in str(exc.orig):
                raise StoreBusyError() from exc
            raise
        with tx:
            if engine.dialect.name == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCKS[lock]})
            yield conn


@contextmanager
def read_transaction(engine: Engine) -> Iterator[Connection]:
    """A read-only transaction that sees one consistent state of every table.

    Usage: ``with read_transaction(engine) as conn: ...``
    """
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            yield conn


def schema_ready(engine: Engine) -> bool:
    """True if the schema exists (``brokerage db init`` has run).

    Usage: ``if not schema_ready(engine): upgrade(engine)``
    """
    return sa.inspect(engine).has_table(SnapshotMeta.__tablename__)


# --- snapshot identity ----------------------------------------------------------------------------------------


def is_empty(engine: Engine) -> bool:
    """True if the database holds no grid (or has no schema yet).

    Usage: ``if is_empty(engine): save_snapshot(engine, demo)``
    """
    if not schema_ready(engine):
        return True
    with engine.connect() as conn:
        return _is_empty(conn)


def _is_empty(conn: Connection) -> bool:
    for model in (SnapshotMeta, *GRID_MODELS.values()):
        if conn.execute(sa.select(sa.literal(1)).select_from(model.__table__).limit(1)).first() is not None:
            return False
    return True


def snapshot_meta(engine: Engine) -> tuple[str, int, datetime] | None:
    """(snapshot_id, version, taken_at) of the stored grid, or None; a cheap cache key.

    Usage: ``sid, version, _ = snapshot_meta(engine)``
    """
    if not schema_ready(engine):
        return None
    with engine.connect() as conn:
        row = conn.execute(sa.select(SnapshotMeta.snapshot_id, SnapshotMeta.version, SnapshotMeta.taken_at)).first()
    return None if row is None else (row[0], int(row[1]), row[2])


def snapshot_key(engine: Engine) -> str | None:
    """``snapshot_id@version`` of the stored grid (the same shape as GridSnapshot.key), or None.

    Usage: ``cache_key = (snapshot_key(engine), task_id, config.fingerprint())``
    """
    meta = snapshot_meta(engine)
    return None if meta is None else f"{meta[0]}@{meta[1]}"


def _bump_version(conn: Connection) -> None:
    from brokerage.store.versions import newest_version

    # above every archived version too: after choosing an older grid, the next number is still a new one
    nxt = (newest_version(conn) or 0) + 1
    conn.execute(sa.update(SnapshotMeta).values(version=nxt, saved_at=datetime.now(UTC)))


# --- save -------------------------------------------------------------------------------------------------------


def store_problems(snap: GridSnapshot) -> list[str]:
    """What would stop SNAP from being stored: broken references and duplicate keys (not the status log).

    Usage: ``assert not store_problems(snap)``
    """
    problems = check_references(snap) + check_json_columns(snap)
    single_checked = {("queues", "panda_queue"), ("sites", "site_name"), ("ddm_endpoints", "ddm_endpoint_name")}
    single_checked.add(("tasks", "jeditaskid"))
    for name, key in NATURAL_KEYS.items():
        if not key or (len(key) == 1 and (name, key[0]) in single_checked):
            continue
        df = snap.tables[name]
        dup = df.duplicated(list(key)).to_numpy()
        for i in np.flatnonzero(dup):
            shown = ", ".join(f"{k}={df[k].iloc[i]!r}" for k in key)
            problems.append(f"{name}[{i}]: duplicate key ({shown})")
    log = snap.tables["task_status_log"]
    if not log.empty:
        known = set(snap.tables["tasks"]["jeditaskid"].tolist())
        for i in np.flatnonzero(~log["jeditaskid"].isin(known).to_numpy()):
            problems.append(f"task_status_log[{i}].jeditaskid: unknown task {log['jeditaskid'].iloc[i]!r}")
    return problems


def check_storable(snap: GridSnapshot) -> None:
    """Raise SnapshotError (references, keys) or TransitionError (status log) listing every problem of SNAP.

    Usage: ``check_storable(snap)  # before a long job that ends in save_snapshot``
    """
    problems = store_problems(snap)
    if problems:
        raise SnapshotError(problems)
    bad_log = log_problems(snap.tables["task_status_log"], snap.tables["tasks"])
    if bad_log:
        raise TransitionError(f"{len(bad_log)} illegal entries in task_status_log: {bad_log[0]}", bad_log)


def save_snapshot(engine: Engine, snap: GridSnapshot, *, only_if_empty: bool = False) -> int | None:
    """Store SNAP as the new current grid in one transaction (CONFIG and its history stay); return its version.

    The grid it replaces stays in snapshot_versions (``brokerage.store.versions``) until pruned.

    The stored version is SNAP.version on a fresh database and grows by at least one on every later save, so
    ``snapshot_key`` changes whenever the content may have. With ONLY_IF_EMPTY nothing is written (and None is
    returned) when the database already holds a grid.
    Usage: ``version = save_snapshot(engine, snap)``
    """
    check_storable(snap)
    columns = {name: _rows(name, snap.tables[name], snap.taken_at) for name in GRID_MODELS}
    with write_transaction(engine, "grid") as conn:
        if only_if_empty and not _is_empty(conn):
            return None
        version = _write_grid(conn, snap, columns)
    return version


def write_grid(conn: Connection, snap: GridSnapshot, *, version: int | None = None) -> int:
    """Inside an open write transaction: check SNAP and replace the grid tables by it; return the stored version.

    VERSION stores it under that number (choosing an archived version again); by default it gets a new one.
    Usage: ``with write_transaction(engine) as conn: write_grid(conn, merged)``
    """
    check_storable(snap)
    columns = {name: _rows(name, snap.tables[name], snap.taken_at) for name in GRID_MODELS}
    return _write_grid(conn, snap, columns, version)


Columns = dict[str, list[Any]]  # column name -> values, in row order


def _write_grid(conn: Connection, snap: GridSnapshot, columns: dict[str, Columns], chosen: int | None = None) -> int:
    from brokerage.store import versions

    prev = versions.newest_version(conn)
    versions.archive_live(conn)  # the grid being replaced stays readable as its version
    for name in reversed(GRID_MODELS):
        conn.execute(sa.delete(table_of(name)))
    conn.execute(sa.delete(SnapshotMeta.__table__))
    for name in GRID_MODELS:
        _bulk_insert(conn, table_of(name), columns[name])
    version = int(snap.version) if prev is None else max(int(snap.version), int(prev) + 1)
    version = version if chosen is None else chosen
    conn.execute(
        sa.insert(SnapshotMeta.__table__),
        {"snapshot_id": snap.snapshot_id, "version": version, "taken_at": snap.taken_at, "saved_at": datetime.now(UTC)},
    )
    versions.archive(conn, snap, version)
    return version


def _bulk_insert(conn: Connection, table: sa.Table, columns: Columns) -> None:
    """Insert whole columns through the driver: COPY on PostgreSQL, executemany on SQLite.

    SQLAlchemy's per-row parameter handling costs more than the database itself for tens of thousands of
    rows, so values are adapted here column by column (times as the same UTC text SQLAlchemy writes on SQLite).
    """
    names = list(columns)
    if not names or not columns[names[0]]:
        return
    quote = conn.dialect.identifier_preparer.quote
    target = f"{quote(table.name)} ({', '.join(quote(n) for n in names)})"
    time_cols = {c.name for c in table.columns if isinstance(c.type, UTCDateTime)}
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        if conn.dialect.name == "postgresql":
            with cursor.copy(f"COPY {target} FROM STDIN") as copy:
                for row in zip(*columns.values(), strict=True):
                    copy.write_row(row)
        else:
            values = [_sqlite_times(v) if n in time_cols else v for n, v in columns.items()]
            placeholders = ", ".join("?" for _ in names)
            cursor.executemany(f"INSERT INTO {target} VALUES ({placeholders})", list(zip(*values, strict=True)))
    finally:
        cursor.close()


def _sqlite_times(values: list[Any]) -> list[str | None]:
    # the text form SQLAlchemy's SQLite DateTime type writes and parses back
    return [
        None if v is None else v.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
        for v in values
    ]


def _utc(t: datetime) -> datetime:
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def _rows(name: str, df: pd.DataFrame, taken_at: datetime) -> Columns:
    cols = TABLES[name]
    seq = list(range(len(df)))
    if name in JSON_TABLES:
        key = JSON_TABLES[name]
        return {
            key: df[key].tolist(),
            "data": _json_docs(df, cols, exclude=key),
            "last_update": [_utc(taken_at)] * len(df),
            "seq": seq,
        }
    data = {c.name: _bind_values(df[c.name], c) for c in cols}
    data["seq"] = seq
    return data


def _bind_values(s: pd.Series, c: Col) -> list[Any]:
    values = s.tolist()
    if c.type == "time":
        return [None if v is None or v is pd.NaT else _utc(pd.Timestamp(v).to_pydatetime()) for v in values]
    if c.type == "int":
        return [None if v is None or v != v else int(v) for v in values]
    if c.type == "float":
        return [None if v is None or v != v else float(v) for v in values]
    if c.type == "bool":
        return [bool(v) for v in values]
    if c.type == "list":  # a JSON array as text (a JSON table's document keeps the list itself)
        return [None if v is None else json.dumps(list(v), separators=(",", ":")) for v in values]
    if c.type == "json":
        return [None if v is None else json.dumps(v, separators=(",", ":")) for v in values]
    return [None if isinstance(v, float) and v != v else v for v in values]


def _json_docs(df: pd.DataFrame, cols: tuple[Col, ...], exclude: str) -> list[str]:
    columns = {c.name: _json_values(df[c.name], c) for c in cols if c.name != exclude}
    names = list(columns)
    return [
        json.dumps(dict(zip(names, values, strict=True)), separators=(",", ":"))
        for values in zip(*columns.values(), strict=True)
    ]


def _json_values(s: pd.Series, c: Col) -> list[Any]:
    if c.type == "time":
        return [None if v is pd.NaT or v is None else pd.Timestamp(v).isoformat() for v in s.tolist()]
    if c.type in ("list", "json"):  # kept as JSON inside the row's document
        return s.tolist()
    return _bind_values(s, c)


# --- load -------------------------------------------------------------------------------------------------------


def load_snapshot(engine: Engine) -> GridSnapshot:
    """The stored grid as a GridSnapshot (bulk reads, columns built typed as snapshot.frame builds them).

    Usage: ``snap = load_snapshot(make_engine(database_url()))``
    """
    if not schema_ready(engine):
        raise StoreError(f"{_shown(engine)} has no schema yet; run `brokerage db init`")
    check_schema_current(engine)
    with read_transaction(engine) as conn:
        snap = read_grid(conn)
    if snap is None:
        raise StoreError(f"{_shown(engine)} holds no grid; run `brokerage db init` or `brokerage db import FILE`")
    return snap


_LOADED: dict[str, GridSnapshot] = {}


def check_schema_current(engine: Engine) -> None:
    """StoreError when the database's schema is older than this code's newest migration (tables would be missing).

    Usage: ``check_schema_current(engine)``
    """
    from brokerage.store.schema import current_revision, head_revision

    have, want = current_revision(engine), head_revision()
    if have != want:
        raise StoreError(
            f"{_shown(engine)} has schema revision {have or 'none'} but this version needs {want}; run "
            "`brokerage db init` to upgrade it in place (stored grids, gdpconfig and history are kept)"
        )


def cached_snapshot(engine: Engine) -> GridSnapshot:
    """load_snapshot, memoised per database on the stored snapshot_id@version (one cheap query when unchanged).

    Snapshots are treated as immutable, so the same object is handed to every caller until the database changes.
    Usage: ``snap = cached_snapshot(get_engine())``
    """
    where = _shown(engine)
    key = snapshot_key(engine)
    hit = _LOADED.get(where)
    if hit is not None and key == hit.key:
        return hit
    snap = load_snapshot(engine)
    _LOADED[where] = snap
    return snap


def read_grid(conn: Connection) -> GridSnapshot | None:
    """Inside an open transaction: the stored grid, or None when there is none.

    Usage: ``with write_transaction(engine) as conn: current = read_grid(conn)``
    """
    meta = conn.execute(sa.select(SnapshotMeta.snapshot_id, SnapshotMeta.version, SnapshotMeta.taken_at)).first()
    if meta is None:
        return None
    tables = {name: _read_table(conn, name) for name in GRID_MODELS}
    return GridSnapshot(tables, meta[2], str(meta[0]), int(meta[1]))


def read_grid_or_blank(conn: Connection) -> GridSnapshot:
    """Inside an open transaction: the stored grid, or an empty one named "imported" for an import to fill.

    Usage: ``with write_transaction(engine, "grid") as conn: current = read_grid_or_blank(conn)``
    """
    current = read_grid(conn)
    if current is None:
        blank = empty_snapshot(datetime.now(UTC))
        current = GridSnapshot(blank.tables, blank.taken_at, "imported", 0)
    return current


def _shown(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)


_SELECT_SQL: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}


def _select_sql(name: str, dialect: Any) -> tuple[str, tuple[str, ...]]:
    cached = _SELECT_SQL.get((name, dialect.name))
    if cached is not None:
        return cached
    table = table_of(name)
    if name in JSON_TABLES:
        names: tuple[str, ...] = (JSON_TABLES[name], "data")
    else:
        names = tuple(c.name for c in TABLES[name])
    stmt = sa.select(*(table.c[n] for n in names)).order_by(table.c.seq)
    _SELECT_SQL[(name, dialect.name)] = (str(stmt.compile(dialect=dialect)), names)
    return _SELECT_SQL[(name, dialect.name)]


def _read_table(conn: Connection, name: str) -> pd.DataFrame:
    sql, names = _select_sql(name, conn.dialect)
    # the driver's own cursor skips SQLAlchemy's per-row and per-value result handling; columns are typed in bulk
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(sql)
        rows = cursor.fetchall()
    finally:
        cursor.close()
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    if name in JSON_TABLES:
        key = JSON_TABLES[name]
        docs = [{key: k, **json.loads(d)} for k, d in zip(columns[0], columns[1], strict=True)]
        return frame(name, docs)
    by_name = dict(zip(names, columns, strict=True))
    return pd.DataFrame({c.name: _typed(c, list(by_name[c.name])) for c in TABLES[name]})


def _typed(c: Col, values: list[Any]) -> pd.Series:
    """One column typed exactly as snapshot.frame types it."""
    if c.type == "time":
        return pd.to_datetime(pd.Series(values, dtype="object"), utc=True, format="ISO8601")
    if c.type == "int" and not c.nullable:
        return pd.Series(values, dtype="int64")
    if c.type in ("int", "float"):
        return pd.Series(values, dtype="float64")  # None becomes NaN
    if c.type == "bool":
        return pd.Series(np.array(values, dtype=bool))
    if c.type == "list":
        return pd.Series([[] if v is None else json.loads(v) for v in values], dtype="object")
    if c.type == "json":
        return pd.Series([c.default if v is None else json.loads(v) for v in values], dtype="object")
    return pd.Series(values, dtype="object")


# --- task status log --------------------------------------------------------------------------------------------


def append_status(engine: Engine, jeditaskid: int, status: str, when: datetime) -> int:
    """Log that task JEDITASKID entered STATUS at WHEN, and make it the task's status; return the new version.

    Refused with TransitionError when STATUS is not an allowed next status after the task's last logged one
    (a task without log entries must start as registered), when a resume does not return to the paused-in
    status, or when WHEN is earlier than the last entry.
    Usage: ``append_status(engine, 1234, "running", datetime.now(UTC))``
    """
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    with write_transaction(engine, "grid") as conn:
        if conn.execute(sa.select(JediTasks.jeditaskid).where(JediTasks.jeditaskid == jeditaskid)).first() is None:
            raise StoreError(f"jeditaskid: unknown task {jeditaskid}")
        recent = conn.execute(
            sa.select(TaskStatusLog.status, TaskStatusLog.modificationtime)
            .where(TaskStatusLog.jeditaskid == jeditaskid)
            .order_by(TaskStatusLog.modificationtime.desc(), TaskStatusLog.seq.desc())
            .limit(2)
        ).all()
        prev = recent[0][0] if recent else None
        if not is_allowed(prev, status):
            raise TransitionError(f"task {jeditaskid}: {describe_transition_error(prev, status)}")
        if prev == "paused" and len(recent) > 1 and status != recent[1][0]:
            raise TransitionError(
                f"task {jeditaskid}: a resumed task returns to {recent[1][0]!r}, the status it was paused in, "
                f"not {status!r}"
            )
        if recent and when < recent[0][1]:
            raise TransitionError(
                f"task {jeditaskid}: {status!r} at {when.isoformat()} is earlier than the last entry "
                f"{prev!r} at {recent[0][1].isoformat()}"
            )
        seq = conn.execute(sa.select(sa.func.coalesce(sa.func.max(TaskStatusLog.seq), -1) + 1)).scalar_one()
        conn.execute(
            sa.insert(TaskStatusLog.__table__),
            {"seq": seq, "jeditaskid": jeditaskid, "status": status, "modificationtime": when},
        )
        conn.execute(
            sa.update(JediTasks).where(JediTasks.jeditaskid == jeditaskid).values(status=status, modificationtime=when)
        )
        _bump_version(conn)
        return int(conn.execute(sa.select(sa.func.max(SnapshotMeta.version))).scalar() or 0)


def task_history(engine: Engine, jeditaskid: int) -> list[tuple[str, datetime]]:
    """(status, time) entries of one task, oldest first.

    Usage: ``[s for s, _ in task_history(engine, 1234)]``
    """
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(TaskStatusLog.status, TaskStatusLog.modificationtime)
            .where(TaskStatusLog.jeditaskid == jeditaskid)
            .order_by(TaskStatusLog.modificationtime, TaskStatusLog.seq)
        ).all()
    return [(r[0], r[1]) for r in rows]


def table_contents(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, ordered by primary key: a before/after fingerprint of the whole database.

    Usage: ``before = table_contents(engine); ...; assert table_contents(engine) == before``
    """
    from brokerage.store.models import Base

    out: dict[str, list[tuple[Any, ...]]] = {}
    with read_transaction(engine) as conn:
        for table in Base.metadata.sorted_tables:
            stmt = sa.select(table).order_by(*table.primary_key.columns)
            out[table.name] = [tuple(row) for row in conn.execute(stmt)]
    return out
