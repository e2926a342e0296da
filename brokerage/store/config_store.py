"""gdpconfig in the database: typed CONFIG rows, numbered versions, per-key history, conflict-safe edits."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from brokerage.model.errors import ConflictError
from brokerage.model.gdpconfig import (
    Config,
    ConfigError,
    ConfigRow,
    Value,
    check_family_members,
    format_value,
    lookup_param,
    parse_value,
)
from brokerage.store.database import read_transaction, schema_ready, write_transaction
from brokerage.store.models import ConfigEntry, ConfigHistory, ConfigVersion, table_of

Coord = tuple[str, str, str, str]  # app, component, key, vo ('' = no VO)


class ConfigConflictError(ConflictError):
    """Keys being saved were changed by someone else after the version the editor started from."""

    def __init__(self, conflicts: Mapping[str, int], base_version: int) -> None:
        shown = ", ".join(f"{k} (changed in version {v})" for k, v in sorted(conflicts.items()))
        super().__init__(f"gdpconfig changed since version {base_version}: {shown}; reload and apply your change again")
        self.conflicts = dict(conflicts)
        self.base_version = base_version


@dataclass(frozen=True)
class ConfigChange:
    """One key changed by a version: text values as CONFIG stores them (None = no row)."""

    app: str
    component: str
    key: str
    vo: str | None
    type: str
    old_value: str | None
    new_value: str | None


@dataclass(frozen=True)
class ConfigVersionRecord:
    """One saved version of gdpconfig and the keys it changed."""

    version: int
    parent_version: int | None
    who: str
    created_at: datetime
    comment: str
    changes: list[ConfigChange] = field(default_factory=list)


def _coord(key: str) -> Coord:
    param = lookup_param(key)
    return (param.app, param.component, key, param.vo or "")


def _stored_text(value: Value, type_: str) -> str:
    """The history text of VALUE: CONFIG.VALUE's form, or the JSON document for json keys."""
    return json.dumps(value, sort_keys=True) if type_ == "json" else format_value(value)


def _entry(coord: Coord, type_: str, text: str, descr: str) -> dict[str, Any]:
    app, component, key, vo = coord
    is_json = type_ == "json"
    return {
        "app": app,
        "component": component,
        "key": key,
        "vo": vo,
        "type": type_,
        "value": None if is_json else text,
        "value_json": text if is_json else None,
        "descr": descr[:256],
    }


# --- reading ----------------------------------------------------------------------------------------------------


def current_version(engine: Engine) -> int:
    """The newest gdpconfig version (0 before the first save).

    Usage: ``base = current_version(engine)``
    """
    if not schema_ready(engine):
        return 0
    with engine.connect() as conn:
        return _head(conn)


def _head(conn: Connection) -> int:
    return int(conn.execute(sa.select(sa.func.coalesce(sa.func.max(ConfigVersion.version), 0))).scalar_one())


def config_rows(engine: Engine) -> list[ConfigRow]:
    """Every CONFIG row (vo '' read back as None).

    Usage: ``[r.key for r in config_rows(engine)]``
    """
    with engine.connect() as conn:
        return _rows(conn)


def _rows(conn: Connection) -> list[ConfigRow]:
    result = conn.execute(
        sa.select(
            ConfigEntry.app,
            ConfigEntry.component,
            ConfigEntry.key,
            ConfigEntry.value,
            ConfigEntry.type,
            ConfigEntry.vo,
            ConfigEntry.value_json,
            ConfigEntry.descr,
        )
    )
    return [
        ConfigRow(
            app=r.app,
            component=r.component,
            key=r.key,
            value=r.value,
            type=r.type,
            vo=r.vo or None,
            value_json=json.loads(r.value_json) if r.value_json is not None else None,
            descr=r.descr or "",
        )
        for r in result
    ]


def load_config(engine: Engine, vo: str = "atlas") -> Config:
    """The stored gdpconfig for VO as a Config (defaults < CONFIG rows), tagged with its version.

    Usage: ``config = load_config(engine); config.get("NQUEUED_SAT_CAP")``
    """
    if not schema_ready(engine):
        return Config(vo=vo, version=0)
    with read_transaction(engine) as conn:
        version = _head(conn)
        rows = _rows(conn)
    return Config.from_rows(rows, vo=vo, version=version)


# --- writing ----------------------------------------------------------------------------------------------------


def save_changes(engine: Engine, changes: Mapping[str, Value], who: str, comment: str, base_version: int) -> int:
    """Validate and store CHANGES (key -> value; None removes the stored row) as a new version; return it.

    Every value is checked against the registry before anything is written (ConfigError names the key and the
    allowed range). If any of the keys changed after BASE_VERSION, nothing is written and ConfigConflictError
    names the keys and the versions that changed them. Keys whose value is already stored are skipped; when
    nothing is left, no version is made and the current one is returned. Writers are serialised (BEGIN
    IMMEDIATE on SQLite, an advisory lock on PostgreSQL), so two concurrent editors cannot both win.
    Usage: ``v = save_changes(engine, {"NQUEUED_SAT_CAP": 300}, "alice", "more queued files", base_version=3)``
    """
    if not changes:
        raise ConfigError("changes", "nothing to save: give at least one KEY=VALUE")
    wanted: dict[Coord, tuple[str, str | None, str]] = {}
    for key, raw in changes.items():
        param = lookup_param(key)
        value = None if raw is None else parse_value(key, raw)
        text = None if value is None else _stored_text(value, param.type)
        wanted[_coord(key)] = (param.type, text, param.description)
    with write_transaction(engine, "config") as conn:
        set_keys = [k for k, raw in changes.items() if raw is not None]
        check_family_members(set_keys, lambda table, column: _column_values(conn, table, column))
        return apply_entries(conn, wanted, who, comment, base_version)


def _column_values(conn: Connection, table: str, column: str) -> set[str]:
    t = table_of(table)
    return {str(v) for (v,) in conn.execute(sa.select(t.c[column]).distinct())}


def apply_entries(
    conn: Connection, wanted: Mapping[Coord, tuple[str, str | None, str]], who: str, comment: str, base: int | None
) -> int:
    """Inside a config write transaction: store WANTED ((app, component, key, vo) -> (type, text or None to remove,
    description)) as a new version by WHO; return it, or the current one when nothing differs.

    With BASE (the version an editor started from), keys changed after it raise ConfigConflictError.
    Usage: ``with write_transaction(engine, "config") as conn: apply_entries(conn, wanted, "alice", "", None)``
    """
    head = _head(conn)
    if base is not None:
        if base > head or base < 0:
            raise ConfigError("base_version", f"{base} does not exist; the newest version is {head}")
        conflicts = _changed_since(conn, list(wanted), base)
        if conflicts:
            raise ConfigConflictError(conflicts, base)
    current = _current_texts(conn)
    todo = {c: w for c, w in wanted.items() if current.get(c, (None, None))[1] != w[1]}
    if not todo:
        return head
    now = datetime.now(UTC)
    version = head + 1
    # the version number is the primary key: a second writer that slipped past the lock would fail here
    conn.execute(
        sa.insert(ConfigVersion.__table__),
        {"version": version, "parent_version": head, "who": who, "created_at": now, "comment": comment},
    )
    history = []
    for coord, (type_, text, descr) in todo.items():
        app, component, key, vo = coord
        where = (
            (ConfigEntry.app == app)
            & (ConfigEntry.component == component)
            & (ConfigEntry.key == key)
            & (ConfigEntry.vo == vo)
        )
        old_type, old_text = current.get(coord, (type_, None))
        conn.execute(sa.delete(ConfigEntry).where(where))
        if text is not None:
            conn.execute(sa.insert(ConfigEntry.__table__), _entry(coord, type_, text, descr))
        history.append(
            {
                "version": version,
                "app": app,
                "component": component,
                "key": key,
                "vo": vo,
                "type": type_ if text is not None else old_type,
                "old_value": old_text,
                "new_value": text,
                "who": who,
                "changed_at": now,
                "comment": comment,
            }
        )
    conn.execute(sa.insert(ConfigHistory.__table__), history)
    return version


def _changed_since(conn: Connection, coords: list[Coord], base: int) -> dict[str, int]:
    rows = conn.execute(
        sa.select(
            ConfigHistory.app, ConfigHistory.component, ConfigHistory.key, ConfigHistory.vo, ConfigHistory.version
        )
        .where(ConfigHistory.version > base)
        .where(ConfigHistory.key.in_(sorted({c[2] for c in coords})))
    ).all()
    wanted = set(coords)
    out: dict[str, int] = {}
    for app, component, key, vo, version in rows:
        if (app, component, key, vo) in wanted:
            out[key] = max(out.get(key, 0), int(version))
    return out


def _current_texts(conn: Connection) -> dict[Coord, tuple[str, str]]:
    rows = conn.execute(
        sa.select(
            ConfigEntry.app, ConfigEntry.component, ConfigEntry.key, ConfigEntry.vo, ConfigEntry.type,
            ConfigEntry.value, ConfigEntry.value_json,
        )
    ).all()  # fmt: skip
    out = {}
    for app, component, key, vo, type_, value, value_json in rows:
        text = _canonical_json(value_json) if type_.lower() == "json" else value
        out[(app, component, key, vo)] = (type_, text)
    return out


def _canonical_json(text: str | None) -> str | None:
    return None if text is None else json.dumps(json.loads(text), sort_keys=True)


# --- history ----------------------------------------------------------------------------------------------------


def history(engine: Engine) -> list[ConfigVersionRecord]:
    """Every saved version, newest first, each with the keys it changed.

    Usage: ``for v in history(engine): print(v.version, v.who, [c.key for c in v.changes])``
    """
    if not schema_ready(engine):
        return []
    with read_transaction(engine) as conn:
        versions = conn.execute(sa.select(ConfigVersion.__table__).order_by(ConfigVersion.version.desc())).all()
        changes = conn.execute(sa.select(ConfigHistory.__table__).order_by(ConfigHistory.version, ConfigHistory.id))
        by_version: dict[int, list[ConfigChange]] = {}
        for h in changes:
            by_version.setdefault(h.version, []).append(
                ConfigChange(h.app, h.component, h.key, h.vo or None, h.type, h.old_value, h.new_value)
            )
        return [
            ConfigVersionRecord(
                v.version, v.parent_version, v.who, v.created_at, v.comment, by_version.get(v.version, [])
            )
            for v in versions
        ]


def _texts_at(conn: Connection, version: int) -> dict[Coord, tuple[str, str]]:
    head = _head(conn)
    if version < 0 or version > head:
        raise ConfigError("version", f"{version} does not exist; versions run from 0 to {head}")
    rows = conn.execute(
        sa.select(
            ConfigHistory.app, ConfigHistory.component, ConfigHistory.key, ConfigHistory.vo, ConfigHistory.type,
            ConfigHistory.new_value,
        )
        .where(ConfigHistory.version <= version)
        .order_by(ConfigHistory.version, ConfigHistory.id)
    ).all()  # fmt: skip
    state: dict[Coord, tuple[str, str]] = {}
    for app, component, key, vo, type_, new in rows:
        if new is None:
            state.pop((app, component, key, vo), None)
        else:
            state[(app, component, key, vo)] = (type_, new)
    return state


def _as_rows(texts: Mapping[Coord, tuple[str, str]]) -> list[ConfigRow]:
    rows = []
    for (app, component, key, vo), (type_, text) in texts.items():
        is_json = type_ == "json"
        rows.append(
            ConfigRow(
                app, component, key, None if is_json else text, type_, vo or None, json.loads(text) if is_json else None
            )
        )
    return rows


def values_at(engine: Engine, version: int, vo: str = "atlas") -> dict[str, Value]:
    """The stored (non-default) gdpconfig values as they were right after VERSION, resolved for VO.

    Usage: ``values_at(engine, 3) == {"NQUEUED_SAT_CAP": 300}``
    """
    with read_transaction(engine) as conn:
        texts = _texts_at(conn, version)
    return dict(Config.from_rows(_as_rows(texts), vo=vo).stored)


def diff_versions(engine: Engine, a: int, b: int, vo: str = "atlas") -> dict[str, tuple[Value, Value]]:
    """Keys whose stored value differs between versions A and B: key -> (value at A, value at B); None = not set.

    Usage: ``diff_versions(engine, 2, 5)["NQUEUED_SAT_CAP"] == (150, 300)``
    """
    at_a, at_b = values_at(engine, a, vo), values_at(engine, b, vo)
    return {
        k: (at_a.get(k), at_b.get(k))
        for k in sorted(set(at_a) | set(at_b))
        if k not in at_a or k not in at_b or at_a[k] != at_b[k]
    }


def restore_version(engine: Engine, version: int, who: str, comment: str = "") -> int:
    """Make a new version whose stored values equal those of VERSION; return it (the current one if equal).

    Usage: ``restore_version(engine, 2, "alice", "undo the cap change")``
    """
    with write_transaction(engine, "config") as conn:
        target = _texts_at(conn, version)
        current = _current_texts(conn)
        wanted: dict[Coord, tuple[str, str | None, str]] = {}
        for coord in sorted(set(target) | set(current)):
            if coord in target:
                type_, text = target[coord]
                wanted[coord] = (type_, text, _descr(coord[2]))
            else:
                wanted[coord] = (current[coord][0], None, "")
        note = f"restore version {version}" + (f": {comment}" if comment else "")
        return apply_entries(conn, wanted, who, note, None)


def _descr(key: str) -> str:
    try:
        return lookup_param(key).description
    except ConfigError:
        return ""
