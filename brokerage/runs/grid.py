"""Whole-grid brokerage on the cluster: grid runs (Outcomes, for what-ifs) and decisions (for reports)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from brokerage.brokers import batch
from brokerage.brokers.batch import ALL_BROKERS, GridRun, Key, Outcome, outcomes_of, plan_grid
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.waiting import waiting_task_ids
from brokerage.runs.chunks import Cancel, Progress, map_chunks


def decisions_chunk(
    snap: GridSnapshot, cache: GridCache, config: Config, keys: Sequence[Key]
) -> list[tuple[Key, Decision | batch.TaskFailure]]:
    """Worker side of a report: the decisions of KEYS, a brokerage that raises kept as a TaskFailure."""
    return list(batch.run(snap, config, keys, cache=cache, keep_failures=True))


def run_grid(
    snap: GridSnapshot,
    config: Config,
    *,
    brokers: Iterable[str] = ALL_BROKERS,
    task_ids: Sequence[int] | None = None,
    progress: Progress | None = None,
    cache: GridCache | None = None,
    cancel: Cancel | None = None,
    client: Any = None,
) -> GridRun:
    """``brokers.batch.run_grid_serial`` spread over the cluster in chunks of brokerages; the same GridRun.

    Takes run_grid's arguments, so it can be passed as ``rerun_grid(..., run_with=run_grid)``; CANCEL and
    CLIENT as in ``map_chunks``. Small runs stay in-process (MIN_CLUSTER_TASKS).
    Usage: ``run = run_grid(snap, config, progress=bar)``
    """
    t0 = time.perf_counter()
    cache = cache_for(snap, cache)
    ids = waiting_task_ids(snap) if task_ids is None else [int(t) for t in task_ids]
    keys, errors = plan_grid(cache, ids, brokers)
    parts = map_chunks(
        outcomes_of, snap, keys, config, cache=cache, progress=progress, cancel=cancel, client=client,
        affinity=_task_of,
    )  # fmt: skip
    merged: dict[Key, Outcome] = {}
    for part in parts:
        merged.update(part)
    outcomes = {k: merged[k] for k in keys if k in merged}  # the serial run's order
    return GridRun(outcomes, errors, time.perf_counter() - t0, len(keys))


def _task_of(key: Key) -> int:
    """A brokerage's task id: its worker affinity (the same task goes to the same worker every run)."""
    return int(key[1])


def _config_task_of(item: tuple[int, Key]) -> int:
    return int(item[1][1])


def decide_all(
    snap: GridSnapshot,
    config: Config,
    keys: Sequence[Key],
    *,
    cache: GridCache | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    client: Any = None,
) -> list[tuple[Key, Decision | batch.TaskFailure]]:
    """``batch.run(..., keep_failures=True)`` over the cluster: every (key, decision or failure), in KEYS' order.

    Usage: ``decided = decide_all(snap, config, batch.plan(cache, ids))``
    """
    parts = map_chunks(
        decisions_chunk, snap, keys, config, cache=cache, progress=progress, cancel=cancel, client=client,
        affinity=_task_of,
    )  # fmt: skip
    by_key = {pair[0]: pair for part in parts for pair in part}
    return [by_key[k] for k in keys if k in by_key]  # KEYS' order


def sweep_chunk(
    snap: GridSnapshot, cache: GridCache, configs: Sequence[Config], items: Sequence[tuple[int, Key]]
) -> list[tuple[int, Key, Outcome]]:
    """Worker side of a sweep: the Outcome of each (config index, key) item, brokered under that config."""
    out = []
    for i, cfg in enumerate(configs):
        keys = [k for j, k in items if j == i]
        if keys:
            out.extend((i, k, o) for k, o in outcomes_of(snap, cache, cfg, keys).items())
    return out


def sweep(
    snap: GridSnapshot,
    configs: Sequence[Config],
    *,
    task_ids: Sequence[int] | None = None,
    progress: Progress | None = None,
    cache: GridCache | None = None,
    cancel: Cancel | None = None,
    client: Any = None,
) -> list[GridRun]:
    """One grid run per config of CONFIGS (e.g. one parameter over a range), as one job on the cluster.

    Every (config, brokerage) pair is a work item, so the chunks of all configs share the workers and the
    snapshot sent once. Run ``i`` equals ``run_grid_serial(snap, configs[i])``.
    Usage: ``runs = sweep(snap, [Config().with_overrides({"NQUEUED_SAT_CAP": v}) for v in (50, 100, 200)])``
    """
    t0 = time.perf_counter()
    cache = cache_for(snap, cache)
    ids = waiting_task_ids(snap) if task_ids is None else [int(t) for t in task_ids]
    keys, errors = plan_grid(cache, ids)
    items = [(i, k) for i in range(len(configs)) for k in keys]
    parts = map_chunks(
        sweep_chunk, snap, items, list(configs), cache=cache, progress=progress, cancel=cancel, client=client,
        affinity=_config_task_of,
    )  # fmt: skip
    merged: list[dict[Key, Outcome]] = [{} for _ in configs]
    for part in parts:
        for i, key, outcome in part:
            merged[i][key] = outcome
    outcomes = [{k: m[k] for k in keys if k in m} for m in merged]  # each run in the serial run's order
    seconds = time.perf_counter() - t0
    return [GridRun(o, dict(errors), seconds, len(keys)) for o in outcomes]
