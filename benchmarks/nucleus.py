"""Benchmark task (nucleus) brokerage: 1,000 assigning tasks in one broker_many call on the demo grid; prints medians."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brokerage.brokers import nucleus, nucleus_context
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests.reference import nucleus_reference

N_TASKS = 1000
DEMO_TASKS = 4500  # about a quarter of the demo's tasks are production tasks still without a nucleus


def demo_grid(n_tasks: int) -> tuple[GridSnapshot, str]:
    """The demo grid (brokerage.synth.demo) with enough assigning tasks, else a generated grid from tests/builders."""
    try:
        from brokerage.synth.demo import demo_snapshot
    except ImportError:
        return builder_grid(n_tasks), "tests/builders grid (brokerage.synth.demo not available)"
    return demo_snapshot(seed=0, queues=700, tasks=DEMO_TASKS), f"demo_snapshot(seed=0, queues=700, tasks={DEMO_TASKS})"


def builder_grid(n_tasks: int) -> GridSnapshot:
    """20 nuclei and 680 satellite queues, N_TASKS tasks to assign and as many running ones (fallback grid)."""
    import random

    from tests.builders import dataset, endpoint, grid, queue, replica, site, task

    rng = random.Random(0)
    nuclei = [f"NUC{i:02d}" for i in range(20)]
    sats = [f"SAT{i:03d}" for i in range(100)]
    sites = [site(n) for n in nuclei] + [site(s, role="satellite") for s in sats]
    eps = [endpoint(f"{s['site_name']}_DATADISK", s["site_name"], space_free=rng.uniform(9e4, 9e5)) for s in sites]
    queues = [queue(f"Q{n}_{k}", n, corecount=rng.choice((1, 8)), maxrss=32000) for n in nuclei for k in range(2)]
    queues += [queue(f"Q{s}_{k}", s) for s in sats for k in range(7)][: 700 - len(queues)]
    tasks, datasets, replicas = [], [], []
    for tid in range(1, 2 * n_tasks + 1):
        assigned = tid > n_tasks
        tasks.append(
            task(
                tid,
                nucleus=rng.choice(nuclei) if assigned else None,
                status="running" if assigned else "assigning",
                currentpriority=rng.choice((300, 500, 700, 900)),
                cputime=rng.uniform(10, 300),
                corecount=rng.choice((1, 1, 8)),
            )
        )
        datasets.append(dataset(tid, tid, nevents=rng.randint(10**4, 10**7), size_gb=100.0, nfiles=100))
        for ep in rng.sample(eps, 2):
            replicas.append(replica(tid, tid, ep["ddm_endpoint_name"], size_gb=100.0, nfiles=100))
    return grid(queues, tasks, sites=sites, ddm_endpoints=eps, datasets=datasets, dataset_replicas=replicas)


def assigning_tasks(snap: GridSnapshot, limit: int) -> list[int]:
    """Production tasks without a nucleus (what task brokerage assigns), lowest ids first."""
    t = snap.tasks
    ids = t[(t["prodsourcelabel"] != "user") & t["nucleus"].isna()]["jeditaskid"]
    return sorted(int(i) for i in ids)[:limit]


def time_batch(
    snap: GridSnapshot, ids: list[int], config: Config, repeat: int, cold: bool, cache: GridCache | None = None
) -> list[float]:
    """Milliseconds of one broker_many call over IDS, REPEAT times; COLD rebuilds every per-snapshot array, else the
    arrays in CACHE are reused."""
    out = []
    for _ in range(repeat):
        target = snap.replace() if cold else snap
        t0 = time.perf_counter()
        nucleus.broker_many(target, ids, config, seed=0, cache=None if cold else cache)
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def main() -> None:
    """Run the benchmark and print a short table or JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    parser.add_argument("--reference", type=int, default=None, help="tasks timed with the scalar reference")
    args = parser.parse_args()
    repeat = 2 if args.quick else 5
    n_ref = args.reference if args.reference is not None else (2 if args.quick else 10)
    config = Config()
    snap, source = demo_grid(N_TASKS)
    ids = assigning_tasks(snap, N_TASKS)
    cache = GridCache(snap)
    nucleus.broker_many(snap, ids[:5], config, cache=cache)  # build the per-snapshot arrays once, as a service would
    warm = statistics.median(time_batch(snap, ids, config, repeat, cold=False, cache=cache))
    cold = statistics.median(time_batch(snap, ids, config, repeat, cold=True))
    decisions = nucleus.broker_many(snap, ids, config, seed=0)
    result: dict[str, Any] = {
        "grid": source,
        "queues": len(snap.queues),
        "nuclei": nucleus_context.nucleus_arrays(cache).n,
        "tasks": len(ids),
        "repeat": repeat,
        "cold_ms": round(cold, 1),
        "warm_ms": round(warm, 1),
        "per_task_ms": round(cold / max(len(ids), 1), 3),
        "assigned": sum(d.status == "ok" for d in decisions),
        "pending": sum(d.status == "pending" for d in decisions),
    }
    if n_ref > 0:
        t0 = time.perf_counter()
        nucleus_reference.broker_many(snap, ids[:n_ref], config, seed=0)
        per_ref = (time.perf_counter() - t0) * 1000.0 / n_ref
        result["reference_per_task_ms"] = round(per_ref, 1)
        result["ratio"] = round(per_ref / result["per_task_ms"], 1)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"grid: {result['grid']} ({result['queues']} queues, {result['nuclei']} nuclei)")
    print(f"nucleus brokerage of {result['tasks']} assigning tasks in one broker_many call (median of {repeat}):")
    print(f"  cold (per-snapshot arrays rebuilt): {result['cold_ms']:>9} ms  ({result['per_task_ms']} ms per task)")
    print(f"  warm (same snapshot object)       : {result['warm_ms']:>9} ms")
    print(f"  assigned {result['assigned']}, pending {result['pending']}")
    if "ratio" in result:
        print(f"  scalar reference: {result['reference_per_task_ms']} ms per task ({result['ratio']}x slower)")


if __name__ == "__main__":
    main()
