"""CRIC queues, DDM endpoints and sites documents mapped to snapshot rows and merged into the stored grid by name."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from brokerage.model.snapshot import GridSnapshot, frame
from brokerage.model.tables import (
    BARE_NUCLEUS_MODES,
    ENDPOINT_ACTIVITIES,
    ENDPOINT_STATUSES,
    QUEUE_STATUSES,
    QUEUE_TYPES,
    SITE_ROLES,
)
from brokerage.model.words import count

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
class CricPatch:
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


def map_queues(entries: list[tuple[str, dict[str, Any]]], snap: GridSnapshot, add_endpoints: bool = True) -> CricPatch:
    """CRIC queue entries as queue rows; sites and (ADD_ENDPOINTS) endpoints they name but the grid lacks are added
    as well; without ADD_ENDPOINTS a relation to an unknown endpoint is left out and named, as PanDA's configurator
    skips it ("DDM endpoint not found (e.g. DISABLED)").

    Usage: ``patch = map_queues([("CERN", record)], snap); snap = patch.apply(snap)``
    """
    patch = CricPatch()
    queues = _existing(snap, "queues", "panda_queue")
    sites = _existing(snap, "sites", "site_name")
    endpoints = _existing(snap, "ddm_endpoints", "ddm_endpoint_name")
    new_sites: dict[str, dict[str, Any]] = {}
    new_endpoints: dict[str, dict[str, Any]] = {}
    skipped: list[str] = []
    for name, rec in entries:
        f = _Fields(name, rec, patch.problems)
        row = _queue_row(f, queues.get(name, {}), skipped)
        if row is None:
            continue
        patch.add("queues", row)
        site = row["atlas_site"]
        if site not in sites and site not in new_sites:
            new_sites[site] = {"site_name": site, "role": "satellite", "cloud": row["cloud"] or ""}
        _add_relations(patch, f, site, endpoints, new_endpoints if add_endpoints else None)
    for row in new_sites.values():
        patch.add("sites", row)
    for row in new_endpoints.values():
        patch.add("ddm_endpoints", row)
    _note_queue_additions(patch, new_sites, new_endpoints, skipped)
    return patch


def _queue_row(f: _Fields, old: dict[str, Any], skipped: list[str]) -> dict[str, Any] | None:
    """One queue's row over its OLD one, or None when the entry is refused (every problem of it listed) or of another
    type (SKIPPED). A missing type is production, as PanDA's SiteSpec takes it; the memory limits are maxrss/minrss
    only; catchall ``per_core_attr`` makes maxrss, minrss and maxwdir per core (scaled by corecount, as PanDA's
    getSiteInfo does)."""
    name, rec, problems = f.name, f.rec, f.problems
    before = len(problems)
    qtype = f.text("type", "queue_type", default="production")
    if qtype is not None and qtype not in QUEUE_TYPES:
        skipped.append(f"{name} ({qtype})")
        return None
    site = f.text("atlas_site", default=None)
    if rec.get("atlas_site") is None:
        problems.append(f"{name}.atlas_site: required (the ATLAS site of the queue)")
    if "status" not in rec or rec["status"] is None:
        problems.append(f"{name}.status: required; expected one of {', '.join(QUEUE_STATUSES)}")
    row = {
        **old,
        "panda_queue": name,
        "atlas_site": site,
        "cloud": f.text("cloud", default=""),
        "type": qtype,
        "status": f.text("status", default=None, choices=QUEUE_STATUSES),
        "corecount": f.integer("corecount", default=1),
        "corepower": f.number("corepower", default=10.0),
        "maxrss": f.integer("maxrss", default=0),
        "minrss": f.integer("minrss", default=0),
        "maxtime": f.integer("maxtime", default=0),
        "mintime": f.integer("mintime", default=0),
        "maxwdir": f.integer("maxwdir", default=0),
        "direct_access_lan": f.flag("direct_access_lan", default=False),
        "transferringlimit": f.integer("transferringlimit", default=0),
        "transtimehi": f.number("transtimehi", default=None),
        "transtimelo": f.number("transtimelo", default=None),
        "releases": f.names("releases", default=["AUTO"]),
        "jobseed": f.text("jobseed", default="std", choices=("std", "es", "eshigh", "all")) or "std",
        "capability": f.text("capability", default="score") or "score",
        "catchall": f.text("catchall", default=""),
        "fairsharepolicy": f.text("fairsharepolicy", default=""),
        "wnconnectivity": f.text("wnconnectivity", default="full"),
        "maxdiskio": f.integer("maxdiskio", default=0),
        "space": int(f.number("space", default=0.0) or 0),  # GB; GenJobBroker's SE space check reads it
    }
    if len(problems) > before or site is None:
        return None
    cores = row["corecount"] or 0
    if "per_core_attr" in (row["catchall"] or "").split(",") and cores > 0:
        for key in ("maxrss", "minrss", "maxwdir"):
            row[key] = (row[key] or 0) * cores
    return row


def _add_relations(
    patch: CricPatch,
    f: _Fields,
    site: str,
    endpoints: dict[str, dict[str, Any]],
    new_endpoints: dict[str, dict[str, Any]] | None,
) -> None:
    """The queue's storage relations from its astorages (or ddm) list, per scope, and the endpoints the grid lacks
    (NEW_ENDPOINTS None: relations to them are left out and named)."""
    relations, given = _storages(f)
    if not given:
        return
    name = f.name
    patch.replace_relations.add(name)
    unknown: list[str] = []
    for ep, scope, default_write in relations:
        if ep not in endpoints and new_endpoints is None:
            unknown.append(ep)
            continue
        patch.add(
            "panda_ddm_relation",
            {"panda_queue": name, "ddm_endpoint_name": ep, "default_write": default_write, "scope": scope},
        )
        if ep not in endpoints and new_endpoints is not None and ep not in new_endpoints:
            typ = _endpoint_type(ep)
            new_endpoints[ep] = {"ddm_endpoint_name": ep, "site_name": site, "type": typ, "is_tape": "TAPE" in typ}
    if unknown:
        patch.notes.append(
            f"{name}: left out its relations to {', '.join(dict.fromkeys(unknown))}, endpoints the grid does not hold "
            "(PanDA's configurator skips them too: not in DDM_ENDPOINT, e.g. DISABLED)"
        )


def _note_queue_additions(
    patch: CricPatch, new_sites: dict[str, Any], new_endpoints: dict[str, Any], skipped: list[str]
) -> None:
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


READ_LAN, WRITE_LAN, DEFAULT_SCOPE = "read_lan", "write_lan", "default"


def _role_scope(role: str) -> tuple[str, str] | None:
    """CRIC astorages role as PanDA's configurator parses it: read_lan / write_lan (scope default), read_lan_<scope> /
    write_lan_<scope>; None for every other role (the old pr / pw, es_events, ...: not read)."""
    for base in (READ_LAN, WRITE_LAN):
        if role == base:
            return base, DEFAULT_SCOPE
        if role.startswith(base + "_"):
            return base, role[len(base) + 1 :]
    return None


def _storages(f: _Fields) -> tuple[list[tuple[str, str, bool]], bool]:
    """([(endpoint, scope, default write)], whether the entry says anything about storage). Within a scope the
    first write_lan endpoint is the default output (PanDA: order_write 1)."""
    ast = f.rec.get("astorages")
    if ast is not None and not isinstance(ast, dict):
        f._bad("astorages", f"expected an object activity -> [endpoint, ...], got {ast!r}")
        return [], False
    if ast:
        sub = _Fields(f"{f.name}.astorages", ast, f.problems)
        rows: dict[tuple[str, str], bool] = {}
        for role in ast:
            parsed = _role_scope(role)
            if parsed is None:
                continue
            base, scope = parsed
            for i, ep in enumerate(sub.names(role, default=[]) or []):
                rows[(ep, scope)] = rows.get((ep, scope), False) or (base == WRITE_LAN and i == 0)
        return [(ep, scope, dw) for (ep, scope), dw in rows.items()], True
    if f.rec.get("ddm") is not None:  # the older comma-separated list; its first endpoint takes the output
        eps = f.names("ddm", default=[]) or []
        return [(ep, DEFAULT_SCOPE, i == 0) for i, ep in enumerate(dict.fromkeys(eps))], True
    return [], "astorages" in f.rec


def map_endpoints(entries: list[tuple[str, dict[str, Any]]], snap: GridSnapshot) -> CricPatch:
    """CRIC DDM endpoint entries as endpoint rows. An endpoint whose CRIC ``state`` is not ACTIVE (e.g. DISABLED) is
    unusable: PanDA's configurator does not load it, so here every activity is OFF and no queue reads or writes it.

    Usage: ``patch = map_endpoints([("CERN-PROD_DATADISK", record)], snap)``
    """
    patch = CricPatch()
    inactive: list[str] = []
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
        for act in ENDPOINT_ACTIVITIES:
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
        state = f.text("state", default="ACTIVE")
        if state is not None and state.upper() != "ACTIVE":
            inactive.append(f"{name} ({state})")
            row.update(dict.fromkeys(ENDPOINT_ACTIVITIES, "OFF"))
        patch.add("ddm_endpoints", row)
        if site not in sites and site not in new_sites:
            new_sites[site] = {"site_name": site, "role": "satellite"}
    for row in new_sites.values():
        patch.add("sites", row)
    if new_sites:
        patch.notes.append(
            f"added {count(len(new_sites), 'site')} named by endpoints as satellites: {', '.join(new_sites)}"
        )
    if inactive:
        patch.notes.append(
            f"{count(len(inactive), 'endpoint')} not ACTIVE in CRIC, every activity OFF (PanDA does not load them): "
            + ", ".join(inactive)
        )
    return patch


def map_sites(entries: list[tuple[str, dict[str, Any]]], snap: GridSnapshot) -> CricPatch:
    patch = CricPatch()
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
