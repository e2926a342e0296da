"""What changed between two grid versions, per input table and per row group (one queue, link, endpoint, task)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from brokerage.model.explain import fmt
from brokerage.model.snapshot import GridSnapshot

# the row group one swap moves: "one queue's row" is every row of that queue in a queue-keyed table
UNIT_KEYS: dict[str, tuple[str, ...]] = {
    "queues": ("panda_queue",),
    "job_counts": ("panda_queue",),
    "user_job_counts": ("panda_queue",),
    "queue_software": ("panda_queue",),
    "panda_ddm_relation": ("panda_queue",),
    "sites": ("site_name",),
    "ddm_endpoints": ("ddm_endpoint_name",),
    "network": ("src", "dst"),
    "tasks": ("jeditaskid",),
    "datasets": ("jeditaskid",),
    "dataset_replicas": ("jeditaskid",),
    "task_job_counts": ("jeditaskid",),
    "users": ("produsername",),
    "gshares": ("gshare",),
}
"""Input tables the PanDA brokers read, with the columns that name one swappable row group (the status log and
the DIRAC tables are not brokerage inputs)."""

METRICS = {  # NETWORK_MATRIX_KV keys in words
    "Production Output_queued": "queued files",
    "Express_queued": "queued express files",
    "AGIS_closeness": "closeness",
    "dashb_mbps_1h": "throughput over 1 h (MB/s)",
    "dashb_mbps_1d": "throughput over 1 day (MB/s)",
    "dashb_mbps_1w": "throughput over 1 week (MB/s)",
}
TAKEN_AT = "taken_at"  # the snapshot's time, swapped like a table of one row
SHOWN_CHANGES = 2  # sentences per row group at most (the biggest changes first)

Key = tuple[Any, ...]


@dataclass(frozen=True)
class TableDelta:
    """The row groups of one table that differ between two versions, with their rows before and after."""

    table: str
    columns: tuple[str, ...]  # the unit key columns
    keys: tuple[Key, ...]  # changed, added or removed groups, in the table's order
    before: pd.DataFrame  # the old version's rows of those groups
    after: pd.DataFrame  # the new version's rows of those groups


def _group_keys(df: pd.DataFrame, cols: Sequence[str]) -> pd.Series:
    return pd.Series(list(zip(*(df[c].tolist() for c in cols), strict=True)), index=df.index, dtype="object")


def _row_hashes(df: pd.DataFrame) -> np.ndarray:
    # lists and dicts are not hashable by pandas: hash their text form
    safe = df.apply(lambda s: s.map(repr) if s.dtype == object else s)
    return pd.util.hash_pandas_object(safe, index=False).to_numpy()


def _group_signature(df: pd.DataFrame, keys: pd.Series) -> dict[Key, tuple[int, int]]:
    """Per group: (rows, order-sensitive sum of row hashes) — equal content gives equal signatures."""
    if df.empty:
        return {}
    h = _row_hashes(df).astype(np.uint64)
    pos = keys.groupby(keys, sort=False).cumcount().to_numpy().astype(np.uint64) + np.uint64(1)
    with np.errstate(over="ignore"):
        mixed = h * (pos * np.uint64(0x9E3779B97F4A7C15) | np.uint64(1))
    frame = pd.DataFrame({"k": keys.to_numpy(), "h": mixed})
    agg = frame.groupby("k", sort=False)["h"].agg(["size", lambda v: int(np.bitwise_xor.reduce(v.to_numpy()))])
    return {k: (int(r.iloc[0]), int(r.iloc[1])) for k, r in agg.iterrows()}


def deltas(a: GridSnapshot, b: GridSnapshot) -> dict[str, TableDelta]:
    """Every brokerage input table that differs from A to B, with its changed row groups.

    Usage: ``for name, d in deltas(old, new).items(): print(name, len(d.keys))``
    """
    out: dict[str, TableDelta] = {}
    for name, cols in UNIT_KEYS.items():
        ta, tb = a.tables[name], b.tables[name]
        if ta.shape == tb.shape and ta.reset_index(drop=True).equals(tb.reset_index(drop=True)):
            continue
        ka, kb = _group_keys(ta, cols), _group_keys(tb, cols)
        sa, sb = _group_signature(ta, ka), _group_signature(tb, kb)
        order = list(dict.fromkeys([*ka.tolist(), *kb.tolist()]))
        changed = tuple(k for k in order if sa.get(k) != sb.get(k))
        if not changed:
            continue
        wanted = set(changed)
        out[name] = TableDelta(
            name, cols, changed, ta[ka.isin(wanted).to_numpy()].copy(), tb[kb.isin(wanted).to_numpy()].copy()
        )
    if a.taken_at != b.taken_at:  # "now" is an input too: ages, waiting times and stale metrics are measured from it
        before, after = (pd.DataFrame({TAKEN_AT: [s.taken_at]}) for s in (a, b))
        out[TAKEN_AT] = TableDelta(TAKEN_AT, (TAKEN_AT,), ((TAKEN_AT,),), before, after)
    return out


def apply(a: GridSnapshot, parts: Iterable[tuple[TableDelta, Sequence[Key] | None]], tag: str) -> GridSnapshot:
    """A with some row groups taken from the newer version: each (delta, keys) swaps those groups (None: all of
    the delta's). The result is named ``<id>+TAG`` so caches never mistake it for A.

    Usage: ``apply(old, [(d["network"], [("SITE", "NUCLEUS")])], "network:SITE>NUCLEUS")``
    """
    tables = dict(a.tables)
    taken_at = a.taken_at
    for d, keys in parts:
        if d.table == TAKEN_AT:
            taken_at = d.after[TAKEN_AT].iloc[0]
            continue
        wanted = set(d.keys if keys is None else keys)
        df = tables[d.table]
        kdf = _group_keys(df, d.columns)
        kafter = _group_keys(d.after, d.columns)
        new_rows = d.after[kafter.isin(wanted).to_numpy()]
        # the swapped rows take the place of the group they replace, so ties broken by row order stay put
        first = {k: i for i, k in reversed(list(enumerate(kdf.tolist())))}
        pos_new = np.array([first.get(k, len(df)) + 0.5 for k in kafter[kafter.isin(wanted)].tolist()])
        keep = ~kdf.isin(wanted).to_numpy()
        merged = pd.concat([df[keep], new_rows], ignore_index=True)
        order = np.argsort(np.concatenate([np.flatnonzero(keep).astype(float), pos_new]), kind="stable")
        tables[d.table] = merged.iloc[order].reset_index(drop=True)
    return GridSnapshot(tables, taken_at, f"{a.snapshot_id}+{tag}", a.version)


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if f != f else f


def _number(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else fmt(v)


def _moved(what: str, old: Any, new: Any) -> str:
    o, n = _num(old), _num(new)
    if o is not None and n is not None and not isinstance(old, bool):
        verb = "rose" if n > o else "fell"
        return f"{what} {verb} from {_number(o)} to {_number(n)}"
    return f"{what} changed from {_shown(old)} to {_shown(new)}"


def _shown(v: Any) -> str:
    return "none" if v is None or (isinstance(v, float) and v != v) else str(v)


def _named(d: TableDelta, key: Key) -> str:
    if d.table == "network":
        return f"{key[0]}→{key[1]}"
    return str(key[0]) if len(key) == 1 else "/".join(map(str, key))


def describe(d: TableDelta, key: Key) -> list[str]:
    """What changed in one row group, in the grid's own words (at most SHOWN_CHANGES sentences).

    Usage: ``describe(deltas(a, b)["network"], ("SITE", "NUCLEUS"))  # ["queued files on SITE→NUCLEUS rose ..."]``
    """
    if d.table == TAKEN_AT:
        old, new = d.before[TAKEN_AT].iloc[0], d.after[TAKEN_AT].iloc[0]
        minutes = (new - old).total_seconds() / 60
        return [f"the grid was taken {fmt(abs(minutes))} min {'later' if minutes > 0 else 'earlier'} ({new:%H:%M} UTC)"]
    before = d.before[_group_keys(d.before, d.columns).isin([key]).to_numpy()]
    after = d.after[_group_keys(d.after, d.columns).isin([key]).to_numpy()]
    where = _named(d, key)
    if before.empty:
        return [f"{d.table} gained {where}"]
    if after.empty:
        return [f"{where} was removed from {d.table}"]
    out: list[str] = []
    if d.table == "network":
        old = dict(zip(before["key"], before["value"], strict=False))
        new = dict(zip(after["key"], after["value"], strict=False))
        for metric in dict.fromkeys([*old, *new]):
            if old.get(metric) != new.get(metric):
                out.append(_moved(f"{METRICS.get(metric, metric)} on {where}", old.get(metric), new.get(metric)))
    elif "njobs" in before.columns:  # job counts: totals per job status
        old = before.groupby("jobstatus")["njobs"].sum().to_dict()
        new = after.groupby("jobstatus")["njobs"].sum().to_dict()
        noun = "jobs" if d.table == "job_counts" else f"{d.table.replace('_', ' ')}"
        statuses = sorted(set(old) | set(new), key=lambda st: -abs(new.get(st, 0) - old.get(st, 0)))
        for status in statuses:
            if old.get(status, 0) != new.get(status, 0):
                out.append(_moved(f"{status} {noun} at {where}", old.get(status, 0), new.get(status, 0)))
    elif len(before) == 1 and len(after) == 1:
        for c in before.columns:
            o, n = before[c].iloc[0], after[c].iloc[0]
            if c not in d.columns and repr(o) != repr(n):
                out.append(_moved(f"{c} of {where}", o, n))
    else:
        out.append(f"{len(after)} row(s) of {d.table} for {where} changed (were {len(before)})")
    return out[:SHOWN_CHANGES] or [f"{d.table} rows for {where} were reordered"]
