"""The live sources PanDA's configurator reads (CRIC SW tags, NWS metrics, CRIC site matrix, DDM statuses),
recognised and mapped to the stored grid's tables; the importer writes them."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pandas as pd

from brokerage.model.network import NETWORK_MAX_AGE_MINUTES
from brokerage.model.snapshot import GridSnapshot, frame
from brokerage.model.tables import ENDPOINT_ACTIVITIES, ENDPOINT_STATUSES
from brokerage.model.words import count

LIVE_KINDS = ("sw_tags", "nws", "site_matrix", "ddm_status")
LIVE_LABELS = {
    "sw_tags": "CRIC SW tags",
    "nws": "NWS network metrics",
    "site_matrix": "CRIC site matrix",
    "ddm_status": "DDM endpoint statuses",
}
SW_KEYS = ("cmtconfigs", "containers", "cvmfs", "architectures", "tags")
ALL_QUEUE = "ALL"  # the pseudo queue whose tags map container names to source paths

# NWS (reference §5.1): the activities PanDA keeps, how stale an entry may be, and the throughput systems.
NWS_ACTIVITIES = ("Production Input", "Production Output", "Express")
NWS_MAX_AGE = timedelta(minutes=30)  # older than the file's newest timestamp by more: not stored
NWS_DURATIONS = ("1h", "1d", "1w")
# The brokers read dashb_mbps_* (PanDA's code calls it the FTS throughput). A file that publishes FTS
# throughput as system "fts" and no "dashb" system gets those values under dashb_ too, so they are used.
NWS_THROUGHPUT_ALIASES = {"fts": "dashb"}
CLOSENESS_KEY = "AGIS_closeness"
_QUEUE_ATTRS = frozenset({"atlas_site", "corecount", "maxrss", "maxtime", "astorages", "status", "type"})


@dataclass
class LivePatch:
    """New tables for the stored grid, with rows written per table, problems and notes."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --- detection --------------------------------------------------------------------------------------------------


def detect_live_kind(data: Any) -> str | None:
    """Which of LIVE_KINDS a parsed document is, or None when it is none of them.

    Usage: ``detect_live_kind({"AGLT2": {"cmtconfigs": [], "tags": []}}) == "sw_tags"``
    """
    if (
        isinstance(data, list)
        and data
        and all(isinstance(e, dict) and {"src", "dst", "closeness"} <= set(e) for e in data)
    ):
        return "site_matrix"
    if not isinstance(data, dict) or not data or not all(isinstance(v, dict) for v in data.values()):
        return None
    values = list(data.values())
    # a tags dump entry holds SW keys and nothing that describes a queue's resources
    if all(set(v) & set(SW_KEYS) and not set(v) & _QUEUE_ATTRS for v in values):
        return "sw_tags"
    if all(":" in str(k) for k in data) and any({"files", "mbps"} & set(v) for v in values):
        return "nws"
    if all(v and all(_is_cric_status(s) for s in v.values()) for v in values):
        return "ddm_status"
    return None


def _is_cric_status(entry: Any) -> bool:
    """CRIC ddmendpointstatus shape of one activity: {"status": {"value": "OFF", ...}, ...}."""
    return isinstance(entry, dict) and isinstance(entry.get("status"), dict) and "value" in entry["status"]


# --- mapping: each takes the parsed document and the stored grid, returns the tables to replace --------------------


def map_live(kind: str, data: Any, snap: GridSnapshot, now: datetime | None = None) -> LivePatch:
    """The tables of SNAP that importing DATA (of KIND) replaces, with problems and notes; nothing is written.

    Usage: ``patch = map_live("nws", json.load(f), snap); assert not patch.problems``
    """
    mapper: dict[str, Callable[[Any, GridSnapshot, datetime], LivePatch]] = {
        "sw_tags": _map_sw_tags,
        "nws": _map_nws,
        "site_matrix": _map_site_matrix,
        "ddm_status": _map_ddm_status,
    }
    return mapper[kind](data, snap, now or datetime.now(UTC))


def _map_sw_tags(data: dict[str, Any], snap: GridSnapshot, _now: datetime) -> LivePatch:
    """Replace queue_software as a whole (PanDA empties SW_TAGS and refills it); unknown queues are skipped."""
    patch = LivePatch()
    known = set(snap.tables["queues"]["panda_queue"])
    rows: list[dict[str, Any]] = []
    unknown: list[str] = []
    for name, rec in data.items():
        if name != ALL_QUEUE and name not in known:
            unknown.append(name)
            continue
        row: dict[str, Any] = {"panda_queue": name}
        for key in ("cmtconfigs", "containers", "cvmfs"):
            value = rec.get(key) or []
            if not (isinstance(value, list) and all(isinstance(x, str) for x in value)):
                patch.problems.append(f"{name}.{key}: expected a list of strings, got {value!r}")
                value = []
            row[key] = value
        for key in ("architectures", "tags"):
            value = rec.get(key) or []
            if not (isinstance(value, list) and all(isinstance(x, dict) for x in value)):
                patch.problems.append(f"{name}.{key}: expected a list of objects, got {value!r}")
                value = []
            row[key] = value
        for i, tag in enumerate(row["tags"]):
            for key in ("cmtconfig", "project", "release"):
                if not isinstance(tag.get(key, ""), str):
                    patch.problems.append(f"{name}.tags[{i}].{key}: expected a string, got {tag[key]!r}")
        rows.append(row)
    patch.tables["queue_software"] = frame("queue_software", rows)
    patch.counts["queue_software"] = len(rows)
    before = len(snap.tables["queue_software"])
    patch.notes.append(
        f"replaced the whole SW description table ({count(before, 'row')} before, {len(rows)} now), as PanDA does"
    )
    if unknown:
        patch.notes.append(f"skipped {count(len(unknown), 'queue')} the grid does not know: {_listed(unknown)}")
    return patch


def _map_nws(data: dict[str, Any], snap: GridSnapshot, _now: datetime) -> LivePatch:
    """NWS files.done / files.queued / mbps per activity and system -> NETWORK_MATRIX_KV rows, upserted."""
    patch = LivePatch()
    sites = set(snap.tables["sites"]["site_name"])
    found: list[tuple[str, str, str, Any, datetime]] = []  # (src, dst, key, raw value, ts) before the age cut
    unknown: set[str] = set()
    aliased = 0
    for link, rec in data.items():
        parts = str(link).split(":")
        if len(parts) != 2 or not all(parts):
            patch.problems.append(f"{link}: expected a key SRC:DST")
            continue
        src, dst = parts
        missing = [s for s in (src, dst) if s not in sites]
        if missing:
            unknown.update(missing)
            continue
        files = _obj(rec, "files", link, patch.problems)
        for part, fields in (("done", (("1h", "_done_1h"), ("6h", "_done_6h"))), ("queued", (("latest", "_queued"),))):
            block = _obj(files, part, f"{link}.files", patch.problems)
            for activity in NWS_ACTIVITIES:
                entry = _obj(block, activity, f"{link}.files.{part}", patch.problems)
                if not entry:
                    continue
                ts = _nws_time(entry, f"{link}.files.{part}.{activity}", patch.problems)
                for field_name, suffix in fields:
                    if ts is not None and entry.get(field_name) is not None:
                        found.append((src, dst, activity + suffix, entry[field_name], ts))
        mbps = _obj(rec, "mbps", link, patch.problems)
        systems = set(mbps)
        for system, entry in mbps.items():
            where = f"{link}.mbps.{system}"
            if not isinstance(entry, dict):
                patch.problems.append(f"{where}: expected an object with 1h, 1d, 1w and timestamp")
                continue
            ts = _nws_time(entry, where, patch.problems)
            names = [system]
            alias = NWS_THROUGHPUT_ALIASES.get(system)
            if alias is not None and alias not in systems:
                names.append(alias)
                aliased += 1
            for duration in NWS_DURATIONS:
                if ts is not None and entry.get(duration) is not None:
                    found.extend((src, dst, f"{n}_mbps_{duration}", entry[duration], ts) for n in names)
    rows: list[dict[str, Any]] = []
    if found:
        newest = max(ts for *_, ts in found)
        oldest_kept = newest - NWS_MAX_AGE
        stale = 0
        for src, dst, key, raw, ts in found:
            if ts < oldest_kept:
                stale += 1
                continue
            value = _number(raw, f"{src}:{dst}.{key}", patch.problems)
            if value is not None:
                rows.append({"src": src, "dst": dst, "key": key, "value": value, "ts": ts})
        if stale:
            patch.notes.append(
                f"ignored {count(stale, 'value')} older than {int(NWS_MAX_AGE.total_seconds() // 60)} min before the file's "
                f"newest timestamp {newest:%Y-%m-%dT%H:%M:%SZ}"
            )
        _note_network_window(patch, snap, newest)
    if aliased:
        patch.notes.append(f"{aliased} link(s) publish throughput as 'fts' only: stored as fts_mbps_* and dashb_mbps_*")
    if unknown:
        patch.notes.append(
            f"skipped links of {len(unknown)} site(s) the grid does not know: {_listed(sorted(unknown))}"
        )
    patch.tables["network"] = _upsert_network(snap.tables["network"], rows)
    patch.counts["network"] = len(rows)
    return patch


def _map_site_matrix(data: list[dict[str, Any]], snap: GridSnapshot, now: datetime) -> LivePatch:
    """CRIC site matrix [{src, dst, closeness}] -> AGIS_closeness rows stamped with the import time, upserted."""
    patch = LivePatch()
    sites = set(snap.tables["sites"]["site_name"])
    rows: list[dict[str, Any]] = []
    unknown: set[str] = set()
    for i, entry in enumerate(data):
        src, dst = entry.get("src"), entry.get("dst")
        if not (isinstance(src, str) and src and isinstance(dst, str) and dst):
            patch.problems.append(f"[{i}]: src and dst must be site names, got {src!r} -> {dst!r}")
            continue
        missing = [s for s in (src, dst) if s not in sites]
        if missing:
            unknown.update(missing)
            continue
        value = _number(entry["closeness"], f"[{i}] {src}->{dst}.closeness", patch.problems, allow_negative=True)
        if value is not None:
            rows.append({"src": src, "dst": dst, "key": CLOSENESS_KEY, "value": value, "ts": now})
    if unknown:
        patch.notes.append(
            f"skipped links of {len(unknown)} site(s) the grid does not know: {_listed(sorted(unknown))}"
        )
    patch.tables["network"] = _upsert_network(snap.tables["network"], rows)
    patch.counts["network"] = len(rows)
    return patch


def _map_ddm_status(data: dict[str, Any], snap: GridSnapshot, _now: datetime) -> LivePatch:
    """CRIC ddmendpointstatus -> the four detailed statuses of every stored endpoint (not listed = ON, as PanDA)."""
    patch = LivePatch()
    endpoints = snap.tables["ddm_endpoints"]
    known = set(endpoints["ddm_endpoint_name"])
    unknown = sorted(set(data) - known)
    other: set[str] = set()
    statuses: dict[str, dict[str, str]] = {}
    for name, activities in data.items():
        if name not in known:
            continue
        for activity, entry in activities.items():
            if activity not in ENDPOINT_ACTIVITIES:
                other.add(activity)
                continue
            value = entry["status"]["value"]
            if not (isinstance(value, str) and value.upper() in ENDPOINT_STATUSES):
                patch.problems.append(
                    f"{name}.{activity}.status.value: {value!r} is not allowed; expected ON, OFF or TEST"
                )
                continue
            statuses.setdefault(name, {})[activity] = value.upper()
    out = endpoints.copy()
    for activity in ENDPOINT_ACTIVITIES:
        out[activity] = [statuses.get(n, {}).get(activity, "ON") for n in out["ddm_endpoint_name"]]
    patch.tables["ddm_endpoints"] = out
    patch.counts["ddm_endpoints"] = len(statuses)
    off = sum(1 for s in statuses.values() for v in s.values() if v != "ON")
    patch.notes.append(f"{off} activity status(es) not ON at {len(statuses)} endpoint(s); every other one is ON")
    if other:
        patch.notes.append(f"activities brokerage does not read were ignored: {_listed(sorted(other))}")
    if unknown:
        patch.notes.append(f"skipped {len(unknown)} endpoint(s) the grid does not know: {_listed(unknown)}")
    return patch


# --- helpers ----------------------------------------------------------------------------------------------------


def _obj(parent: Any, key: str, where: str, problems: list[str]) -> dict[str, Any]:
    """PARENT[KEY] as an object ({} when absent); a problem when it is something else."""
    if not isinstance(parent, dict):
        return {}
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{where}.{key}: expected an object, got {type(value).__name__}")
        return {}
    return value


def _nws_time(entry: dict[str, Any], where: str, problems: list[str]) -> datetime | None:
    """The entry's timestamp (NWS writes UTC without a zone, e.g. 2026-11-20T11:55:00)."""
    raw = entry.get("timestamp")
    try:
        ts = pd.Timestamp(raw)
    except (TypeError, ValueError):
        ts = None
    if ts is None or pd.isna(ts) or not isinstance(raw, str):
        problems.append(f"{where}.timestamp: expected a time like 2026-11-20T11:55:00, got {raw!r}")
        return None
    return (ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")).to_pydatetime()


def _number(raw: Any, where: str, problems: list[str], allow_negative: bool = False) -> float | None:
    ok = isinstance(raw, (int, float)) and not isinstance(raw, bool) and math.isfinite(raw)
    if not ok or (raw < 0 and not allow_negative):
        problems.append(f"{where}: expected a {'' if allow_negative else 'non-negative '}number, got {raw!r}")
        return None
    return float(raw)


def _upsert_network(old: pd.DataFrame, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """OLD network rows with ROWS replacing those of the same (src, dst, key), others appended (PanDA's upsert)."""
    records = old.to_dict("records")
    position = {(r["src"], r["dst"], r["key"]): i for i, r in enumerate(records)}
    for row in rows:
        key = (row["src"], row["dst"], row["key"])
        if key in position:
            records[position[key]] = row
        else:
            position[key] = len(records)
            records.append(row)
    for r in records:
        if isinstance(r.get("ts"), pd.Timestamp):
            r["ts"] = r["ts"].to_pydatetime()
        if r.get("ts") is not None and pd.isna(r["ts"]):
            r["ts"] = None
    return frame("network", records)


def _note_network_window(patch: LivePatch, snap: GridSnapshot, newest: datetime) -> None:
    """Say so when the imported metrics are too old for the brokers to read against the grid's taken_at."""
    cutoff = pd.Timestamp(snap.taken_at) - pd.Timedelta(minutes=NETWORK_MAX_AGE_MINUTES)
    if pd.Timestamp(newest) < cutoff:
        patch.notes.append(
            f"the metrics are older than the {NETWORK_MAX_AGE_MINUTES} min the brokers accept before the grid's "
            f"taken_at {pd.Timestamp(snap.taken_at):%Y-%m-%dT%H:%M:%SZ}: they are stored but not used"
        )


def _listed(names: list[str], limit: int = 20) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", … and {len(names) - limit} more" if len(names) > limit else "")
