"""Benchmark the vectorised production job broker against the scalar reference; prints medians."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brokerage.brokers import production
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.synth.demo import demo_snapshot
from tests.reference import production_reference


def production_tasks(snap: GridSnapshot, limit: int) -> list[int]:
    """Production tasks waiting for job brokerage (with a nucleus), then any production task."""
    t = snap.tasks
    prod = t[t["prodsourcelabel"] != "user"]
    with_nucleus = prod[prod["nucleus"].notna()]
    ids = list(with_nucleus["jeditaskid"]) + list(prod[prod["nucleus"].isna()]["jeditaskid"])
    return [int(i) for i in ids[:limit]]


def warm(snap: GridSnapshot, config: Config) -> GridCache:
    """The snapshot's cache with the per-snapshot arrays built, as a long-running service holds it."""
    cache = GridCache(snap)
    views.queue_arrays(cache)
    views.endpoint_arrays(cache)
    for tid in production_tasks(snap, 3):
        production.broker(snap, tid, config, cache=cache)
    return cache


def time_each(fn: Callable[[int], Any], ids: list[int]) -> list[float]:
    """Milliseconds of FN for every task id."""
    out = []
    for tid in ids:
        t0 = time.perf_counter()
        fn(tid)
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def single_task_case(queues: int, n_engine: int, n_reference: int, config: Config) -> dict[str, Any]:
    """Median time of one task's brokerage (full explanation) over QUEUES queues."""
    snap = demo_snapshot(seed=1, queues=queues, tasks=max(n_engine, n_reference) + 50)
    cache = warm(snap, config)
    ids = production_tasks(snap, n_engine + 3)[3:]
    engine = statistics.median(time_each(lambda tid: production.broker(snap, tid, config, cache=cache).to_dict(), ids))
    ref_ids = ids[:n_reference]
    reference = statistics.median(time_each(lambda tid: production_reference.broker(snap, tid, config), ref_ids))
    return {
        "name": f"single task, {queues} queues",
        "queues": queues,
        "tasks": 1,
        "engine_ms": round(engine, 3),
        "engine_us_per_queue": round(engine * 1000.0 / queues, 3),
        "reference_ms": round(reference, 3),
        "ratio": round(reference / engine, 1),
        "samples": {"engine": len(ids), "reference": len(ref_ids)},
    }


def rerank_case(n_tasks: int, n_reference: int, config: Config) -> list[dict[str, Any]]:
    """Total time to re-rank N_TASKS tasks on 700 queues: the batch API, then one call per task.

    The reference is extrapolated from a sample. Each figure starts from a fresh snapshot, so neither
    inherits the other's per-task caches (replica availability, network weights).
    """
    cases = []
    for name, batch in (("re-rank", True), ("re-rank (loop)", False)):
        # about two thirds of demo tasks are production tasks
        snap = demo_snapshot(seed=2, queues=700, tasks=n_tasks * 3 // 2 + 300)
        cache = warm(snap, config)
        ids = production_tasks(snap, n_tasks)
        t0 = time.perf_counter()
        if batch:
            production.broker_many(snap, ids, config, cache=cache)
        else:
            for tid in ids:
                production.broker(snap, tid, config, cache=cache)
        engine = (time.perf_counter() - t0) * 1000.0
        if not cases:
            per_ref = statistics.median(
                time_each(lambda tid, s=snap: production_reference.broker(s, tid, config), ids[:n_reference])
            )
        reference = per_ref * len(ids)
        cases.append(
            {
                "name": f"{name} {len(ids)} tasks, 700 queues",
                "queues": 700,
                "tasks": len(ids),
                "engine_ms": round(engine, 1),
                "reference_ms": round(reference, 1),
                "ratio": round(reference / engine, 1),
                "samples": {"engine": len(ids), "reference": n_reference, "reference_extrapolated": True},
            }
        )
    return cases


def main() -> None:
    """Run every case and print a table or JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="fewer samples (for a smoke run)")
    args = parser.parse_args()
    config = Config()
    q = args.quick
    # the same number of tasks at every scale: later tasks reuse memoised per-value verdicts (software,
    # core count, ...), so unequal samples would mix warm and cold costs and distort the growth figure
    n = 10 if q else 60
    cases = [
        single_task_case(700, n, 5 if q else 30, config),
        single_task_case(5000, n, 3 if q else 10, config),
        single_task_case(50000, n, 1 if q else 3, config),
        *rerank_case(200 if q else 2000, 5 if q else 30, config),
    ]
    if args.json:
        print(json.dumps({"cases": cases}, indent=2))
        return
    print(f"{'case':<41} {'engine ms':>10} {'us/queue':>9} {'reference ms':>13} {'ratio':>7}")
    for c in cases:
        per_queue = c.get("engine_us_per_queue", "")
        print(f"{c['name']:<41} {c['engine_ms']:>10} {per_queue:>9} {c['reference_ms']:>13} {c['ratio']:>7}")


if __name__ == "__main__":
    main()
