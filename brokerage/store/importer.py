"""Import grid descriptions (snapshot, CRIC queues, DDM endpoints, sites JSON) all or nothing; see docs/import.md."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from brokerage.model.errors import InputError
from brokerage.model.snapshot import GridSnapshot, SnapshotError, frame
from brokerage.model.tables import TABLES
from brokerage.model.validation import MAX_JSON_DEPTH, depth_problem, validate
from brokerage.model.words import count
from brokerage.sim.task_states import TransitionError
from brokerage.store.activity_sources import ACTIVITY_KINDS, ACTIVITY_LABELS, detect_activity_kind, map_activity
from brokerage.store.cric import CricPatch, map_endpoints, map_queues, map_sites
from brokerage.store.database import write_transaction
from brokerage.store.grid_tables import read_grid_or_blank
from brokerage.store.live_sources import LIVE_KINDS, LIVE_LABELS, detect_live_kind, map_live
from brokerage.store.repository import save_snapshot, write_grid

KINDS = ("snapshot", "cric_queues", "ddm_endpoints", "sites", "dirac", *LIVE_KINDS, *ACTIVITY_KINDS)
KIND_LABELS = {
    "snapshot": "grid snapshot",
    "dirac": "DIRAC tables",
    "cric_queues": "CRIC queues",
    "ddm_endpoints": "DDM endpoints",
    "sites": "sites",
    **LIVE_LABELS,
    **ACTIVITY_LABELS,
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


class ImportFileError(InputError, ValueError):
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
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ImportFileError(source, [f"cannot read the file ({exc.strerror})"]) from exc
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ImportFileError(source, [f"not UTF-8 text: byte {exc.start} is {raw[exc.start]:#04x}"]) from exc
    except json.JSONDecodeError as exc:
        raise ImportFileError(source, [f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]) from exc
    except RecursionError as exc:
        raise ImportFileError(source, [f"JSON nested deeper than {MAX_JSON_DEPTH} levels"]) from exc
    except ValueError as exc:  # e.g. an integer literal longer than Python's 4,300-digit limit
        raise ImportFileError(source, [f"not JSON: {exc}"]) from exc
    if deep := depth_problem(data):
        raise ImportFileError(source, [deep])
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
    if kind in LIVE_KINDS or kind in ACTIVITY_KINDS:
        return _import_live(engine, data, kind, source)
    entries, problems = _entries(data)
    mapper: Callable[[list[tuple[str, dict[str, Any]]], GridSnapshot], CricPatch]
    mapper = {"cric_queues": map_queues, "ddm_endpoints": map_endpoints, "sites": map_sites}[kind]
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


def _import_live(engine: Engine, data: Any, kind: str, source: str) -> ImportResult:
    """Import a live-source or activity document of KIND (live_sources.py, activity_sources.py) into the stored grid,
    all or nothing."""
    result = ImportResult(source, kind)
    with write_transaction(engine, "grid") as conn:
        current = read_grid_or_blank(conn)
        patch = map_activity(kind, data, current) if kind in ACTIVITY_KINDS else map_live(kind, data, current)
        if patch.problems:
            raise ImportFileError(source, patch.problems)
        try:
            result.version = write_grid(conn, current.replace(**patch.tables))
        except (SnapshotError, TransitionError) as exc:
            raise ImportFileError(source, list(exc.problems)) from exc
    result.counts = patch.counts
    result.notes = patch.notes
    return result


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
    activity = detect_activity_kind(data)  # RSE usage, SiteData rows, JEDI tasks (brokerage/store/activity_sources.py)
    if activity is not None:
        return activity
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
                "a CRIC site matrix ([{'src', 'dst', 'closeness'}]), DDM endpoint statuses "
                "({endpoint: {activity: {'status': {'value': ...}}}}), Rucio RSE usage ({rse: {'storage': {'used', "
                "'free'}}}), SiteData rows ([{'site', 'flag', 'getjob', ...}]) or JEDI tasks ({'jedi_tasks': [...], "
                "'jedi_datasets': [...]})"
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
