"""What would change one queue's fate for one task: gdpconfig and input levers, each verified by brokering again."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from brokerage.brokers import analysis_context, analysis_filters
from brokerage.brokers.router import ANALYSIS, route
from brokerage.brokers.uses import stage_keys, weight_keys
from brokerage.checks import production_queues
from brokerage.checks.context import QueueContext
from brokerage.framework import Filter
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for, derived_cache
from brokerage.model.errors import UnknownIdError
from brokerage.model.explain import Decision, fmt
from brokerage.model.gdpconfig import Config, ConfigError, lookup_param
from brokerage.model.network import QUEUED_EXPRESS, QUEUED_PRODUCTION_OUTPUT
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.versions import config_version

BISECTION_STEPS = 40  # enough to pin a float to 1e-12 of its range; ints stop when the interval closes
TOP = 10  # "drops it out of the top 10": the candidates operators compare
BEST = "best candidates"


@dataclass
class Lever:
    """One change that would move the queue, with what brokering again with it applied showed."""

    kind: str  # "gdpconfig" | "input"
    effect: str
    rank_after: int | None
    key: str = ""
    value: Any = None
    table: str = ""
    field: str = ""
    row: str = ""
    other_tasks_changed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (gdpconfig levers name key and value; input levers table, field, row and value)."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "gdpconfig":
            out.update(key=self.key, value=self.value)
        else:
            out.update(table=self.table, field=self.field, row=self.row, value=self.value)
        out.update(effect=self.effect, rank_after=self.rank_after, other_tasks_changed=self.other_tasks_changed)
        return out


@dataclass
class Explanation:
    """Where a queue stands for a task, what blocks it, and the levers that would change that."""

    task: int
    queue: str
    broker: str
    status: str  # "ranked" | "skipped" | "not considered"
    rank: int | None
    weight: float | None
    blocking: list[dict[str, Any]]
    levers: list[Lever]
    snapshot_version: str
    config_version: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``brokerage explain --json``."""
        return {
            "task": self.task,
            "nucleus" if self.broker == "task" else "queue": self.queue,
            "broker": self.broker,
            "status": self.status,
            "rank": self.rank,
            "weight": self.weight,
            "blocking": self.blocking,
            "levers": [lever.to_dict() for lever in self.levers],
            "notes": self.notes,
            "snapshot_version": self.snapshot_version,
            "config_version": self.config_version,
        }


def _context(snap: GridSnapshot, task: dict[str, Any], config: Config, cache: GridCache) -> QueueContext:
    if route(task) is ANALYSIS:
        return analysis_context.make_context(task, config, cache)
    return production_queues.make_context(task, config, cache)


def _filters(task: dict[str, Any]) -> dict[str, Filter]:
    if route(task) is ANALYSIS:
        return {
            f.name: f
            for f in (*analysis_filters.PRELIMINARY, *analysis_filters.PERSISTENT, *analysis_filters.TEMPORARY)
        }
    return {f.name: f for f in production_queues.FILTERS}


def _numeric(key: str) -> tuple[float, float, bool] | None:
    """(lower bound, upper bound, integer) of a numeric parameter, or None."""
    try:
        p = lookup_param(key)
    except ConfigError:
        return None
    if p.type not in ("int", "float") or p.minimum is None or p.maximum is None:
        return None
    return float(p.minimum), float(p.maximum), p.type == "int"


def _closest_passing(current: float, bound: float, integer: bool, passes: Callable[[float], bool]) -> float | None:
    """The value nearest CURRENT, towards BOUND, at which PASSES holds (None when it fails even at BOUND)."""
    with np.errstate(divide="ignore", invalid="ignore"):  # bounds such as offset 0 give inf weights: fine here
        return _bisect(current, bound, integer, passes)


def _bisect(current: float, bound: float, integer: bool, passes: Callable[[float], bool]) -> float | None:
    if not passes(bound):
        return None
    bad, good = current, bound
    for _ in range(BISECTION_STEPS):
        if integer and abs(good - bad) <= 1:
            break
        mid = (
            math.floor((bad + good) / 2)
            if integer and good > bad
            else math.ceil((bad + good) / 2)
            if integer
            else (bad + good) / 2
        )
        if passes(mid):
            good = mid
        else:
            bad = mid
    if integer:
        return int(good)
    return next((r for r in _rounded_towards(good, bound) if passes(r)), good)


def _rounded_towards(value: float, bound: float) -> list[float]:
    """VALUE rounded to 4, 5, 6 significant digits in the direction of BOUND (further into the passing side), so a
    lever reads 0.6666 rather than 0.666666666666424."""
    if value == 0 or not math.isfinite(value):
        return []
    out = []
    for digits in (4, 5, 6):
        q = 10.0 ** (math.floor(math.log10(abs(value))) - digits + 1)
        r = (math.ceil(value / q) if bound > value else math.floor(value / q)) * q
        out.append(float(f"{r:.{digits}g}"))
    return out


def _turning_values(config: Config, key: str, holds: Callable[[float], bool]) -> list[float]:
    """For a numeric KEY, the values nearest its current one (towards its upper, then its lower bound) at which
    HOLDS becomes true; none for a key that is not a bounded number."""
    spec = _numeric(key)
    if spec is None:
        return []
    lo, hi, integer = spec
    if config[key] is None:
        return []  # unset (no default): there is no current value to move from
    current = float(config[key])
    found = (_closest_passing(current, bound, integer, holds) for bound in (hi, lo))
    return [v for v in found if v is not None and v != current]


def _fate(d: Decision, queue: str) -> tuple[int | None, str, str]:
    """(rank or None, skip stage, skip code) of QUEUE in decision D."""
    for c in d.candidates:
        if c.name == queue:
            return c.rank, "", ""
    s = d.skip_of(queue)
    return (None, s.stage, s.criteria) if s else (None, "", "")


def _effect(before_stage: str, after: tuple[int | None, str, str]) -> str:
    rank, stage, code = after
    if rank is not None:
        return f"passes the {before_stage} and is ranked {rank}"
    if stage:
        return f"passes the {before_stage} but is then removed by the {stage} ({code})"
    return f"passes the {before_stage}"


def _broker(snap: GridSnapshot, tid: int, config: Config, cache: GridCache | None) -> Decision:
    return route(views.task_row(cache_for(snap, cache), tid)).broker(snap, tid, config, cache=cache)


def explain_queue(
    snap: GridSnapshot,
    task_id: int,
    queue: str,
    config: Config | None = None,
    *,
    cache: GridCache | None = None,
    count_grid: Callable[[Config], int] | None = None,
) -> Explanation:
    """Where QUEUE stands in TASK_ID's job brokerage and the levers that would change it, each verified.

    COUNT_GRID(config) -> number of other tasks whose top candidate changes (e.g. a whole-grid what-if); skipped
    when None. Raises KeyError naming an unknown task or queue.
    Usage: ``explain_queue(snap, 4242, "CERN", Config(), cache=cache).to_dict()["levers"]``
    """
    config = config or Config()
    cache = cache_for(snap, cache)
    task = views.task_row(cache, task_id)
    qa = views.queue_arrays(cache)
    if queue not in qa.index:
        raise UnknownIdError(f"unknown queue {queue!r}: not in the snapshot ({qa.n} queues)")
    decision = _broker(snap, task_id, config, cache)
    rank, stage, code = _fate(decision, queue)
    versions = (snap.key, config_version(config))
    if rank is not None:
        weight = next(c.weight for c in decision.candidates if c.name == queue)
        levers = _ranked_levers(snap, task_id, queue, rank, config, cache, decision)
        out = Explanation(task_id, queue, decision.broker, "ranked", rank, weight, [], levers, *versions)
    elif stage:
        skip = decision.skip_of(queue)
        assert skip is not None
        blocking = [{"criteria": code, "reason": skip.reason, "stage": stage, "temporary": skip.temporary}]
        levers = _skipped_levers(snap, task, queue, stage, config, cache)
        out = Explanation(task_id, queue, decision.broker, "skipped", None, None, blocking, levers, *versions)
    else:
        note = "the queue is not a candidate of this broker (its type or the task's pre-assignment keeps it out)"
        out = Explanation(task_id, queue, decision.broker, "not considered", None, None, [], [], *versions, [note])
    if decision.status == "pending" and decision.message and not decision.skipped:
        out.notes.append(decision.message)
    if count_grid is not None:
        for lever in out.levers:
            if lever.kind == "gdpconfig":
                lever.other_tasks_changed = count_grid(config.with_overrides({lever.key: lever.value}))
    return out


def _skipped_levers(
    snap: GridSnapshot, task: dict[str, Any], queue: str, stage: str, config: Config, cache: GridCache
) -> list[Lever]:
    tid = int(task["jeditaskid"])
    f = _filters(task).get(stage)
    keys = stage_keys(route(task).name, stage)  # the keys the stage declares it reads itself
    out: list[Lever] = []
    i = views.queue_arrays(cache).index[queue]
    if f is not None:

        def passes_with(key: str) -> Callable[[float], bool]:
            def passes(v: float) -> bool:
                try:
                    verdict = f.fn(_context(snap, task, config.with_overrides({key: v}), cache))
                except ConfigError:
                    return False
                return verdict is None or bool(verdict.passed[i])

            return passes

        for key in keys:  # the filter alone passes at the value, then the whole brokerage verifies it
            for value in _turning_values(config, key, passes_with(key)):
                after = _broker(snap, tid, config.with_overrides({key: value}), cache)
                fate = _fate(after, queue)
                if fate[1] == stage:
                    continue  # not verified: the whole brokerage still stops it here
                out.append(Lever("gdpconfig", _effect(stage, fate), fate[0], key=key, value=value))
                break
    elif stage == BEST:
        # its place among all survivors is the number of candidates that must be kept
        wide = _broker(snap, tid, config.with_overrides({"MAX_SITE_CANDIDATES": 1000}), cache)
        place = _fate(wide, queue)[0]
        if place is not None:
            out.append(Lever("gdpconfig", f"kept as candidate {place}", place, key="MAX_SITE_CANDIDATES", value=place))
    for key in () if f is not None else keys:  # a stage that is no filter record here (caps, the cut): broker again
        if any(lv.key == key for lv in out):
            continue  # the cut's lever is already there

        def clears(v: float, k: str = key) -> bool:
            try:
                return _fate(_broker(snap, tid, config.with_overrides({k: v}), cache), queue)[1] != stage
            except ConfigError:  # a value the registry or a cross-key rule refuses never passes
                return False

        for value in _turning_values(config, key, clears)[:1]:
            fate = _fate(_broker(snap, tid, config.with_overrides({key: value}), cache), queue)
            out.append(Lever("gdpconfig", _effect(stage, fate), fate[0], key=key, value=value))
    out.extend(_input_levers(snap, task, queue, stage, config, cache))
    return out


def _input_levers(
    snap: GridSnapshot, task: dict[str, Any], queue: str, stage: str, config: Config, cache: GridCache
) -> list[Lever]:
    """Changes of the grid's own tables that would let QUEUE pass STAGE, verified on a modified snapshot."""
    ctx = _context(snap, task, config, cache)
    i = ctx.qa.index[queue]
    qa, tid = ctx.qa, int(task["jeditaskid"])
    plans: list[tuple[str, str, str, Any, str]] = []  # table, field, row, value, wording
    if stage == "memory check":
        f = _filters(task)[stage]
        f.fn(ctx)
        mem = float(ctx.derived["memory"][i])
        if mem > float(qa["maxrss"][i]) > 0:
            plans.append(
                ("queues", "maxrss", queue, math.ceil(mem), f"maxrss would have to be >= {fmt(math.ceil(mem))} MB")
            )
        elif mem < float(qa["minrss"][i]):
            plans.append(
                ("queues", "minrss", queue, math.floor(mem), f"minrss would have to be <= {fmt(math.floor(mem))} MB")
            )
    elif stage == "walltime check":
        _filters(task)[stage].fn(ctx)
        wall = float(ctx.derived["walltime"][i])
        if wall > float(qa["maxtime"][i]) > 0:
            plans.append(
                ("queues", "maxtime", queue, math.ceil(wall), f"maxtime would have to be >= {fmt(math.ceil(wall))} s")
            )
        else:
            plans.append(
                ("queues", "mintime", queue, math.floor(wall), f"mintime would have to be <= {fmt(math.floor(wall))} s")
            )
    elif stage == "scratch disk check":
        _filters(task)[stage].fn(ctx)
        need = float(ctx.derived["scratch"][i]) * max(float(qa["corecount"][i]), 1.0)
        value = math.floor(need) + 1
        plans.append(("queues", "maxwdir", queue, value, f"maxwdir would have to be >= {fmt(value)} MB"))
    elif stage == "storage space check":
        e = int(qa.out_endpoint[i])
        if e >= 0:
            ep = ctx.ep
            floor = float(config["STORAGE_MIN_FREE_SIZE"])
            free, expired = float(ep["space_free"][e]), float(ep["space_expired"][e])
            value = math.floor(floor - expired) + 1
            name = str(ep.name[e])
            more = value - free
            plans.append(("ddm_endpoints", "space_free", name, value, f"needs {fmt(more)} GB more free at {name}"))
    elif stage == "link check" and getattr(ctx, "nucleus", None):
        site = str(qa["atlas_site"][i])
        nucleus = ctx.nucleus  # type: ignore[attr-defined]
        wording = f"the link {site}->{nucleus} would have to be unblocked (AGIS closeness >= 0)"
        plans.append(("network", "AGIS_closeness", f"{site}:{nucleus}", 0.0, wording))
    elif stage == "status check":
        plans.append(("queues", "status", queue, "online", "the queue would have to be online"))
    elif stage == "satellite link queue check" and getattr(ctx, "nucleus", None):
        site = str(qa["atlas_site"][i])
        cap = float(config["NQUEUED_SAT_CAP"])
        key = QUEUED_EXPRESS if getattr(ctx, "express", False) else QUEUED_PRODUCTION_OUTPUT
        nucleus = ctx.nucleus  # type: ignore[attr-defined]
        wording = f"queued files on the link {site}->{nucleus} would have to fall to {fmt(cap)}"
        plans.append(("network", key, f"{site}:{nucleus}", cap, wording))
    out = []
    for table, column, row, value, wording in plans:
        changed = _with_input(snap, table, column, row, value)
        if changed is None:
            continue
        after = _broker(changed, tid, config, derived_cache(cache, changed))
        fate = _fate(after, queue)
        if fate[1] == stage:
            continue
        out.append(
            Lever(
                "input", f"{wording}: {_effect(stage, fate)}", fate[0], table=table, field=column, row=row, value=value
            )
        )
    return out


def _with_input(snap: GridSnapshot, table: str, column: str, row: str, value: Any) -> GridSnapshot | None:
    """SNAP with one cell changed (network rows are 'src:dst' with COLUMN the metric key)."""
    df = snap.tables[table].copy()
    if table == "queues":
        mask = df["panda_queue"] == row
    elif table == "ddm_endpoints":
        mask = df["ddm_endpoint_name"] == row
    elif table == "sites":
        mask = df["site_name"] == row
    elif table == "network":
        src, dst = row.split(":", 1)
        mask = (df["src"] == src) & (df["dst"] == dst) & (df["key"] == column)
        column = "value"
    else:
        return None
    if not mask.any():
        return None
    df.loc[mask, column] = value
    return snap.replace(**{table: df})


def _ranked_levers(
    snap: GridSnapshot, task_id: int, queue: str, rank: int, config: Config, cache: GridCache, decision: Decision
) -> list[Lever]:
    """For a ranked queue: the smallest single-parameter change making it rank 1, and one dropping it out of the top."""
    out: list[Lever] = []
    top = int(config["MAX_SITE_CANDIDATES"])
    keys = _weight_keys(snap, task_id, config, cache)

    def rank_with(key: str, v: float) -> int | None:
        try:
            return _fate(_broker(snap, task_id, config.with_overrides({key: v}), cache), queue)[0]
        except ConfigError:  # e.g. SITE_CLASS_EPSILON_1 must stay above SITE_CLASS_EPSILON_2
            return None

    if rank > 1:
        found: list[tuple[float, Lever]] = []  # (relative size of the change, lever)
        for key in keys:
            if config[key] is None:
                continue
            current = float(config[key])
            for value in _turning_values(config, key, lambda v, k=key: rank_with(k, v) == 1):
                change = abs(value - current) / max(abs(current), 1e-9)
                found.append((change, Lever("gdpconfig", f"becomes rank 1 (from {rank})", 1, key=key, value=value)))
        if found:
            out.append(min(found, key=lambda x: x[0])[1])
    # out of the top: keeping fewer candidates than its rank is the smallest change that does it
    if rank <= min(top, TOP):
        value = rank - 1
        if value >= 1:
            after = _fate(_broker(snap, task_id, config.with_overrides({"MAX_SITE_CANDIDATES": value}), cache), queue)
            if after[0] is None:
                out.append(
                    Lever(
                        "gdpconfig",
                        f"drops out of the best {value} (-low_weight)",
                        None,
                        key="MAX_SITE_CANDIDATES",
                        value=value,
                    )
                )
    return out


def _weight_keys(snap: GridSnapshot, task_id: int, config: Config, cache: GridCache) -> list[str]:
    """gdpconfig keys the task's weight factors declare they read, numeric ones only."""
    broker = route(views.task_row(cache, task_id)).name
    return [k for k in weight_keys(broker) if _numeric(k) is not None and k != "MAX_SITE_CANDIDATES"]
