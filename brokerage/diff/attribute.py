"""Diff two grid versions: the brokerages that changed, each attributed to the inputs that caused it by replaying
the old grid with one input table, then one row group of it, taken from the new version at a time."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from brokerage import runs
from brokerage.brokers.batch import Key
from brokerage.diff.compare import Change, aspects, changes, reproduces
from brokerage.diff.delta import TAKEN_AT, TableDelta, deltas, describe
from brokerage.diff.delta import Key as RowKey
from brokerage.diff.hybrid import Fate, Item, Result, Swap, replay_chunk
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.versions import config_version

ROWS_PER_TASK = 6  # row groups of a causal table tried one at a time for one task; more stay a table-level cause
CLUSTER_ITEMS_PER_SWAP = 400  # replays per mixed grid from which the cluster beats building it once here
SUBJECTS = 6  # candidates whose fate each replay reports (old and new top, entering and leaving ones)
QUEUE_TABLES = ("queues", "job_counts", "user_job_counts", "queue_software", "panda_ddm_relation")
TASK_TABLES = ("tasks", "datasets", "dataset_replicas", "task_job_counts")


@dataclass
class Cause:
    """An input change that, swapped in alone, reproduces the task's new brokerage (level "row" or "table"), or
    one of several that only do it together (level "together")."""

    table: str
    row: RowKey | None
    what: list[str]
    level: str
    subject: str | None = None
    fate: Fate | None = None

    def sentence(self) -> str:
        """E.g. "CERN ranked lower (1 → 3) because queued files on CERN→BNL rose from 90 to 180 (nw 1.4 → 0.8)"."""
        because = " and ".join(self.what) if self.what else f"{self.table} changed"
        if self.subject is None or self.fate is None:
            return f"because {because}"
        factors = ", ".join(
            f"{k.replace('_', ' ')} {_g(a)} → {_g(b)}" for k, (a, b) in list(self.fate.factors.items())[:2]
        )
        return f"{self.subject} {self.fate.effect()} because {because}" + (f" ({factors})" if factors else "")

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "table": self.table,
            "row": list(self.row) if self.row is not None else None,
            "level": self.level,
            "changes": self.what,
            "subject": self.subject,
            "sentence": self.sentence(),
        }


def _g(v: float) -> str:
    return f"{v:.3g}"


@dataclass
class TaskDiff:
    """One changed brokerage and its causes."""

    change: Change
    causes: list[Cause] = field(default_factory=list)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        c = self.change
        return {
            "task": c.task,
            "broker": c.key[0],
            "changed": list(c.aspects),
            "headline": c.headline(),
            "before": {"status": c.before.status, "top": list(c.before.top)},
            "after": {"status": c.after.status, "top": list(c.after.top)},
            "entered_top10": list(c.entered),
            "left_top10": list(c.left),
            "causes": [x.to_dict() for x in self.causes],
            "note": self.note,
        }


@dataclass
class GridDiff:
    """What changed in the brokerage from one grid version to another, and why."""

    from_version: str
    to_version: str
    config_version: str
    compared: int
    tasks: list[TaskDiff]
    new: list[Key]
    gone: list[Key]
    tables: dict[str, int]  # input table -> changed row groups
    replays: int
    seconds: float
    phases: dict[str, float] = field(default_factory=dict)  # seconds per step: old, new, tables, rows

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``brokerage diff --json``."""
        return {
            "from": self.from_version,
            "to": self.to_version,
            "snapshot_version": self.to_version,
            "config_version": self.config_version,
            "compared": self.compared,
            "changed": len(self.tasks),
            "new": [list(k) for k in self.new],
            "gone": [list(k) for k in self.gone],
            "inputs_changed": self.tables,
            "replays": self.replays,
            "seconds": round(self.seconds, 3),
            "phases": {k: round(v, 3) for k, v in self.phases.items()},
            "tasks": [t.to_dict() for t in self.tasks],
        }


def _involved(c: Change) -> tuple[str, ...]:
    names = [c.before.top[0] if c.before.top else "", c.after.top[0] if c.after.top else "", *c.left, *c.entered]
    return tuple(n for n in dict.fromkeys(names) if n)[:SUBJECTS]


class _Grid:
    """Who belongs to whom in the old and new grid: queue -> site, queue -> endpoints, task -> user and share."""

    def __init__(self, a: GridSnapshot, b: GridSnapshot) -> None:
        self.site: dict[str, str] = {}
        self.endpoints: dict[str, set[str]] = {}  # queue or site -> its endpoints

        self.task: dict[int, tuple[str, str]] = {}
        for s in (a, b):
            q = s.tables["queues"]
            self.site.update(zip(q["panda_queue"], q["atlas_site"], strict=True))
            r = s.tables["panda_ddm_relation"]
            for queue, ep in zip(r["panda_queue"], r["ddm_endpoint_name"], strict=True):
                self.endpoints.setdefault(queue, set()).add(ep)
            e = s.tables["ddm_endpoints"]
            for ep, site in zip(e["ddm_endpoint_name"], e["site_name"], strict=True):
                self.endpoints.setdefault(site, set()).add(ep)
            t = s.tables["tasks"]
            self.task.update(
                (int(i), (u, g)) for i, u, g in zip(t["jeditaskid"], t["username"], t["gshare"], strict=True)
            )

    def subject(self, table: str, row: RowKey, names: Sequence[str], task: int) -> str | None:
        """The candidate among NAMES (queues, or nuclei for task brokerage) that row ROW of TABLE belongs to."""
        for n in names:
            site = self.site.get(n, n)  # a nucleus candidate is a site name itself
            if table in QUEUE_TABLES and row[0] == n:
                return n
            if table == "sites" and row[0] == site:
                return n
            if table == "network" and site in (row[0], row[1]):
                return n
            if table == "ddm_endpoints" and (
                row[0] in self.endpoints.get(n, ()) or row[0] in self.endpoints.get(site, ())
            ):
                return n
        return None

    def relevant(self, d: TableDelta, names: Sequence[str], task: int) -> list[RowKey]:
        """The changed row groups of D that can matter for TASK's candidates NAMES."""
        if d.table in TASK_TABLES:
            return [k for k in d.keys if int(k[0]) == task]
        if d.table == TAKEN_AT:
            return list(d.keys)
        if d.table in ("users", "gshares"):
            user, share = self.task.get(task, ("", ""))
            return [k for k in d.keys if k[0] in (user, share)]
        return [k for k in d.keys if self.subject(d.table, k, names, task) is not None]


def diff_grids(
    a: GridSnapshot,
    b: GridSnapshot,
    config: Config,
    *,
    task_ids: Sequence[int] | None = None,
    client: Any = None,
    progress: Callable[[str], None] | None = None,
) -> GridDiff:
    """The brokerages that change from grid A to grid B under CONFIG, each with the inputs that caused it.

    Both grids are brokered whole (or only TASK_IDS) on the Dask engine; each changed brokerage is then replayed on
    A with one changed input table of B at a time, and within a table that reproduces the change, with one row
    group (a queue's rows, a link, an endpoint, the task's own rows) at a time.
    Usage: ``d = diff_grids(load_version(engine, 3), load_version(engine, 4), load_config(engine))``
    """
    t0 = time.perf_counter()
    say = progress or (lambda _msg: None)
    ds = deltas(a, b)
    if not ds:  # the same inputs (e.g. --from 1 --to 1) cannot broker differently: nothing to run
        return GridDiff(a.key, b.key, config_version(config), 0, [], [], [], {}, 0, time.perf_counter() - t0, {})
    say("brokering the old grid")
    cache_a = GridCache(a)
    run_a = runs.run_grid(a, config, task_ids=task_ids, cache=cache_a, client=client)
    phases = {"old": time.perf_counter() - t0}
    say("brokering the new grid")
    run_b = runs.run_grid(b, config, task_ids=task_ids, client=client)
    phases["new"] = time.perf_counter() - t0 - phases["old"]
    changed, new, gone = changes(run_a, run_b)
    found = [TaskDiff(c) for c in changed]
    replayer = _Replayer(a, cache_a, config, client)
    if changed and ds:
        _attribute(replayer, _Grid(a, b), list(ds.values()), found, say, phases, t0)
    return GridDiff(
        a.key,
        b.key,
        config_version(config),
        sum(1 for k in run_a.outcomes if k in run_b.outcomes),
        found,
        new,
        gone,
        {name: len(d.keys) for name, d in ds.items()},
        replayer.count,
        time.perf_counter() - t0,
        phases,
    )


@dataclass
class _Replayer:
    """Replays brokerages of grid A (cache CACHE) under CONFIG with parts of the new grid swapped in; counts them."""

    a: GridSnapshot
    cache: GridCache
    config: Config
    client: Any
    count: int = 0

    def run(self, swaps: list[Swap], items: list[Item]) -> dict[tuple[int, Key], Result]:
        """The result of every item (swap index, brokerage key, candidates to follow)."""
        self.count += len(items)
        return _replay(self.a, self.cache, self.config, swaps, items, self.client)


def _attribute(
    replayer: _Replayer,
    grid: _Grid,
    tables: list[TableDelta],
    found: list[TaskDiff],
    say: Callable[[str], None],
    phases: dict[str, float],
    t0: float,
) -> None:
    """Give every changed brokerage in FOUND its causes: the tables that reproduce it, then their single rows."""
    changed = [td.change for td in found]
    first = _replay_tables(replayer, grid, tables, changed, say)
    phases["tables"] = time.perf_counter() - t0 - sum(phases.values())
    rows = _table_causes(grid, tables, found, first)
    if rows:
        say(f"replaying {len(rows)} single rows")
        second, index = _replay_rows(replayer, found, rows)
        phases["rows"] = time.perf_counter() - t0 - sum(phases.values())
        _row_causes(grid, tables, found, rows, first, second, index)


def _replay_tables(
    replayer: _Replayer, grid: _Grid, tables: list[TableDelta], changed: list[Change], say: Callable[[str], None]
) -> dict[tuple[int, Key], Result]:
    """Every changed brokerage replayed with one input table swapped in at a time (the nearby tables first)."""
    swaps: list[Swap] = [[(d, None)] for d in tables]
    # first the tables with a row that touches the task or its moving candidates; the rest only for the
    # brokerages none of those explains (a change elsewhere rarely moves them)
    near = {c.key: [i for i, d in enumerate(tables) if grid.relevant(d, _involved(c), c.task)] for c in changed}
    items: list[Item] = [(i, c.key, _involved(c)) for i in range(len(tables)) for c in changed if i in near[c.key]]
    say(f"replaying {len(changed)} changed brokerages with one of {len(tables)} input tables swapped")
    first = replayer.run(swaps, items)
    rest = [
        (i, c.key, _involved(c))
        for i in range(len(tables))
        for c in changed
        if i not in near[c.key] and not any(_ok(first.get((j, c.key)), c) for j in near[c.key])
    ]
    if rest:
        say(f"replaying {len({k for _, k, _ in rest})} brokerages with the other tables swapped")
        first.update(replayer.run(swaps, rest))
    return first


def _table_causes(
    grid: _Grid, tables: list[TableDelta], found: list[TaskDiff], first: dict[tuple[int, Key], Result]
) -> list[tuple[int, TableDelta, RowKey]]:
    """Table-level causes from the table replays; returns the (task diff index, table, row) to try alone."""
    rows: list[tuple[int, TableDelta, RowKey]] = []
    for n, td in enumerate(found):
        c = td.change
        causal = [d for i, d in enumerate(tables) if _ok(first.get((i, c.key)), c)]
        moving = [(i, d) for i, d in enumerate(tables) if _moves(first.get((i, c.key)), c)]
        names = _involved(c)
        if not causal:
            td.note = "no single input table reproduces it alone; these changes do it together"
            td.causes = [_table_cause(d, grid, names, c.task, "together", first.get((i, c.key))) for i, d in moving]
            continue
        for d in causal:
            keys = grid.relevant(d, names, c.task)
            if 0 < len(keys) <= ROWS_PER_TASK:
                rows.extend((n, d, k) for k in keys)
            else:
                res = first.get((ds_index(tables, d), c.key))
                td.causes.append(_table_cause(d, grid, names, c.task, "table", res))
    return rows


def _replay_rows(
    replayer: _Replayer, found: list[TaskDiff], rows: list[tuple[int, TableDelta, RowKey]]
) -> tuple[dict[tuple[int, Key], Result], dict[tuple[str, RowKey], int]]:
    """The brokerages replayed with one row group swapped in at a time; also the swap index of each row."""
    index: dict[tuple[str, RowKey], int] = {}
    row_swaps: list[Swap] = []
    row_items: list[Item] = []
    for n, d, k in sorted(rows, key=lambda r: (r[1].table, str(r[2]))):
        i = index.setdefault((d.table, k), len(row_swaps))
        if i == len(row_swaps):
            row_swaps.append([(d, [k])])
        row_items.append((i, found[n].change.key, _involved(found[n].change)))
    return replayer.run(row_swaps, row_items), index


def _row_causes(
    grid: _Grid,
    tables: list[TableDelta],
    found: list[TaskDiff],
    rows: list[tuple[int, TableDelta, RowKey]],
    first: dict[tuple[int, Key], Result],
    second: dict[tuple[int, Key], Result],
    index: dict[tuple[str, RowKey], int],
) -> None:
    """Row-level causes from the row replays; a table none of whose rows does it alone stays a table-level cause."""
    by_task: dict[int, list[tuple[TableDelta, RowKey]]] = {}
    for n, d, k in rows:
        by_task.setdefault(n, []).append((d, k))
    for n, tried in by_task.items():
        td = found[n]
        c = td.change
        names = _involved(c)
        hits = []
        for d, k in tried:
            res = second.get((index[(d.table, k)], c.key))
            if _ok(res, c):
                fates = res[3] if res else {}
                subject = _mover(grid.subject(d.table, k, names, c.task), fates, names)
                hits.append(Cause(d.table, k, describe(d, k), "row", subject, fates.get(subject or "")))
        if hits:
            td.causes.extend(hits)
        else:
            seen = {x.table for x in td.causes}
            for d in {d.table: d for d, _ in tried}.values():
                if d.table not in seen:
                    i = ds_index(tables, d)
                    td.causes.append(_table_cause(d, grid, names, c.task, "table", first.get((i, c.key))))


def ds_index(tables: list[TableDelta], d: TableDelta) -> int:
    """Position of D among TABLES."""
    return next(i for i, t in enumerate(tables) if t is d)


def _mover(touched: str | None, fates: dict[str, Fate], names: Sequence[str]) -> str | None:
    """The candidate to speak about: the one the input belongs to when it moved, else the first that moved."""
    moved = [n for n in names if n in fates and fates[n].effect() != "kept"]
    if touched in moved:
        return touched
    return moved[0] if moved else touched


def _ok(res: Result | None, c: Change) -> bool:
    return res is not None and res[2] is not None and reproduces(c, res[2])


def _moves(res: Result | None, c: Change) -> bool:
    return res is not None and res[2] is not None and bool(aspects(c.before, res[2]))


def _table_cause(
    d: TableDelta, grid: _Grid, names: Sequence[str], task: int, level: str, res: Result | None = None
) -> Cause:
    keys = grid.relevant(d, names, task)
    what = [s for k in keys[:2] for s in describe(d, k)[:1]] or [f"{len(d.keys)} row group(s) of {d.table} changed"]
    touched = next((s for k in keys if (s := grid.subject(d.table, k, names, task))), None) if keys else None
    fates = res[3] if res else {}
    subject = _mover(touched, fates, names)
    return Cause(d.table, None, what, level, subject if subject in fates else None, fates.get(subject or ""))


def _replay(
    a: GridSnapshot, cache: GridCache, config: Config, swaps: list[Swap], items: list[Item], client: Any
) -> dict[tuple[int, Key], Result]:
    token = uuid.uuid4().hex  # names this call's mixed grids in the workers' cache
    items = sorted(items, key=lambda it: it[0])  # grouped by swap: one mixed grid per run of items
    payload = (config, swaps, token)
    if len(items) < CLUSTER_ITEMS_PER_SWAP * len({it[0] for it in items}):
        # every worker would build most mixed grids again (a GridCache and cold brokers each): here it is cheaper
        return {(r[0], r[1]): r for r in replay_chunk(a, cache, payload, items)}
    parts = runs.map_chunks(replay_chunk, a, items, payload, cache=cache, client=client)
    return {(r[0], r[1]): r for part in parts for r in part}
