"""Benchmark the crosscheck: N random grids and the demo grid's waiting tasks through PanDA's brokers and ours.

usage: python benchmarks/crosscheck.py [--grids 1000] [--seed 1] [--brokers prod,nucleus,anal] [--demo] [--json]

Prints the wall time per grid and, per broker: grids and tasks, the median and p95 time per grid (ours and PanDA's,
summed over that grid's tasks), the median time per brokerage (ours, PanDA's, their ratio) and the agreement.
The demo grid's tasks are those waiting for brokerage (``brokerage.model.waiting``, the set `brokerage report --all`
and the grid runs broker), crosschecked in chunks of ``--chunk`` tasks; ``--demo-tasks N`` keeps the first N
(highest priority first). Needs PanDA's code (scripts/panda.sh); PanDA's times are measured inside its own process
around each doBrokerage.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brokerage.crosscheck.compare import Totals
from brokerage.crosscheck.convert import grid_document
from brokerage.crosscheck.generator import random_grid
from brokerage.crosscheck.panda import PandaEnv, PandaMissing, find_panda, run_jedi
from brokerage.crosscheck.run import DEFAULT_BROKERS, compare_task, panda_config, select_tasks
from brokerage.model.cache import GridCache
from brokerage.model.errors import InputError
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.waiting import waiting_task_ids
from brokerage.synth.demo import demo_snapshot

BATCH = 100  # random grids per PanDA subprocess
DEMO_CHUNK = 100  # demo tasks per PanDA subprocess (PanDA needs up to seconds per demo brokerage)


@dataclass
class Bench:
    """Agreement totals and timings of one benchmark case: per grid (wall phases) and per brokerage (ms)."""

    brokers: tuple[str, ...]
    grids: int = 0
    phases: dict[str, float] = field(default_factory=lambda: {"convert": 0.0, "jedi_process": 0.0, "ours": 0.0})
    totals: dict[str, Totals] = field(default_factory=dict)
    ours_ms: dict[str, list[float]] = field(default_factory=dict)  # broker -> one entry per brokerage
    jedi_ms: dict[str, list[float]] = field(default_factory=dict)
    grid_ours_ms: dict[str, list[float]] = field(default_factory=dict)  # broker -> one entry per grid with its tasks
    grid_jedi_ms: dict[str, list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for b in self.brokers:
            self.totals[b], self.ours_ms[b], self.jedi_ms[b] = Totals(), [], []
            self.grid_ours_ms[b], self.grid_jedi_ms[b] = [], []


def run_batch(bench: Bench, grids: Sequence[tuple[GridSnapshot, Config]], env: PandaEnv, only=None) -> None:
    """Crosscheck GRIDS (one PanDA subprocess for all) into BENCH, as ``brokerage.crosscheck.run.crosscheck`` does,
    keeping each brokerage's and each grid's time; ONLY (task ids) restricts the tasks of every grid."""
    t0 = time.perf_counter()
    prepared = []
    for i, (snap, config) in enumerate(grids):
        cfg, cache = panda_config(config), GridCache(snap)
        tasks = [t for t in select_tasks(cache, bench.brokers) if only is None or int(t["jeditaskid"]) in only]
        prepared.append((cache, cfg, tasks, grid_document(cache, cfg, tasks, seed=bench.grids + i)))
    t1 = time.perf_counter()
    out = run_jedi(env, [p[3] for p in prepared], timeout=6 * 3600.0)
    t2 = time.perf_counter()
    bench.phases["convert"] += t1 - t0
    bench.phases["jedi_process"] += t2 - t1
    for (cache, cfg, tasks, _doc), result in zip(prepared, out["grids"], strict=True):
        per_grid = {b: [0.0, 0.0, 0] for b in bench.brokers}  # ours ms, PanDA ms, brokerages
        for task in tasks:
            for c in compare_task(cache, cfg, task, result):
                b = c.broker
                bench.totals[b].add(c)
                bench.ours_ms[b].append(c.ours.ms)
                bench.jedi_ms[b].append(c.jedi.ms)
                per_grid[b][0] += c.ours.ms
                per_grid[b][1] += c.jedi.ms
                per_grid[b][2] += 1
        for b, (ours, jedi, n) in per_grid.items():
            if n:
                bench.grid_ours_ms[b].append(ours)
                bench.grid_jedi_ms[b].append(jedi)
    bench.phases["ours"] += time.perf_counter() - t2
    bench.grids += len(grids)


def p95(values: Sequence[float]) -> float:
    """The 95th percentile (nearest rank) of VALUES."""
    s = sorted(values)
    return s[max(0, -(-95 * len(s) // 100) - 1)]


def summary(bench: Bench, seconds: float) -> dict[str, Any]:
    """The figures the benchmark prints: wall time per grid, per broker the times and the agreement."""
    out: dict[str, Any] = {
        "grids": bench.grids, "seconds": round(seconds, 2), "seconds_per_grid": round(seconds / max(bench.grids, 1), 4),
        "phases_s": {k: round(v, 2) for k, v in bench.phases.items()}, "load_average": [round(x, 1) for x in os.getloadavg()],
        "brokers": {},
    }  # fmt: skip
    for b in bench.brokers:
        t = bench.totals[b].to_dict()
        row: dict[str, Any] = {"grids": len(bench.grid_ours_ms[b]), "tasks": t["tasks"]}
        if t["tasks"]:
            ours, jedi = statistics.median(bench.ours_ms[b]), statistics.median(bench.jedi_ms[b])
            row |= {
                "grid_ms_median": {"ours": round(statistics.median(bench.grid_ours_ms[b]), 2),
                                   "jedi": round(statistics.median(bench.grid_jedi_ms[b]), 2)},
                "grid_ms_p95": {"ours": round(p95(bench.grid_ours_ms[b]), 2), "jedi": round(p95(bench.grid_jedi_ms[b]), 2)},
                "brokerage_ms_median": {"ours": round(ours, 3), "jedi": round(jedi, 3)},
                "ours_over_jedi": round(ours / jedi, 2) if jedi else None,
            }  # fmt: skip
        row |= {k: t[k] for k in ("tasks_identical_pct", "tasks_accepted_pct", "verdicts_agree_pct",
                                  "verdicts", "weights_agree_pct", "jedi_errors", "unmapped_tokens")}  # fmt: skip
        out["brokers"][b] = row
    return out


def random_grids(n: int, seed: int, brokers: tuple[str, ...], env: PandaEnv) -> dict[str, Any]:
    """N random grids (seeds SEED .. SEED+N-1, every task of each), BATCH grids per PanDA subprocess."""
    bench, started = Bench(brokers), time.perf_counter()
    for first in range(0, n, BATCH):
        run_batch(bench, [(random_grid(seed + i), Config()) for i in range(first, min(n, first + BATCH))], env)
        partial = json.dumps(summary(bench, time.perf_counter() - started))
        print(f"random: {bench.grids} / {n} grids: {partial}", file=sys.stderr, flush=True)
    return summary(bench, time.perf_counter() - started)


def demo(brokers: tuple[str, ...], env: PandaEnv, limit: int | None, chunk: int) -> dict[str, Any]:
    """The demo grid (seed 0): its tasks waiting for brokerage (at most LIMIT), CHUNK tasks per PanDA subprocess."""
    snap = demo_snapshot(seed=0)
    ids = waiting_task_ids(snap, limit)
    bench, started = Bench(brokers), time.perf_counter()
    for first in range(0, len(ids), chunk):
        run_batch(bench, [(snap, Config())], env, only=set(ids[first : first + chunk]))
        partial = json.dumps(demo_summary(bench, time.perf_counter() - started, min(first + chunk, len(ids))))
        print(
            f"demo: {min(first + chunk, len(ids))} / {len(ids)} waiting tasks: {partial}", file=sys.stderr, flush=True
        )
    return demo_summary(bench, time.perf_counter() - started, len(ids))


def demo_summary(bench: Bench, seconds: float, waiting: int) -> dict[str, Any]:
    """The demo grid's summary: one grid, so each broker's time per grid is its sum over all chunks (median = p95)."""
    out = summary(bench, seconds) | {"grids": 1, "seconds_per_grid": round(seconds, 2), "waiting_tasks": waiting}
    for row_broker, row in out["brokers"].items():
        if row["tasks"]:
            whole = {"ours": round(sum(bench.ours_ms[row_broker]), 2), "jedi": round(sum(bench.jedi_ms[row_broker]), 2)}
            row |= {"grids": 1, "grid_ms_median": whole, "grid_ms_p95": whole}
    return out


def print_case(name: str, s: dict[str, Any]) -> None:
    """One case as text: the wall time, then one line per broker."""
    head = f"{name}: {s['grids']} grid(s)" + (f", {s['waiting_tasks']} waiting tasks" if "waiting_tasks" in s else "")
    print(f"{head} in {s['seconds']} s ({s['seconds_per_grid']} s per grid; phases {s['phases_s']} s; "
          f"load average {s['load_average']})")  # fmt: skip
    for b, t in s["brokers"].items():
        if not t["tasks"]:
            print(f"  {b}: no task")
            continue
        gm, gp, m = t["grid_ms_median"], t["grid_ms_p95"], t["brokerage_ms_median"]
        print(f"  {b}: {t['grids']} grids, {t['tasks']} tasks; per grid median ours {gm['ours']} ms, PanDA {gm['jedi']} ms, "
              f"p95 ours {gp['ours']} ms, PanDA {gp['jedi']} ms; per brokerage median ours {m['ours']} ms, PanDA "
              f"{m['jedi']} ms, ratio {t['ours_over_jedi']}; tasks identical {t['tasks_identical_pct']}%, accepted "
              f"{t['tasks_accepted_pct']}%, verdicts agree {t['verdicts_agree_pct']}% of {t['verdicts']}, "
              f"PanDA errors {t['jedi_errors']}, unmapped tokens {len(t['unmapped_tokens'])}")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grids", type=int, default=1000, help="random grids (0: none)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the first random grid")
    ap.add_argument("--brokers", default=",".join(DEFAULT_BROKERS), help="comma-separated: prod, nucleus, anal")
    ap.add_argument(
        "--demo", action="store_true", help="also the demo grid's waiting tasks (slow: PanDA takes seconds)"
    )
    ap.add_argument("--demo-tasks", type=int, default=None, help="only the first N waiting tasks (highest priority)")
    ap.add_argument("--chunk", type=int, default=DEMO_CHUNK, help="demo tasks per PanDA subprocess")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    brokers = tuple(b for b in args.brokers.split(",") if b)
    bad = sorted(set(brokers) - set(DEFAULT_BROKERS))
    if bad or not brokers or args.grids < 0 or args.chunk < 1:
        sys.exit(f"benchmarks/crosscheck.py: --brokers takes {', '.join(DEFAULT_BROKERS)} (got {args.brokers}); "
                 "--grids >= 0, --chunk >= 1")  # fmt: skip
    try:
        env = find_panda()
        out = {"random": random_grids(args.grids, args.seed, brokers, env)} if args.grids else {}
        if args.demo:
            out["demo"] = demo(brokers, env, args.demo_tasks, args.chunk)
    except (PandaMissing, InputError) as exc:
        sys.exit(f"benchmarks/crosscheck.py: {exc}")
    if args.json:
        print(json.dumps(out, indent=1))
        return
    for name, s in out.items():
        print_case(name, s)


if __name__ == "__main__":
    main()
