"""What would change one nucleus' fate in a task's task brokerage: gdpconfig and input levers, each verified."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from brokerage.brokers import nucleus_context as nuc
from brokerage.brokers.nucleus import BROKER as NUCLEUS
from brokerage.brokers.router import run_nucleus_brokerage
from brokerage.brokers.uses import stage_keys, weight_keys
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for, derived_cache
from brokerage.model.errors import UnknownIdError
from brokerage.model.explain import Decision, fmt
from brokerage.model.gdpconfig import Config, ConfigError
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.versions import config_version
from brokerage.whatif.levers import Explanation, Lever, _effect, _fate, _turning_values, _with_input

# the -job check declares every production filter's keys: its levers are the queues' own (explain --queue)
NO_KEY_LEVERS = ("job check",)
SPACE_TRIES = 4  # free-space guesses (each doubling the last) verified before giving up


def _decide(snap: GridSnapshot, tid: int, config: Config, cache: GridCache) -> Decision:
    return run_nucleus_brokerage(snap, tid, config, cache=cache)


def explain_nucleus(
    snap: GridSnapshot,
    task_id: int,
    nucleus: str,
    config: Config | None = None,
    *,
    cache: GridCache | None = None,
    count_grid: Callable[[Config], int] | None = None,
) -> Explanation:
    """Where NUCLEUS stands in TASK_ID's task brokerage and the levers that would change it, each verified by
    brokering again; COUNT_GRID as in ``explain_queue``. KeyError names an unknown task or nucleus.

    Usage: ``explain_nucleus(snap, 4242, "CERN-PROD", Config(), cache=cache).to_dict()["levers"]``
    """
    config = config or Config()
    cache = cache_for(snap, cache)
    task = views.task_row(cache, task_id)
    na = nuc.nucleus_arrays(cache)
    if nucleus not in na.index:
        raise UnknownIdError(f"unknown nucleus {nucleus!r}: not a nucleus of the snapshot ({na.n} nuclei)")
    decision = _decide(snap, task_id, config, cache)
    rank, stage, code = _fate(decision, nucleus)
    versions = (snap.key, config_version(config))
    if rank is not None:
        weight = next(c.weight for c in decision.candidates if c.name == nucleus)
        levers = _ranked(snap, task_id, nucleus, rank, config, cache)
        out = Explanation(task_id, nucleus, decision.broker, "ranked", rank, weight, [], levers, *versions)
    elif stage:
        skip = decision.skip_of(nucleus)
        assert skip is not None
        blocking = [{"criteria": code, "reason": skip.reason, "stage": stage, "temporary": skip.temporary}]
        levers = _skipped(snap, task, nucleus, stage, config, cache)
        out = Explanation(task_id, nucleus, decision.broker, "skipped", None, None, blocking, levers, *versions)
    else:
        note = decision.message or "the task needs no nucleus (it has one already) or was not brokered"
        out = Explanation(task_id, nucleus, decision.broker, "not considered", None, None, [], [], *versions, [note])
    if count_grid is not None:
        for lever in out.levers:
            if lever.kind == "gdpconfig":
                lever.other_tasks_changed = count_grid(config.with_overrides({lever.key: lever.value}))
    return out


def _keys(stage: str, config: Config, task: dict[str, Any]) -> tuple[str, ...]:
    """The keys the nucleus filter STAGE declares it reads; DISK_THRESHOLD_<gshare> when the share has its own."""
    if stage in NO_KEY_LEVERS:
        return ()
    threshold = nuc.disk_threshold(config, task.get("gshare"))[0]
    return tuple(threshold if k == "DISK_THRESHOLD" else k for k in stage_keys(NUCLEUS, stage))


def _skipped(
    snap: GridSnapshot, task: dict[str, Any], name: str, stage: str, config: Config, cache: GridCache
) -> list[Lever]:
    tid = int(task["jeditaskid"])
    out: list[Lever] = []

    def clears(key: str) -> Callable[[float], bool]:
        def passes(v: float) -> bool:
            try:
                return _fate(_decide(snap, tid, config.with_overrides({key: v}), cache), name)[1] != stage
            except ConfigError:
                return False

        return passes

    found: dict[str, float] = {}
    for key in _keys(stage, config, task):
        for value in _turning_values(config, key, clears(key))[:1]:
            fate = _fate(_decide(snap, tid, config.with_overrides({key: value}), cache), name)
            out.append(Lever("gdpconfig", _effect(stage, fate), fate[0], key=key, value=value))
            found[key] = value
    out.extend(_input_levers(snap, task, name, stage, config, cache, found))
    return out


def _input_levers(
    snap: GridSnapshot,
    task: dict[str, Any],
    name: str,
    stage: str,
    config: Config,
    cache: GridCache,
    found: dict[str, float],
) -> list[Lever]:
    tid = int(task["jeditaskid"])
    na = nuc.nucleus_arrays(cache)
    i = na.index[name]
    plans: list[tuple[str, str, str, Any, str]] = []
    if stage == "status check":
        plans.append(("sites", "state", name, nuc.ACTIVE, f"the nucleus would have to be {nuc.ACTIVE}"))
    elif stage == "space check" and na.endpoint[i]:
        key, thr = nuc.disk_threshold(config, task.get("gshare"))
        ep, free = str(na.endpoint[i]), float(na.space_free[i])
        room = free + float(np.nan_to_num(na.space_expired[i])) - thr * nuc.GB_PER_TB
        demand = _projected_output(snap, tid, name, config, cache, found, key)
        # free + expired - projected output must exceed the threshold: the missing space follows from the output
        missing = demand - room if demand is not None else thr * nuc.GB_PER_TB
        step = max(1.0, missing)
        for _ in range(SPACE_TRIES):
            value = math.floor(free + step + 1e-6) + 1  # the filter wants strictly more than the threshold
            plans.append(("ddm_endpoints", "space_free", ep, value, f"needs {fmt(value - free)} GB more free at {ep}"))
            step *= 2
    out: list[Lever] = []
    for table, column, row, value, wording in plans:
        changed = _with_input(snap, table, column, row, value)
        if changed is None:
            continue
        fate = _fate(_decide(changed, tid, config, derived_cache(cache, changed)), name)
        if fate[1] == stage:
            continue
        out.append(Lever("input", f"{wording}: {_effect(stage, fate)}", fate[0], table=table, field=column, row=row,
                         value=value))  # fmt: skip
        break  # the smallest guess that works
    return out


def _projected_output(
    snap: GridSnapshot, tid: int, name: str, config: Config, cache: GridCache, found: dict[str, float], key: str
) -> float | None:
    """The nucleus' projected output (GB) under CONFIG, read from a brokerage where a found lever lets it pass: the
    threshold lever leaves it unchanged, the output-rate lever scales it by the rate."""
    per_day = float(config["OUTPUT_GB_PER_CORE_DAY"])
    for k in (key, "OUTPUT_GB_PER_CORE_DAY"):
        if k not in found or (k != key and not found[k]):
            continue
        d = _decide(snap, tid, config.with_overrides({k: found[k]}), cache)
        c = next((c for c in d.candidates if c.name == name), None)
        if c is not None and c.details.get("projectedOutputGB") is not None:
            return float(c.details["projectedOutputGB"]) * (1.0 if k == key else per_day / float(found[k]))
    return None


def _ranked(
    snap: GridSnapshot, tid: int, name: str, rank: int, config: Config, cache: GridCache
) -> list[Lever]:  # fmt: skip
    if rank == 1:
        return []

    def rank_with(key: str, v: float) -> int | None:
        try:
            return _fate(_decide(snap, tid, config.with_overrides({key: v}), cache), name)[0]
        except ConfigError:
            return None

    found: list[tuple[float, Lever]] = []
    for key in weight_keys(NUCLEUS):
        if config[key] is None:
            continue
        current = float(config[key])
        for value in _turning_values(config, key, lambda v, k=key: rank_with(k, v) == 1):
            change = abs(value - current) / max(abs(current), 1e-9)
            found.append((change, Lever("gdpconfig", f"becomes rank 1 (from {rank})", 1, key=key, value=value)))
    return [min(found, key=lambda x: x[0])[1]] if found else []
