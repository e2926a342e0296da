"""Import grid descriptions (snapshot, CRIC queues, DDM endpoints, sites JSON) all or nothing; see docs/import.md."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from sqlalchemy import Engine

from brokerage.model.snapshot import GridSnapshot, SnapshotError, frame
from brokerage.model.tables import (
    BARE_NUCLEUS_MODES,
    ENDPOINT_STATUSES,
    QUEUE_STATUSES,
    QUEUE_TYPES,
    SITE_ROLES,
    TABLES,
)
from brokerage.model.validation import validate
from brokerage.model.words import count
from brokerage.sim.task_states import TransitionError
from brokerage.store.live_sources import LIVE_KINDS, LIVE_LABELS, detect_live_kind, import_live
from brokerage.store.repository import read_grid_or_blank, save_snapshot, write_grid, write_transaction

KINDS = ("snapshot", "cric_queues", "ddm_endpoints", "sites", "dirac", *LIVE_KINDS)
KIND_LABELS = {
    "snapshot": "grid snapshot",
    "dirac": "DIRAC tables",
    "cric_queues": "CRIC queues",
    "ddm_endpoints": "DDM endpoints",
    "sites": "sites",
    **LIVE_LABELS,
}
# Attributes that mark an object as a CRIC queue, a DDM endpoint or a site (votes for detect_kind).
_QUEUE_HINTS = frozenset(
    {"panda_resource", "atlas_site", "corecount", "corepower", "maxrss", "maxtime", "maxwdir", "astorages",
     "catchall", "jobseed", "releases", "capability", "nickname", "fairsharepolicy", "wnconnectivity", "queues"}
)  # fmt: skip
_ENDPOINT_HINTS = frozenset(
    {"is_tape", "token", "space_total", "space_free", "space_used", "space_expired", "detailed_status",
     "rc_site", "endpoint", "arprotocols", "read_lan", "write_lan"}
)  # fmt: skip
# A lone CRIC queue object (the pilot's queuedata.json) names itself and states its cores.
_SINGLE_QUEUE_NAMES = ("panda_resource", "nickname")
_SINGLE_QUEUE_ATTRS = ("capability", "corecount")
_SITE_HINTS = frozenset({"tier_level", "datapolicies", "ddmendpoints", "presources", "role", "bare_nucleus"})
ACTIVITIES = ("read_lan", "write_lan", "read_wan", "write_wan")


class ImportFileError(ValueError):
    """A file cannot be imported; ``problems`` lists every reason, each naming the entry and field."""

    def __init__(self, source: str, problems: list[str]) -> None:
        shown = "; ".join(problems[:20]) + (f"; … and {len(problems) - 20} more" if len(problems) > 20 else "")
        super().__init__(f"{source}: {count(len(problems), 'problem')}, nothing imported: {shown}")
        self.source = source
        self.problems = problems


@dataclass
class ImportResult:
    """What an import wrote: the detected kind, rows per snapshot table, notes, and the stored grid version."""

    source: str
    kind: str
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    version: int = 0

    def summary(self) -> str:
        """One line for the command line."""
        counts = ", ".join(f"{n} {t}" for t, n in self.counts.items())
        return f"imported {self.source} ({KIND_LABELS[self.kind]}): {counts}; grid version {self.version}"


# --- entry points -------------------------------------------------------------------------------------------------


def import_file(engine: Engine, path: str | Path) -> ImportResult:
    """Import the JSON file PATH (kind detected from its content); raise ImportFileError listing every problem.

    A snapshot replaces the whole grid; CRIC queues ({name: {atlas_site, corecount, astorages, ...}}), DDM
    endpoints ({name: {site, is_tape, space_total, ...}}) and sites ({name: {tier_level, role or datapolicies,
    ...}}) are merged into the stored grid by name. Nothing is written unless the whole file is valid.

    Usage: ``print(import_file(engine, "cric_pandaqueues.json").summary())``
    """
    source = str(path)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ImportFileError(source, [f"cannot read the file ({exc.strerror})"]) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFileError(source, [f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]) from exc
    return import_data(engine, data, source)


def import_data(engine: Engine, data: Any, source: str = "<data>") -> ImportResult:
    """Import an already parsed JSON document (see import_file).

    Usage: ``import_data(engine, {"AGLT2": {"atlas_site": "AGLT2", ...}}, "inline")``
    """
    kind = detect_kind(data, source)
    if kind == "snapshot":
        return _import_snapshot(engine, data, source)
    if kind == "dirac":
        return _import_dirac(engine, data, source)
    if kind in LIVE_KINDS:
        return import_live(engine, data, kind, source)  # type: ignore[no-any-return]
    entries, problems = _entries(data)
    mapper: Callable[[list[tuple[str, dict[str, Any]]], GridSnapshot], _Patch]
    mapper = {"cric_queues": _map_queues, "ddm_endpoints": _map_endpoints, "sites": _map_sites}[kind]
    result = ImportResult(source, kind)
    with write_transaction(engine, "grid") as conn:
        current = read_grid_or_blank(conn)
        patch = mapper(entries, current)
        problems += patch.problems
        if problems:
            raise ImportFileError(source, problems)
        merged = patch.apply(current)
        try:
            result.version = write_grid(conn, merged)
        except (SnapshotError, TransitionError) as exc:
            raise ImportFileError(source, list(exc.problems)) from exc
    result.counts = {t: len(rows) for t, rows in patch.rows.items() if rows}
    result.notes = patch.notes
    return result


def _import_snapshot(engine: Engine, data: Any, source: str) -> ImportResult:
    try:
        snap = GridSnapshot.from_dict(data)
        version = save_snapshot(engine, snap)
    except (SnapshotError, TransitionError) as exc:
        raise ImportFileError(source, list(exc.problems)) from exc
    counts = {name: len(df) for name, df in snap.tables.items() if len(df)}
    return ImportResult(source, "snapshot", counts, [], int(version or 0))


def _import_dirac(engine: Engine, data: dict[str, Any], source: str) -> ImportResult:
    """Replace the dirac_ tables the document holds, keeping the rest of the stored grid."""
    problems = [p for p in validate({"taken_at": "2026-01-01T00:00:00Z", **data})]
    if problems:
        raise ImportFileError(source, problems)
    tables = {name: frame(name, rows) for name, rows in data.items()}
    with write_transaction(engine, "grid") as conn:
        current = read_grid_or_blank(conn)
        try:
            version = write_grid(conn, current.replace(**tables))
        except (SnapshotError, TransitionError) as exc:
            raise ImportFileError(source, list(exc.problems)) from exc
    return ImportResult(source, "dirac", {name: len(df) for name, df in tables.items()}, [], int(version))


def detect_kind(data: Any, source: str = "<data>") -> str:
    """Which of KINDS a parsed document is: a snapshot, CRIC queues, DDM endpoints or sites.

    Usage: ``detect_kind({"CERN": {"atlas_site": "CERN-PROD", "corecount": 8}}) == "cric_queues"``
    """
    # before the snapshot test: queuedata.json's "queues" attribute is a list of CEs, not a snapshot table
    if single_cric_queue(data) is not None:
        return "cric_queues"
    if isinstance(data, dict) and data and all(k.startswith("dirac_") and k in TABLES for k in data):
        return "dirac"
    if isinstance(data, dict) and (
        "taken_at" in data
        or "schema_version" in data
        or any(k in TABLES and isinstance(v, list) for k, v in data.items())
    ):
        return "snapshot"
    live = detect_live_kind(data)  # SW tags, NWS metrics, site matrix, DDM statuses (brokerage/store/live_sources.py)
    if live is not None:
        return live
    entries, _ = _entries(data)
    votes = {"cric_queues": 0, "ddm_endpoints": 0, "sites": 0}
    for _, rec in entries:
        keys = set(rec)
        scores = {
            "cric_queues": len(keys & _QUEUE_HINTS),
            "ddm_endpoints": len(keys & _ENDPOINT_HINTS),
            "sites": len(keys & _SITE_HINTS),
        }
        best = max(scores.values())
        if best:
            votes[max(scores, key=lambda k: scores[k])] += 1
    kind = max(votes, key=lambda k: votes[k])
    if votes[kind] == 0:
        raise ImportFileError(
            source,
            [
                "cannot tell what the file describes: expected a snapshot ({'taken_at': ..., 'queues': [...]}), "
                "CRIC queues ({name: {'atlas_site': ..., 'corecount': ...}}), DDM endpoints "
                "({name: {'site': ..., 'is_tape': ...}}), sites ({name: {'tier_level': ..., 'role': ...}}), CRIC SW tags "
                "({queue: {'cmtconfigs': ..., 'tags': ...}}), NWS metrics ({'SRC:DST': {'files': ..., 'mbps': ...}}), "
                "a CRIC site matrix ([{'src', 'dst', 'closeness'}]) or DDM endpoint statuses "
                "({endpoint: {activity: {'status': {'value': ...}}}})"
            ],
        )
    return kind


def single_cric_queue(data: Any) -> tuple[str, dict[str, Any]] | None:
    """(name, record) when DATA is one CRIC queue object rather than a collection, else None.

    One queue object (queuedata.json) carries its name in panda_resource or nickname and capability or corecount.
    Usage: ``single_cric_queue({"panda_resource": "CERN", "capability": "ucore"}) == ("CERN", {...})``
    """
    if not isinstance(data, dict) or not any(k in data for k in _SINGLE_QUEUE_ATTRS):
        return None
    name = next((data[k] for k in _SINGLE_QUEUE_NAMES if isinstance(data.get(k), str) and data[k]), None)
    return None if name is None else (name, data)


def _entries(data: Any) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """(name, attributes) pairs of a {name: {...}} object, a [{name: ...}, ...] list or one CRIC queue object."""
    problems: list[str] = []
    out: list[tuple[str, dict[str, Any]]] = []
    single = single_cric_queue(data)
    if single is not None:
        out.append(single)
    elif isinstance(data, dict):
        for name, rec in data.items():
            if isinstance(rec, dict):
                out.append((str(name), rec))
            else:
                problems.append(f"{name}: expected an object of attributes, got {type(rec).__name__}")
    elif isinstance(data, list):
        for i, rec in enumerate(data):
            if not isinstance(rec, dict):
                problems.append(f"[{i}]: expected an object of attributes, got {type(rec).__name__}")
                continue
            name = rec.get("name") or rec.get("panda_resource") or rec.get("site_name") or rec.get("ddm_endpoint_name")
            if not isinstance(name, str) or not name:
                problems.append(f"[{i}].name: required (the queue, endpoint or site name)")
                continue
            out.append((name, rec))
    else:
        problems.append(f"$: expected a JSON object keyed by name (or a list of objects), got {type(data).__name__}")
    return out, problems


# --- value coercion (every problem is collected, the value falls back to the default) ------------------------------


class _Fields:
    """Reads typed attributes of one entry, collecting a problem per bad field."""

    def __init__(self, name: str, rec: dict[str, Any], problems: list[str]) -> None:
        self.name, self.rec, self.problems = name, rec, problems

    def _bad(self, key: str, message: str) -> None:
        self.problems.append(f"{self.name}.{key}: {message}")

    def raw(self, *keys: str) -> tuple[str, Any]:
        for key in keys:
            if key in self.rec and self.rec[key] is not None:
                return key, self.rec[key]
        return keys[0], None

    def text(self, *keys: str, default: str | None, choices: tuple[str, ...] | None = None) -> str | None:
        key, v = self.raw(*keys)
        if v is None:
            return default
        if not isinstance(v, str):
            self._bad(key, f"expected a string, got {v!r}")
            return default
        if choices is not None and v not in choices:
            self._bad(key, f"{v!r} is not allowed; expected one of {', '.join(repr(c) for c in choices)}")
            return default
        return v

    def integer(self, *keys: str, default: int | None) -> int | None:
        key, v = self.raw(*keys)
        if v is None or v == "":
            return default
        out: int | None = None
        if isinstance(v, int) and not isinstance(v, bool):
            out = v
        elif (isinstance(v, float) and v.is_integer()) or (isinstance(v, str) and re.fullmatch(r"\s*-?\d+\s*", v)):
            out = int(v)
        if out is None:
            self._bad(key, f"expected an integer, got {v!r}")
            return default
        if out < 0:
            self._bad(key, f"{out} is below the minimum 0")
            return default
        return out

    def number(self, *keys: str, default: float | None) -> float | None:
        key, v = self.raw(*keys)
        if v is None or v == "":
            return default
        try:
            out = float(v) if not isinstance(v, bool) else None
        except (TypeError, ValueError):
            out = None
        if out is None or out != out:
            self._bad(key, f"expected a number, got {v!r}")
            return default
        if out < 0:
            self._bad(key, f"{out:g} is below the minimum 0")
            return default
        return out

    def flag(self, *keys: str, default: bool) -> bool:
        key, v = self.raw(*keys)
        if v is None:
            return default
        if isinstance(v, bool):
            return v
        if isinstance(v, str) and v.strip().lower() in ("true", "false"):
            return v.strip().lower() == "true"
        self._bad(key, f"expected true or false, got {v!r}")
        return default

    def names(self, *keys: str, default: list[str] | None) -> list[str] | None:
        key, v = self.raw(*keys)
        if v is None:
            return default
        if isinstance(v, str):
            return [s.strip() for s in v.split(",") if s.strip()]
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return list(v)
        self._bad(key, f"expected a list of strings, got {v!r}")
        return default


# --- patches: new rows per table, merged into the current grid -----------------------------------------------------


@dataclass
class _Patch:
    """Rows to upsert per snapshot table (by key), relation rows to replace per queue, problems and notes."""

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    replace_relations: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, table: str, row: dict[str, Any]) -> None:
        self.rows.setdefault(table, []).append(row)

    def apply(self, snap: GridSnapshot) -> GridSnapshot:
        tables = dict(snap.tables)
        for table, key in (("sites", "site_name"), ("ddm_endpoints", "ddm_endpoint_name"), ("queues", "panda_queue")):
            if self.rows.get(table):
                tables[table] = _upsert(table, tables[table], self.rows[table], key)
        if self.replace_relations or self.rows.get("panda_ddm_relation"):
            rel = tables["panda_ddm_relation"]
            kept = rel[~rel["panda_queue"].isin(self.replace_relations)].to_dict("records")
            tables["panda_ddm_relation"] = frame("panda_ddm_relation", kept + self.rows.get("panda_ddm_relation", []))
        return GridSnapshot(tables, snap.taken_at, snap.snapshot_id, snap.version)


def _upsert(table: str, old: pd.DataFrame, rows: list[dict[str, Any]], key: str) -> pd.DataFrame:
    """OLD with ROWS replacing those of the same KEY in place and the others appended, typed by snapshot.frame."""
    records = old.to_dict("records")
    position = {r[key]: i for i, r in enumerate(records)}
    for row in rows:
        if row[key] in position:
            records[position[row[key]]] = row
        else:
            position[row[key]] = len(records)
            records.append(row)
    return frame(table, records)


def _existing(snap: GridSnapshot, table: str, key: str) -> dict[str, dict[str, Any]]:
    df = snap.tables[table]
    return {row[key]: row for row in df.to_dict("records")} if len(df) else {}


def _endpoint_type(name: str) -> str:
    tail = name.rsplit("_", 1)[-1] if "_" in name else "DATADISK"
    return tail.upper()


def _map_queues(entries: list[tuple[str, dict[str, Any]]], snap: GridSnapshot) -> _Patch:
    patch = _Patch()
    queues = _existing(snap, "queues", "panda_queue")
    sites = _existing(snap, "sites", "site_name")
    endpoints = _existing(snap, "ddm_endpoints", "ddm_endpoint_name")
    new_sites: dict[str, dict[str, Any]] = {}
    new_endpoints: dict[str, dict[str, Any]] = {}
    skipped: list[str] = []
    for name, rec in entries:
        f = _Fields(name, rec, patch.problems)
        qtype = f.text("type", "queue_type", default=None)
        if qtype is None:
            patch.problems.append(f"{name}.type: required; expected one of {', '.join(QUEUE_TYPES)}")
            continue
        if qtype not in QUEUE_TYPES:
            skipped.append(f"{name} ({qtype})")
            continue
        old = queues.get(name, {})
        site = f.text("atlas_site", default=None)
        if site is None:
            patch.problems.append(f"{name}.atlas_site: required (the ATLAS site of the queue)")
            continue
        row = {
            **old,
            "panda_queue": name,
            "atlas_site": site,
            "cloud": f.text("cloud", default=""),
            "type": qtype,
            "status": f.text("status", default=None, choices=QUEUE_STATUSES),
            "corecount": f.integer("corecount", default=1),
            "corepower": f.number("corepower", default=10.0),
            "maxrss": f.integer("maxrss", "maxmemory", default=0),
            "minrss": f.integer("minrss", "minmemory", default=0),
            "maxtime": f.integer("maxtime", default=0),
            "mintime": f.integer("mintime", default=0),
            "maxwdir": f.integer("maxwdir", default=0),
            "direct_access_lan": f.flag("direct_access_lan", default=False),
            "transferringlimit": f.integer("transferringlimit", default=0),
            "releases": f.names("releases", default=["AUTO"]),
            "jobseed": f.text("jobseed", default="std", choices=("std", "es", "eshigh", "all")) or "std",
            "capability": f.text("capability", default="score") or "score",
            "catchall": f.text("catchall", default=""),
            "fairsharepolicy": f.text("fairsharepolicy", default=""),
            "wnconnectivity": f.text("wnconnectivity", default="full"),
            "maxdiskio": f.integer("maxdiskio", default=0),
        }
        if row["status"] is None and "status" not in rec:
            patch.problems.append(f"{name}.status: required; expected one of {', '.join(QUEUE_STATUSES)}")
        patch.add("queues", row)
        if site not in sites and site not in new_sites:
            new_sites[site] = {"site_name": site, "role": "satellite", "cloud": row["cloud"] or ""}
        reads, writes, given = _storages(f)
        if not given:
            continue
        patch.replace_relations.add(name)
        for ep in dict.fromkeys(reads + writes):
            patch.add(
                "panda_ddm_relation",
                {"panda_queue": name, "ddm_endpoint_name": ep, "default_write": bool(writes) and ep == writes[0]},
            )
            if ep not in endpoints and ep not in new_endpoints:
                typ = _endpoint_type(ep)
                new_endpoints[ep] = {"ddm_endpoint_name": ep, "site_name": site, "type": typ, "is_tape": "TAPE" in typ}
    for row in new_sites.values():
        patch.add("sites", row)
    for row in new_endpoints.values():
        patch.add("ddm_endpoints", row)
    if new_sites:
        patch.notes.append(
            f"added {count(len(new_sites), 'site')} named by queues as satellites: {', '.join(new_sites)}"
        )
    if new_endpoints:
        patch.notes.append(
            f"added {count(len(new_endpoints), 'endpoint')} named in astorages without space figures: "
            f"{', '.join(new_endpoints)} (import the DDM endpoints file to fill them)"
        )
    if skipped:
        patch.notes.append(
            f"skipped {count(len(skipped), 'queue')} of a type brokerage does not use: {', '.join(skipped)}"
        )
    return patch


def _storages(f: _Fields) -> tuple[list[str], list[str], bool]:
    """(read endpoints, write endpoints, whether the entry says anything about storage)."""
    ast = f.rec.get("astorages")
    if ast is not None and not isinstance(ast, dict):
        f._bad("astorages", f"expected an object activity -> [endpoint, ...], got {ast!r}")
        return [], [], False
    if ast:
        sub = _Fields(f"{f.name}.astorages", ast, f.problems)
        reads = sub.names("read_lan", "pr", default=[]) or []
        writes = sub.names("write_lan", "pw", default=[]) or []
        return reads, writes, True
    if f.rec.get("ddm") is not None:  # the older comma-separated list; its first endpoint takes the output
        eps = f.names("ddm", default=[]) or []
        return eps, eps[:1], True
    return [], [], "astorages" in f.rec


def _map_endpoints(entries: list[tuple[str, dict[str, Any]]], snap: GridSnapshot) -> _Patch:
    patch = _Patch()
    endpoints = _existing(snap, "ddm_endpoints", "ddm_endpoint_name")
    sites = _existing(snap, "sites", "site_name")
    new_sites: dict[str, dict[str, Any]] = {}
    for name, rec in entries:
        f = _Fields(name, rec, patch.problems)
        old = endpoints.get(name, {})
        site = f.text("site", "atlas_site", "site_name", default=old.get("site_name"))
        if site is None:
            patch.problems.append(f"{name}.site: required (the ATLAS site owning the endpoint)")
            continue
        typ = f.text("type", default=old.get("type") or _endpoint_type(name))
        total = f.number("space_total", default=old.get("space_total", 0.0))
        used = f.number("space_used", default=None)
        free_default = (total - used) if (total is not None and used is not None) else old.get("space_free", 0.0)
        row = {
            **old,
            "ddm_endpoint_name": name,
            "site_name": site,
            "type": typ,
            "is_tape": f.flag("is_tape", default=bool(old.get("is_tape", "TAPE" in (typ or "").upper()))),
            "space_total": total,
            "space_free": f.number("space_free", default=max(free_default or 0.0, 0.0)),
            "space_expired": f.number("space_expired", default=old.get("space_expired", 0.0)),
        }
        detailed = rec.get("detailed_status")
        if detailed is not None and not isinstance(detailed, dict):
            patch.problems.append(f"{name}.detailed_status: expected an object activity -> ON/OFF/TEST")
            detailed = None
        for act in ACTIVITIES:
            raw = (detailed or {}).get(act, rec.get(act))
            if isinstance(raw, dict):
                raw = raw.get("status")
            if raw is None:
                row[act] = old.get(act, "ON")
            elif isinstance(raw, bool):
                row[act] = "ON" if raw else "OFF"
            elif isinstance(raw, str) and raw.upper() in ENDPOINT_STATUSES:
                row[act] = raw.upper()
            else:
                patch.problems.append(f"{name}.detailed_status.{act}: {raw!r} is not allowed; expected ON, OFF or TEST")
        patch.add("ddm_endpoints", row)
        if site not in sites and site not in new_sites:
            new_sites[site] = {"site_name": site, "role": "satellite"}
    for row in new_sites.values():
        patch.add("sites", row)
    if new_sites:
        patch.notes.append(
            f"added {count(len(new_sites), 'site')} named by endpoints as satellites: {', '.join(new_sites)}"
        )
    return patch


def _map_sites(entries: list[tuple[str, dict[str, Any]]], snap: GridSnapshot) -> _Patch:
    patch = _Patch()
    sites = _existing(snap, "sites", "site_name")
    for name, rec in entries:
        f = _Fields(name, rec, patch.problems)
        old = sites.get(name, {})
        role = f.text("role", default=None, choices=SITE_ROLES)
        if role is None and "role" not in rec:
            policies = rec.get("datapolicies")
            if policies is not None and not (isinstance(policies, list) and all(isinstance(p, str) for p in policies)):
                patch.problems.append(f"{name}.datapolicies: expected a list of strings, got {policies!r}")
            elif policies is not None:
                role = "nucleus" if "Nucleus" in policies else "satellite"
        bare = f.text("bare_nucleus", default=None, choices=BARE_NUCLEUS_MODES)
        if bare is None and isinstance(rec.get("catchall"), str):
            found = re.search(r"bareNucleus=(\w+)", rec["catchall"])
            bare = found.group(1) if found and found.group(1) in BARE_NUCLEUS_MODES else None
        row = {
            **old,
            "site_name": name,
            "role": role or old.get("role", "satellite"),
            "tier_level": f.integer("tier_level", default=old.get("tier_level", 2)),
            "cloud": f.text("cloud", default=old.get("cloud", "")),
            "state": f.text("state", default=old.get("state", "ACTIVE")),
            "bare_nucleus": bare if bare is not None else old.get("bare_nucleus", ""),
        }
        patch.add("sites", row)
    return patch
