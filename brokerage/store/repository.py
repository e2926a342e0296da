"""Whole-snapshot save and load over the PanDA-shaped tables, the stored grid's identity, and the task status log."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from brokerage.model.snapshot import (
    GridSnapshot,
    SnapshotError,
    check_json_columns,
    check_number_ranges,
    check_references,
)
from brokerage.sim.status_log import log_problems
from brokerage.sim.task_states import TransitionError, describe_transition_error, is_allowed
from brokerage.store.archive import archive, archive_live, newest_version
from brokerage.store.database import read_transaction, schema_ready, write_transaction
from brokerage.store.errors import StoreError
from brokerage.store.grid_tables import Columns, bulk_insert, read_grid, table_columns
from brokerage.store.models import GRID_MODELS, NATURAL_KEYS, Base, JediTasks, SnapshotMeta, TaskStatusLog, table_of
from brokerage.store.schema import current_revision, head_revision

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
    # above every archived version too: after choosing an older grid, the next number is still a new one
    nxt = (newest_version(conn) or 0) + 1
    conn.execute(sa.update(SnapshotMeta).values(version=nxt, saved_at=datetime.now(UTC)))


# --- save -------------------------------------------------------------------------------------------------------


def store_problems(snap: GridSnapshot) -> list[str]:
    """What would stop SNAP from being stored: broken references and duplicate keys (not the status log).

    Usage: ``assert not store_problems(snap)``
    """
    problems = check_references(snap) + check_json_columns(snap) + check_number_ranges(snap)
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
    columns = {name: table_columns(name, snap.tables[name], snap.taken_at) for name in GRID_MODELS}
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
    columns = {name: table_columns(name, snap.tables[name], snap.taken_at) for name in GRID_MODELS}
    return _write_grid(conn, snap, columns, version)


def _write_grid(conn: Connection, snap: GridSnapshot, columns: dict[str, Columns], chosen: int | None = None) -> int:
    prev = newest_version(conn)
    archive_live(conn)  # the grid being replaced stays readable as its version
    for name in reversed(GRID_MODELS):
        conn.execute(sa.delete(table_of(name)))
    conn.execute(sa.delete(SnapshotMeta.__table__))
    for name in GRID_MODELS:
        bulk_insert(conn, table_of(name), columns[name])
    version = int(snap.version) if prev is None else max(int(snap.version), int(prev) + 1)
    version = version if chosen is None else chosen
    conn.execute(
        sa.insert(SnapshotMeta.__table__),
        {"snapshot_id": snap.snapshot_id, "version": version, "taken_at": snap.taken_at, "saved_at": datetime.now(UTC)},
    )
    archive(conn, snap, version)
    return version


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


def _shown(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)


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
    out: dict[str, list[tuple[Any, ...]]] = {}
    with read_transaction(engine) as conn:
        for table in Base.metadata.sorted_tables:
            stmt = sa.select(table).order_by(*table.primary_key.columns)
            out[table.name] = [tuple(row) for row in conn.execute(stmt)]
    return out
