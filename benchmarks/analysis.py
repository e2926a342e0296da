"""Benchmark the analysis job broker and the Analysis Stabilizer on the demo grid; prints medians (ms)."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brokerage.brokers import analysis
from brokerage.brokers.stabilizer import stabilizer, stabilizer_grid
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests import builders as b
from tests.reference import analysis_reference

USER_SHARES = ("User Analysis", "Express Analysis")


def builders_grid(queues: int = 700, users: int = 300, tasks: int = 80, seed: int = 1) -> GridSnapshot:
    """A demo-sized grid from tests/builders (used when brokerage.synth.demo is not available)."""
    rng = random.Random(seed)
    sites = [f"SITE{i:03d}" for i in range(max(1, queues // 4))]
    qs, jc, uc = [], [], []
    names = [f"ANALY_{i:04d}" for i in range(queues)]
    user_names = [f"user{i:03d}" for i in range(users)]
    for name in names:
        qs.append(
            b.anal_queue(
                name,
                rng.choice(sites),
                type=rng.choice(("analysis", "analysis", "unified", "production")),
                corecount=rng.choice((1, 1, 8)),
                maxrss=rng.choice((16000, 32000)),
                site_class=rng.choice((None, -1, 0, 1)),
                trr=rng.choice((0.0, 5.0, 50.0)),
                nbatchjob=rng.choice((0, 10, 100)),
            )
        )
        for share in USER_SHARES:
            jc += b.counts(
                name, share, running=rng.randint(0, 2000), activated=rng.randint(0, 3000), starting=rng.randint(0, 50)
            )
        for user in rng.sample(user_names, 8):
            uc += b.user_counts(name, user=user, running=rng.randint(0, 200), activated=rng.randint(0, 400))
    ts = [
        b.anal_task(tid, username=rng.choice(user_names), task_class=rng.choice((-1, 0, 1, 2)), chunk_njobs=20)
        for tid in range(1, tasks + 1)
    ]
    return b.grid(qs, ts, job_counts=jc, user_job_counts=uc)


def demo_grid() -> tuple[GridSnapshot, str]:
    """The demo grid of brokerage.synth.demo when it exists, else a builders grid of the same size."""
    try:
        from brokerage.synth.demo import demo_snapshot
    except ImportError:
        return builders_grid(), "tests/builders grid (brokerage.synth.demo not available)"
    return demo_snapshot(seed=1), "brokerage.synth.demo.demo_snapshot(seed=1)"


def analysis_tasks(snap: GridSnapshot) -> list[int]:
    """Every analysis (prodsourcelabel user) task of the snapshot."""
    t = snap.tasks
    return [int(x) for x in t[t["prodsourcelabel"] == "user"]["jeditaskid"]]


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    """Median wall time of FN in milliseconds."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(out)


def main(argv: list[str] | None = None) -> int:
    """Print the benchmark figures as JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=40, help="analysis tasks to time")
    parser.add_argument("--reference", type=int, default=3, help="tasks to time with the scalar reference")
    args = parser.parse_args(argv)
    config = Config()
    t0 = time.perf_counter()
    snap, source = demo_grid()
    build_s = time.perf_counter() - t0
    cache = GridCache(snap)  # per-snapshot arrays, held as a long-running service holds them
    qa = views.queue_arrays(cache)
    n_anal = int(sum(t in ("analysis", "unified") for t in qa["type"]))
    ids = analysis_tasks(snap)
    if not ids:
        print(json.dumps({"error": f"no analysis task in {source}"}))
        return 1
    warm = ids[:3]
    for tid in warm:  # per-snapshot arrays, as a long-running service would have them
        analysis.broker(snap, tid, config, cache=cache)
    timed = ids[3 : 3 + args.tasks] or ids
    print(
        json.dumps({"grid": source, "queues": qa.n, "analysis_queues": n_anal, "snapshot_build_s": round(build_s, 2)})
    )

    cold, warm_times, statuses = [], [], {}
    for tid in timed:
        t1 = time.perf_counter()
        d = analysis.broker(snap, tid, config, cache=cache)
        d.to_dict()
        cold.append((time.perf_counter() - t1) * 1000.0)
        warm_times.append(median_ms(lambda tid=tid: analysis.broker(snap, tid, config, cache=cache).to_dict(), 3))
        statuses[d.status] = statuses.get(d.status, 0) + 1
    print(
        json.dumps(
            {
                "name": "analysis broker, one task (first call for the task, full explanation)",
                "median_ms": round(statistics.median(cold), 3),
                "tasks": len(timed),
                "statuses": statuses,
            }
        )
    )
    print(
        json.dumps(
            {
                "name": "analysis broker, one task (repeated call: per-task inputs cached)",
                "median_ms": round(statistics.median(warm_times), 3),
            }
        )
    )
    ref_ids = timed[: args.reference]
    ref_ms = statistics.median(
        median_ms(lambda tid=tid: analysis_reference.broker(snap, tid, config), 1) for tid in ref_ids
    )
    print(
        json.dumps(
            {
                "name": "scalar reference, one task",
                "median_ms": round(ref_ms, 1),
                "tasks": len(ref_ids),
                "ratio": round(ref_ms / statistics.median(cold), 1),
            }
        )
    )
    task = views.task_row(cache, timed[0])
    user, share = str(task.get("username") or ""), str(task.get("gshare") or "")
    print(
        json.dumps(
            {
                "name": "stabilizer(), one (user, gshare) over all queues",
                "median_ms": round(median_ms(lambda: stabilizer(cache, config, user, share), 20), 3),
            }
        )
    )

    def fresh_grid() -> int:
        # a new snapshot object each time, so per-share user aggregation is rebuilt (dashboard cold path)
        again = GridSnapshot(snap.tables, snap.taken_at, snap.snapshot_id, snap.version)
        return len(stabilizer_grid(GridCache(again), config))

    rows = len(stabilizer_grid(cache, config))
    print(
        json.dumps(
            {
                "name": "stabilizer_grid(), all (gshare, PQ, user) pairs",
                "rows": rows,
                "cached_ms": round(median_ms(lambda: stabilizer_grid(cache, config), 5), 2),
                "cold_ms": round(median_ms(fresh_grid, 3), 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
