"""Benchmark the crosscheck: N random grids (and optionally the demo grid's waiting tasks) through PanDA's brokers
and ours; prints the time per grid and, per broker, ours vs PanDA's time per brokerage and the agreement.

usage: python benchmarks/crosscheck.py [--grids 1000] [--seed 1] [--demo] [--json]
Needs PanDA's code (scripts/panda.sh); PanDA's times are measured inside its own process around doBrokerage.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brokerage.crosscheck.generator import random_grid
from brokerage.crosscheck.panda import PandaMissing, find_panda
from brokerage.crosscheck.run import Report, crosscheck
from brokerage.model.gdpconfig import Config

BATCH = 100  # grids per PanDA subprocess


def _summary(report: Report, seconds: float, grids: int) -> dict[str, Any]:
    d = report.to_dict(with_tasks=False)
    return {
        "grids": grids,
        "seconds": round(seconds, 2),
        "seconds_per_grid": round(seconds / max(grids, 1), 4),
        "phases": d["seconds"],
        "brokers": {
            b: {
                k: t[k]
                for k in (
                    "tasks",
                    "tasks_identical_pct",
                    "verdicts_agree_pct",
                    "weights_agree_pct",
                    "ours_ms_per_task",
                    "jedi_ms_per_task",
                )
            }
            for b, t in d["brokers"].items()
        },
    }


def random_grids(n: int, seed: int, brokers: tuple[str, ...]) -> dict[str, Any]:
    env = find_panda()
    started = time.perf_counter()
    merged: Report | None = None
    for first in range(0, n, BATCH):
        grids = [(random_grid(seed + i), Config()) for i in range(first, min(n, first + BATCH))]
        r = crosscheck(grids, env, brokers)
        if merged is None:
            merged = r
        else:
            merged.grids += r.grids
            merged.comparisons += r.comparisons
            for c in r.comparisons:
                merged.totals[c.broker].add(c)
            for k, v in r.seconds.items():
                merged.seconds[k] = merged.seconds.get(k, 0.0) + v
    assert merged is not None
    return _summary(merged, time.perf_counter() - started, n)


def demo(brokers: tuple[str, ...]) -> dict[str, Any]:
    from brokerage.synth.demo import demo_snapshot

    snap = demo_snapshot(seed=0)
    started = time.perf_counter()
    r = crosscheck([(snap, Config())], find_panda(), brokers)
    return _summary(r, time.perf_counter() - started, 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--grids", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--brokers", default="prod,nucleus")
    ap.add_argument("--demo", action="store_true", help="also the demo grid's waiting tasks (slow: one big grid)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    brokers = tuple(args.brokers.split(","))
    try:
        out = {"random": random_grids(args.grids, args.seed, brokers)}
        if args.demo:
            out["demo"] = demo(brokers)
    except PandaMissing as exc:
        sys.exit(f"benchmarks/crosscheck.py: {exc}")
    if args.json:
        print(json.dumps(out, indent=1))
        return
    for name, s in out.items():
        print(
            f"{name}: {s['grids']} grid(s) in {s['seconds']} s ({s['seconds_per_grid']} s per grid); phases {s['phases']}"
        )
        for b, t in s["brokers"].items():
            print(f"  {b}: {t['tasks']} tasks; per brokerage ours {t['ours_ms_per_task']} ms, PanDA {t['jedi_ms_per_task']} "
                  f"ms; verdicts agree {t['verdicts_agree_pct']}%, tasks identical {t['tasks_identical_pct']}%")  # fmt: skip


if __name__ == "__main__":
    main()
