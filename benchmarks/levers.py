"""Levers for one queue of one task (brokerage explain), every queue of the demo grid in turn; medians."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brokerage.brokers.router import run_job_brokerage
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.waiting import waiting_task_ids
from brokerage.synth.demo import demo_snapshot
from brokerage.whatif.levers import explain_queue

TARGET_MS = 50.0


def pick_task(snap: Any, cache: GridCache) -> int:
    """The production task (among the first 300 waiting) whose queues are removed by the most different filters."""
    best = (-1, 0)
    for tid in waiting_task_ids(snap)[:300]:
        d = run_job_brokerage(snap, tid, Config(), cache=cache)
        if d.broker == "production":
            best = max(best, (len({s.stage for s in d.skipped}), tid))
    return best[1]


def main() -> None:
    """Print the median time to explain one queue, over every queue, and per kind of standing."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queues", type=int, default=700)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    snap = demo_snapshot(seed=0, queues=args.queues)
    cache = GridCache(snap)
    tid = pick_task(snap, cache)
    times: list[float] = []
    with_levers: list[float] = []  # queues that got at least one lever: the ones that brokered again
    by_kind: dict[str, list[float]] = {}
    levers = 0
    for q in snap.queues["panda_queue"].tolist():
        t0 = time.perf_counter()
        e = explain_queue(snap, tid, q, Config(), cache=cache)
        dt = (time.perf_counter() - t0) * 1000
        times.append(dt)
        levers += len(e.levers)
        if e.levers:
            with_levers.append(dt)
        kind = e.status if e.status != "skipped" else f"skipped by the {e.blocking[0]['stage']}"
        by_kind.setdefault(kind, []).append(dt)
    out = {
        "task": tid,
        "queues": len(times),
        "levers_printed": levers,
        "median_ms": statistics.median(times),
        "p90_ms": statistics.quantiles(times, n=10)[-1],
        "max_ms": max(times),
        "queues_with_levers": len(with_levers),
        "median_with_levers_ms": statistics.median(with_levers) if with_levers else None,
        "by_kind": {k: {"queues": len(v), "median_ms": statistics.median(v)} for k, v in by_kind.items()},
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"task {tid}, {out['queues']} queues, {levers} verified levers printed in all")
    print(
        f"levers for one queue: median {out['median_ms']:.2f} ms, p90 {out['p90_ms']:.1f} ms, max {out['max_ms']:.0f} ms "
        f"(target median <= {TARGET_MS:.0f} ms)"
    )
    if with_levers:
        print(f"  the {len(with_levers)} queues with at least one lever: median {out['median_with_levers_ms']:.2f} ms")
    for k, v in sorted(out["by_kind"].items(), key=lambda kv: -kv[1]["median_ms"]):
        print(f"  {k:<42} {v['queues']:>4} queues  median {v['median_ms']:.2f} ms")


if __name__ == "__main__":
    main()
