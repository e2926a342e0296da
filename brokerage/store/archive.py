"""The archive of grid versions: every grid written is kept, compressed, under its version number."""

from __future__ import annotations

import json
import zlib
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy import Connection

from brokerage.model.snapshot import GridSnapshot
from brokerage.store.grid_tables import read_grid
from brokerage.store.models import SnapshotMeta, SnapshotVersion

COMPRESSION = 6  # zlib level: a demo grid (14 MB of JSON) becomes about 1 MB in 0.1 s


def _encode(snap: GridSnapshot) -> bytes:
    return zlib.compress(json.dumps(snap.to_dict(), separators=(",", ":")).encode(), COMPRESSION)


def live_version(conn: Connection) -> int | None:
    """The version the grid tables hold now (the current one), or None."""
    v = conn.execute(sa.select(SnapshotMeta.version)).scalar()
    return None if v is None else int(v)


def newest_version(conn: Connection) -> int | None:
    """The highest version ever stored (archived or live), or None on an empty database."""
    archived = conn.execute(sa.select(sa.func.max(SnapshotVersion.version))).scalar()
    found = [int(v) for v in (archived, live_version(conn)) if v is not None]
    return max(found) if found else None


def is_archived(conn: Connection, version: int) -> bool:
    """True if VERSION has its archive row."""
    stmt = sa.select(SnapshotVersion.version).where(SnapshotVersion.version == version)
    return conn.execute(stmt).first() is not None


def archive(conn: Connection, snap: GridSnapshot, version: int) -> None:
    """Inside a write transaction: keep SNAP as VERSION (no-op when that version is already kept).

    Usage: ``archive(conn, snap, 7)``
    """
    if is_archived(conn, version):
        return
    stored = GridSnapshot(snap.tables, snap.taken_at, snap.snapshot_id, version)
    data = _encode(stored)
    conn.execute(
        sa.insert(SnapshotVersion.__table__),
        {
            "version": version,
            "snapshot_id": snap.snapshot_id,
            "taken_at": snap.taken_at,
            "saved_at": datetime.now(UTC),
            "nbytes": len(data),
            "data": data,
        },
    )


def archive_live(conn: Connection) -> None:
    """Inside a write transaction: keep the grid the tables hold now, if its version has no archive row yet.

    Grids stored before versions were kept, and versions made by status-log appends, are archived this way
    the moment a newer grid replaces them.
    """
    live = live_version(conn)
    if live is None or is_archived(conn, live):
        return
    snap = read_grid(conn)
    if snap is not None:
        archive(conn, snap, live)
