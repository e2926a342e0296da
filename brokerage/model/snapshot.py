"""GridSnapshot: the grid state as columnar tables, with JSON load/save and the cross-table checks."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from brokerage.model.errors import InputError
from brokerage.model.tables import SCHEMA_VERSION, TABLES, Col
from brokerage.model.validation import MAX_JSON_DEPTH, range_problem, shown_value, validate, value_problem
from brokerage.model.workqueues import criteria_problem


class SnapshotError(InputError, ValueError):
    """A snapshot is malformed; ``problems`` lists every bad field path with what is allowed."""

    def __init__(self, problems: list[str]) -> None:
        shown = "; ".join(problems[:20]) + (f"; … and {len(problems) - 20} more" if len(problems) > 20 else "")
        super().__init__(f"malformed snapshot ({len(problems)} problem{'s' if len(problems) != 1 else ''}): {shown}")
        self.problems = problems


def _empty(name: str) -> pd.DataFrame:
    return pd.DataFrame({c.name: pd.Series(dtype=_DTYPES[c.type]) for c in TABLES[name]})


_DTYPES = {
    "str": "object",
    "int": "float64",  # nullable ints stay float; _coerce_frame narrows the non-nullable ones
    "float": "float64",
    "bool": "bool",
    "time": "datetime64[ns, UTC]",
    "list": "object",
    "json": "object",
}


@dataclass(frozen=True, eq=False)
class GridSnapshot:
    """The grid at one moment, immutable: every table as a DataFrame, plus when it was taken.

    What brokers derive from it (numpy views, indices, verdicts) lives in a ``brokerage.model.cache.GridCache``
    held by the caller, never on the snapshot.
    Usage: ``snap = GridSnapshot.from_json(path); snap.queues.head()``
    """

    tables: Mapping[str, pd.DataFrame]
    taken_at: datetime
    snapshot_id: str = "snapshot"
    version: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "tables", MappingProxyType(dict(self.tables)))

    def __reduce__(self) -> tuple[Any, ...]:
        # a read-only mapping does not pickle; snapshots travel to worker processes
        return (GridSnapshot, (dict(self.tables), self.taken_at, self.snapshot_id, self.version))

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables")
        if tables is not None and name in TABLES:
            return tables[name]
        raise AttributeError(name)

    @property
    def key(self) -> str:
        """Small identity for caches: snapshot id and version."""
        return f"{self.snapshot_id}@{self.version}"

    # --- JSON ---
    @classmethod
    def from_dict(cls, data: Any) -> GridSnapshot:
        """Validate a parsed JSON document and build the snapshot; raise SnapshotError listing every problem."""
        problems = validate(data)
        if problems:
            raise SnapshotError(problems)
        tables = {name: _frame(name, data.get(name, [])) for name in TABLES}
        snap = cls(
            tables=tables,
            taken_at=_parse_time(data["taken_at"]),
            snapshot_id=str(data.get("snapshot_id") or "snapshot"),
            version=int(data.get("version") or 0),
        )
        ref = check_references(snap)
        if ref:
            raise SnapshotError(ref)
        return snap

    @classmethod
    def from_json(cls, path: str | Path) -> GridSnapshot:
        """Load a snapshot JSON file."""
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise SnapshotError([f"{path}: cannot read file ({exc.strerror})"]) from exc
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SnapshotError([f"{path}: not UTF-8 text: byte {exc.start} is {raw[exc.start]:#04x}"]) from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SnapshotError([f"{path}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]) from exc
        except RecursionError as exc:
            raise SnapshotError([f"{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels"]) from exc
        except ValueError as exc:  # e.g. an integer literal longer than Python's 4,300-digit limit
            raise SnapshotError([f"{path}: not JSON: {exc}"]) from exc
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """The snapshot as a JSON-ready document (the schema in docs/snapshot.schema.json)."""
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "snapshot_id": self.snapshot_id,
            "version": self.version,
            "taken_at": _iso(self.taken_at),
        }
        for name, cols in TABLES.items():
            out[name] = _records(self.tables[name], cols)
        return out

    def to_json(self, path: str | Path) -> None:
        """Write the snapshot as JSON; all or nothing: a failed write (a full disk) leaves no partial file and
        raises InputError naming the path."""
        write_whole(Path(path), json.dumps(self.to_dict(), separators=(",", ":")).encode())

    def replace(self, **tables: pd.DataFrame) -> GridSnapshot:
        """A new snapshot with some tables replaced (derived caches are not carried over)."""
        merged = {**self.tables, **tables}
        return GridSnapshot(merged, self.taken_at, self.snapshot_id, self.version + 1)


def write_whole(path: Path, data: bytes) -> None:
    """Write DATA to PATH through a temporary file renamed over it, so PATH is either complete or untouched.

    Usage: ``write_whole(Path("grid.json"), b"{}")``
    """
    in_place = path.exists() and not path.is_file()  # a device or pipe (/dev/stdout): written as it is
    tmp = None if in_place else path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp or path, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if tmp is not None:
            os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write the file ({exc.strerror or exc}); nothing was written") from exc


def empty_snapshot(taken_at: datetime | None = None) -> GridSnapshot:
    """A snapshot with every table empty."""
    return GridSnapshot({n: _empty(n) for n in TABLES}, taken_at or datetime.now(UTC))


def frame(name: str, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Build table NAME from row dicts, filling defaults (no validation; for generators and tests)."""
    return _frame(name, rows)


def _frame(name: str, rows: list[dict[str, Any]]) -> pd.DataFrame:
    cols = TABLES[name]
    data: dict[str, Any] = {}
    for c in cols:
        # null in an optional, non-nullable column means absent: the default
        values = [_default(c) if (v := r.get(c.name)) is None and not c.nullable else v for r in rows]
        if c.type == "time":
            data[c.name] = pd.to_datetime(pd.Series(values, dtype="object"), utc=True, format="ISO8601")
        elif c.type in ("int", "float"):
            data[c.name] = _numbers(c, values)
        elif c.type == "bool":
            data[c.name] = pd.Series([bool(v) for v in values], dtype="bool")
        else:
            data[c.name] = pd.Series(values, dtype="object")
    return pd.DataFrame(data)


def _numbers(c: Col, values: list[Any]) -> pd.Series:
    """A number column; an int64 column is built from the integers themselves, never through float64 (exact)."""
    if c.type == "int" and not c.nullable:
        try:
            return pd.Series(values, dtype="int64")
        except (OverflowError, TypeError, ValueError):
            if all(isinstance(v, int) for v in values):  # beyond int64: kept exact for check_number_ranges to refuse
                return pd.Series(values, dtype="object")
    return pd.Series([np.nan if v is None else v for v in values], dtype="float64")


def check_number_ranges(snap: GridSnapshot) -> list[str]:
    """Every number of SNAP outside its column's range (Col.bounds), for tables built without validate.

    Usage: ``assert not check_number_ranges(snap)``
    """
    problems: list[str] = []
    for name, cols in TABLES.items():
        df = snap.tables[name]
        for c in cols:
            if c.type not in ("int", "float") or c.name not in df:
                continue
            lo, hi = c.bounds()
            values = df[c.name].to_numpy()
            with np.errstate(invalid="ignore"):
                bad = ~((values >= lo) & (values <= hi)) & ~pd.isna(values)
            for i in np.flatnonzero(bad):
                v = values[i]
                shown = int(v) if c.type == "int" and (isinstance(v, int) or np.isfinite(v)) else float(v)
                problems.append(f"{name}[{i}].{c.name}: {range_problem(c, shown)}")
    return problems


def _default(c: Col) -> Any:
    return list(c.default) if isinstance(c.default, list) else c.default


def _records(df: pd.DataFrame, cols: tuple[Col, ...]) -> list[dict[str, Any]]:
    out = []
    names = [c.name for c in cols]
    columns = {c.name: _jsonable(df[c.name], c) for c in cols}
    for i in range(len(df)):
        out.append({n: columns[n][i] for n in names})
    return out


def _jsonable(series: pd.Series, c: Col) -> list[Any]:
    if c.type == "time":
        return [None if pd.isna(v) else _iso(v) for v in series]
    if c.type == "int":
        return [None if pd.isna(v) else int(v) for v in series]
    if c.type == "float":
        return [None if pd.isna(v) else float(v) for v in series]
    if c.type == "bool":
        return [bool(v) for v in series]
    return list(series)


def _iso(t: Any) -> str:
    ts = pd.Timestamp(t)
    if ts.tzinfo is None:
        ts = ts.tz_localize("UTC")
    return ts.tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(value: str) -> datetime:
    ts = pd.Timestamp(value)
    if ts.tzinfo is None:
        ts = ts.tz_localize("UTC")
    return ts.to_pydatetime()


def check_json_columns(snap: GridSnapshot) -> list[str]:
    """Shape problems of every json-typed value in SNAP (for tables built without validate, e.g. by importers).

    Usage: ``assert not check_json_columns(snap)``
    """
    problems: list[str] = []
    for name, cols in TABLES.items():
        for c in cols:
            if c.type != "json" or c.name not in snap.tables[name]:
                continue
            for i, v in enumerate(snap.tables[name][c.name]):
                if msg := value_problem(c, v):
                    problems.append(f"{name}[{i}].{c.name}: {msg}")
    return problems


def _share_cycles(g: pd.DataFrame) -> list[str]:
    """Shares whose parent chain loops back on itself."""
    parent = dict(zip(g["gshare"].astype(str), g["parent"].fillna("").astype(str), strict=True))
    out = []
    for i, name in enumerate(g["gshare"].astype(str)):
        seen, p = {name}, parent.get(name, "")
        while p and p in parent:
            if p in seen:
                out.append(
                    f"gshares[{i}].parent: the share tree loops back to {shown_value(name)} through {shown_value(p)}"
                )
                break
            seen.add(p)
            p = parent[p]
    return out


def _criteria_problems(wq: pd.DataFrame) -> list[str]:
    """Work queues whose criteria cannot be read."""
    out = []
    for i, (text, variables) in enumerate(zip(wq["criteria"], wq["variables"], strict=True)):
        vars_ = variables if isinstance(variables, dict) else {}
        if problem := criteria_problem(str(text or ""), vars_):
            out.append(f"work_queues[{i}].criteria: {problem}")
    return out


def check_references(snap: GridSnapshot) -> list[str]:
    """Cross-table problems: duplicate keys and references to unknown queues, sites or endpoints."""
    problems: list[str] = []

    def dupes(table: str, col: str) -> None:
        s = snap.tables[table][col]
        for i in np.flatnonzero(s.duplicated().to_numpy()):
            problems.append(f"{table}[{i}].{col}: duplicate {shown_value(s.iloc[i])}")

    def dupe_rows(table: str, cols: list[str]) -> None:
        df = snap.tables[table][cols]
        for i in np.flatnonzero(df.duplicated().to_numpy()):
            key = ", ".join(f"{c}={shown_value(df[c].iloc[i])}" for c in cols)
            problems.append(f"{table}[{i}]: duplicate row for {key}")

    def refs(table: str, col: str, target: str, tcol: str, extra: tuple[str, ...] = ()) -> None:
        allowed = set(snap.tables[target][tcol]) | set(extra)
        s = snap.tables[table][col]
        for i in np.flatnonzero(~s.isin(allowed).to_numpy()):
            problems.append(f"{table}[{i}].{col}: unknown {target[:-1]} {shown_value(s.iloc[i])}")

    dupes("queues", "panda_queue")
    dupes("sites", "site_name")
    dupes("ddm_endpoints", "ddm_endpoint_name")
    dupes("tasks", "jeditaskid")
    dupe_rows("datasets", ["jeditaskid", "datasetid"])
    dupes("gshares", "gshare")
    dupes("work_queues", "queue_id")
    dupes("queue_slots", "panda_queue")
    dupe_rows("job_ages", ["panda_queue", "gshare", "resource_type", "jobstatus", "vo"])
    refs("gshares", "parent", "gshares", "gshare", extra=("",))
    refs("queue_slots", "panda_queue", "queues", "panda_queue")
    problems.extend(_share_cycles(snap.tables["gshares"]))
    problems.extend(_criteria_problems(snap.tables["work_queues"]))
    refs("queues", "atlas_site", "sites", "site_name")
    refs("ddm_endpoints", "site_name", "sites", "site_name")
    refs("panda_ddm_relation", "panda_queue", "queues", "panda_queue")
    refs("panda_ddm_relation", "ddm_endpoint_name", "ddm_endpoints", "ddm_endpoint_name")
    refs("job_counts", "panda_queue", "queues", "panda_queue")
    refs("job_ages", "panda_queue", "queues", "panda_queue")
    refs("user_job_counts", "panda_queue", "queues", "panda_queue")
    refs("datasets", "jeditaskid", "tasks", "jeditaskid")
    refs("dataset_replicas", "ddm_endpoint_name", "ddm_endpoints", "ddm_endpoint_name")
    refs("queue_software", "panda_queue", "queues", "panda_queue", extra=("ALL",))
    return problems
