"""The grid's tables in the database: snapshot columns bound as rows and bulk-written, and read back typed
exactly as snapshot.frame types them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
import sqlalchemy as sa
from sqlalchemy import Connection

from brokerage.model.snapshot import GridSnapshot, empty_snapshot, frame
from brokerage.model.tables import TABLES, Col
from brokerage.store.models import GRID_MODELS, JSON_TABLES, SnapshotMeta, UTCDateTime, table_of

Columns = dict[str, list[Any]]  # column name -> values, in row order


def bulk_insert(conn: Connection, table: sa.Table, columns: Columns) -> None:
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


def table_columns(name: str, df: pd.DataFrame, taken_at: datetime) -> Columns:
    """Table NAME of a snapshot as the database's columns (JSON tables as one document per row), in row order."""
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
