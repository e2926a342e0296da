"""Grid versions kept in the database (archived on every write by store/archive.py): list, load one, choose the
current one, prune."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlalchemy import Engine

from brokerage.model.snapshot import GridSnapshot, SnapshotError
from brokerage.store.archive import live_version
from brokerage.store.database import read_transaction, schema_ready, write_transaction
from brokerage.store.errors import StoreError
from brokerage.store.models import SnapshotMeta, SnapshotVersion
from brokerage.store.repository import load_snapshot, write_grid


@dataclass(frozen=True)
class VersionInfo:
    """One stored grid version: its number, identity, times and size, and whether it is the current one."""

    version: int
    snapshot_id: str
    taken_at: datetime
    saved_at: datetime
    nbytes: int
    current: bool

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "version": self.version,
            "snapshot_id": self.snapshot_id,
            "taken_at": self.taken_at.isoformat(),
            "saved_at": self.saved_at.isoformat(),
            "nbytes": self.nbytes,
            "current": self.current,
        }


def list_versions(engine: Engine) -> list[VersionInfo]:
    """Every stored grid version, newest first (the live one included even before it is archived).

    Usage: ``[v.version for v in list_versions(engine)]``
    """
    if not schema_ready(engine):
        return []
    with read_transaction(engine) as conn:
        live = conn.execute(
            sa.select(SnapshotMeta.snapshot_id, SnapshotMeta.version, SnapshotMeta.taken_at, SnapshotMeta.saved_at)
        ).first()
        rows = conn.execute(
            sa.select(
                SnapshotVersion.version,
                SnapshotVersion.snapshot_id,
                SnapshotVersion.taken_at,
                SnapshotVersion.saved_at,
                SnapshotVersion.nbytes,
            )
        ).all()
    current = None if live is None else int(live[1])
    out = {int(r[0]): VersionInfo(int(r[0]), r[1], r[2], r[3], int(r[4]), int(r[0]) == current) for r in rows}
    if live is not None and current not in out:
        out[current] = VersionInfo(current, live[0], live[2], live[3], 0, True)
    return [out[v] for v in sorted(out, reverse=True)]


def _known(engine: Engine, version: int) -> list[VersionInfo]:
    versions = list_versions(engine)
    if not versions:
        raise StoreError("the database holds no grid; run `brokerage db init` or `brokerage db import FILE`")
    if version not in {v.version for v in versions}:
        shown = ", ".join(str(v.version) for v in versions[:10])
        raise StoreError(f"version: no grid version {version} is stored (stored: {shown})")
    return versions


def load_version(engine: Engine, version: int | None = None) -> GridSnapshot:
    """Grid VERSION (None: the current one) as a GridSnapshot; StoreError naming the stored versions otherwise.

    Usage: ``before, after = load_version(engine, 3), load_version(engine, 4)``
    """
    if version is None:
        return load_snapshot(engine)
    versions = _known(engine, version)
    if next(v for v in versions if v.version == version).current:
        snap = load_snapshot(engine)
        if snap.version == version:
            return snap
    with read_transaction(engine) as conn:
        data = conn.execute(sa.select(SnapshotVersion.data).where(SnapshotVersion.version == version)).scalar()
    if data is None:
        raise StoreError(f"version: grid version {version} was pruned meanwhile")
    try:
        return GridSnapshot.from_dict(json.loads(zlib.decompress(data)))
    except (zlib.error, ValueError, SnapshotError) as exc:
        raise StoreError(f"version: the archive of grid version {version} is unreadable ({exc})") from exc


def use_version(engine: Engine, version: int | None) -> int:
    """Make grid VERSION the current one (None: the newest); return it. The grid tables are rewritten with its
    content under its own number, in one transaction, so every reader switches at once.

    Usage: ``use_version(engine, 3)``
    """
    versions = _known(engine, version) if version is not None else list_versions(engine)
    if not versions:
        raise StoreError("the database holds no grid; run `brokerage db init` or `brokerage db import FILE`")
    target = versions[0].version if version is None else version
    if next(v for v in versions if v.version == target).current:
        return target
    snap = load_version(engine, target)
    with write_transaction(engine, "grid") as conn:
        write_grid(conn, snap, version=target)
    return target


def prune(engine: Engine, *, keep: int | None = None, older_than_days: float | None = None) -> list[int]:
    """Delete archived versions beyond the KEEP newest, or saved more than OLDER_THAN_DAYS ago; the current
    version is never deleted. Return the deleted version numbers (oldest first).

    Usage: ``prune(engine, keep=10)``
    """
    if (keep is None) == (older_than_days is None):
        raise StoreError("prune: give exactly one of --keep N or --older-than DAYS")
    if keep is not None and keep < 1:
        raise StoreError(f"keep: must be at least 1, not {keep}")
    if older_than_days is not None and not older_than_days >= 0:
        raise StoreError(f"older-than: must be a number of days >= 0, not {older_than_days}")
    with write_transaction(engine, "grid") as conn:
        live = live_version(conn)
        rows = conn.execute(
            sa.select(SnapshotVersion.version, SnapshotVersion.saved_at).order_by(SnapshotVersion.version.desc())
        ).all()
        if keep is not None:
            doomed = [int(v) for v, _ in rows[keep:]]
        else:
            limit = datetime.now(UTC) - timedelta(days=float(older_than_days or 0))
            doomed = [int(v) for v, saved in rows if saved < limit]
        doomed = sorted(v for v in doomed if v != live)
        if doomed:
            conn.execute(sa.delete(SnapshotVersion.__table__).where(SnapshotVersion.version.in_(doomed)))
    return doomed
