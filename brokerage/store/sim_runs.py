"""Simulation runs kept in the database with the snapshot and gdpconfig version they ran on; the oldest pruned."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Engine

from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.store.database import read_transaction, write_transaction
from brokerage.store.errors import StoreError
from brokerage.store.models import SimRun

RUNS_KEPT = 200  # newest runs kept; a run of the demo grid is about 0.3 MB compressed
COMPRESSION = 6


@dataclass(frozen=True)
class StoredRun:
    """One stored run's identity and headline (the full result is read with load_run)."""

    run_id: int
    created_at: datetime
    label: str
    snapshot_id: str
    snapshot_version: int
    config_version: int | None
    config_fingerprint: str
    overrides: dict[str, Any]
    hours: float
    seed: int
    headline: dict[str, Any]
    nbytes: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["created_at"] = self.created_at.isoformat()
        return out


def save_run(
    engine: Engine, result: dict[str, Any], snap: GridSnapshot, config: Config, hours: float, seed: int, label: str
) -> int:
    """Keep RESULT (Simulation.result()) with what it ran on; prune to RUNS_KEPT; return its run id.

    Usage: ``run_id = save_run(engine, sim.result(), snap, config, 6, 0, "what-if")``
    """
    data = zlib.compress(json.dumps(result, default=str, separators=(",", ":")).encode(), COMPRESSION)
    row = {
        "created_at": datetime.now(UTC), "label": label, "snapshot_id": snap.snapshot_id,
        "snapshot_version": snap.version, "config_version": config.version,
        "config_fingerprint": config.fingerprint(),
        "overrides": json.dumps(dict(config.overrides), default=str, sort_keys=True),
        "hours": float(hours), "seed": int(seed), "headline": json.dumps(result.get("headline", {}), default=str),
        "nbytes": len(data), "data": data,
    }  # fmt: skip
    table = SimRun.__table__
    with write_transaction(engine, "sim") as conn:
        run_id = int(conn.execute(sa.insert(table).returning(table.c.run_id), row).scalar_one())
        keep = sa.select(table.c.run_id).order_by(table.c.run_id.desc()).limit(RUNS_KEPT).scalar_subquery()
        conn.execute(sa.delete(table).where(table.c.run_id.not_in(keep)))
    return run_id


def _info(r: Any) -> StoredRun:
    created = r.created_at if r.created_at.tzinfo else r.created_at.replace(tzinfo=UTC)
    return StoredRun(
        int(r.run_id), created, r.label, r.snapshot_id, int(r.snapshot_version),
        None if r.config_version is None else int(r.config_version), r.config_fingerprint,
        json.loads(r.overrides), float(r.hours), int(r.seed), json.loads(r.headline), int(r.nbytes),
    )  # fmt: skip


def list_runs(engine: Engine, limit: int = 50) -> list[StoredRun]:
    """The newest LIMIT stored runs, newest first.

    Usage: ``[r.run_id for r in list_runs(engine)]``
    """
    t = SimRun.__table__
    cols = [c for c in t.c if c.name != "data"]
    with read_transaction(engine) as conn:
        rows = conn.execute(sa.select(*cols).order_by(t.c.run_id.desc()).limit(max(1, limit))).all()
    return [_info(r) for r in rows]


def load_run(engine: Engine, run_id: int) -> tuple[StoredRun, dict[str, Any]]:
    """Stored run RUN_ID and its full result; StoreError naming the known ids when there is none.

    Usage: ``info, result = load_run(engine, 3)``
    """
    t = SimRun.__table__
    with read_transaction(engine) as conn:
        row = conn.execute(sa.select(t).where(t.c.run_id == run_id)).first()
        if row is None:
            known = [
                int(x) for x in conn.execute(sa.select(t.c.run_id).order_by(t.c.run_id.desc()).limit(10)).scalars()
            ]
            shown = ", ".join(map(str, known)) if known else "none stored yet"
            raise StoreError(f"run id: {run_id} is not a stored simulation run; newest: {shown}")
    return _info(row), json.loads(zlib.decompress(row.data))
