"""What-if for the whole grid: re-broker only what an edit can change, and how the grid's brokerage moves."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from brokerage.brokers.batch import GridRun, Key, Progress, Runner, run_grid_serial
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.whatif.compare import affected_brokers

LOAD_TOLERANCE = 1e-9  # relative change below which an expected load counts as unchanged


def rerun_grid(
    snap: GridSnapshot,
    base: GridRun,
    base_config: Config,
    config: Config,
    progress: Progress | None = None,
    run_with: Runner | None = None,
    cache: GridCache | None = None,
) -> GridRun:
    """Re-broker under CONFIG only what its differences from BASE_CONFIG can change; reuse BASE for the rest.

    RUN_WITH replaces run_grid (same arguments), e.g. to spread the tasks over a cluster.
    Usage: ``after = rerun_grid(snap, before, stored, stored.with_overrides({"NQUEUED_SAT_CAP": 300}))``
    """
    t0 = time.perf_counter()
    eb, ea = base_config.effective(), config.effective()
    changed = {k for k in eb.keys() | ea.keys() if eb.get(k) != ea.get(k)}
    touched = affected_brokers(changed) if changed else frozenset()
    ids = sorted({t for (_, t) in [*base.outcomes, *base.errors]})
    run = run_with or run_grid_serial
    fresh = run(snap, config, brokers=touched, task_ids=ids, progress=progress, cache=cache) if touched else None
    outcomes = {k: v for k, v in base.outcomes.items() if k[0] not in touched}
    errors = {k: v for k, v in base.errors.items() if k[0] not in touched}
    if fresh is not None:
        outcomes.update(fresh.outcomes)
        errors.update(fresh.errors)
    return GridRun(
        outcomes,
        errors,
        time.perf_counter() - t0,
        fresh.recomputed if fresh else 0,
        sum(1 for k in base.outcomes if k[0] not in touched),
    )


def top_changed_count(
    snap: GridSnapshot,
    base: GridRun,
    base_config: Config,
    config: Config,
    *,
    exclude: int | None = None,
    run_with: Runner | None = None,
    cache: GridCache | None = None,
) -> int:
    """How many tasks' top candidate CONFIG changes against BASE (a run under BASE_CONFIG), EXCLUDE aside.

    Usage: ``top_changed_count(snap, run_grid(snap, cfg), cfg, cfg.with_overrides({"NQUEUED_SAT_CAP": 300}))``
    """
    after = rerun_grid(snap, base, base_config, config, run_with=run_with, cache=cache)
    return len({tid for (_, tid) in impact(base, after).top_changed if tid != exclude})


@dataclass
class GridImpact:
    """How the whole grid's brokerage moves between two runs."""

    compared: dict[str, int]  # broker -> tasks present in both runs
    top_changed: list[Key]
    top10_changed: list[Key]
    newly_pending: list[Key]
    unpending: list[Key]
    queue_load: pd.DataFrame  # queue, before, after, delta (expected jobs)
    nucleus_load: pd.DataFrame  # nucleus, before, after, delta (expected tasks)
    criteria: pd.DataFrame  # criteria, before, after, delta (skips summed over tasks)


def _load(run: GridRun, brokers: set[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for (b, _), o in run.outcomes.items():
        if b in brokers:
            for name, s in o.shares.items():
                out[name] = out.get(name, 0.0) + s * o.work
    return out


def _table(before: Mapping[str, float], after: Mapping[str, float], label: str) -> pd.DataFrame:
    names = sorted(before.keys() | after.keys())
    df = pd.DataFrame(
        {
            label: names,
            "before": [float(before.get(n, 0.0)) for n in names],
            "after": [float(after.get(n, 0.0)) for n in names],
        }
    )
    delta = df["after"] - df["before"]
    # sums of shares differ by rounding alone when nothing moved
    df["delta"] = delta.where(delta.abs() > LOAD_TOLERANCE * (1.0 + df["before"].abs()), 0.0)
    order = df["delta"].abs().sort_values(ascending=False, kind="stable").index
    return df.loc[order].reset_index(drop=True)


def impact(before: GridRun, after: GridRun) -> GridImpact:
    """Compare two grid runs: tasks whose top candidate or top-10 set changed, (un)pending tasks, load shifts.

    Usage: ``impact(run_grid(snap, cfg), run_grid(snap, cfg2)).top_changed``
    """
    common = sorted(before.outcomes.keys() & after.outcomes.keys())
    compared: dict[str, int] = {}
    top_changed, top10_changed, newly_pending, unpending = [], [], [], []
    crit_b: dict[str, float] = {}
    crit_a: dict[str, float] = {}
    for key in common:
        b, a = before.outcomes[key], after.outcomes[key]
        compared[key[0]] = compared.get(key[0], 0) + 1
        if (b.top[:1] or (None,))[0] != (a.top[:1] or (None,))[0]:
            top_changed.append(key)
        if set(b.top) != set(a.top):
            top10_changed.append(key)
        if b.status != "pending" and a.status == "pending":
            newly_pending.append(key)
        elif b.status == "pending" and a.status != "pending":
            unpending.append(key)
        for code, n in b.criteria.items():
            crit_b[code] = crit_b.get(code, 0) + n
        for code, n in a.criteria.items():
            crit_a[code] = crit_a.get(code, 0) + n
    return GridImpact(
        compared,
        top_changed,
        top10_changed,
        newly_pending,
        unpending,
        _table(_load(before, {"production", "analysis"}), _load(after, {"production", "analysis"}), "queue"),
        _table(_load(before, {"task"}), _load(after, {"task"}), "nucleus"),
        _table(crit_b, crit_a, "criteria"),
    )


def summary(im: GridImpact) -> dict[str, Any]:
    """Headline counts of an impact, for the page and reports."""
    return {
        "compared": dict(im.compared),
        "top_changed": len(im.top_changed),
        "top10_changed": len(im.top10_changed),
        "newly_pending": len(im.newly_pending),
        "unpending": len(im.unpending),
        "queues_shifted": int((im.queue_load["delta"] != 0).sum()),
        "nuclei_shifted": int((im.nucleus_load["delta"] != 0).sum()),
    }
