"""Benchmark loading the default demo grid from SQLite (and PostgreSQL with --url); prints the median."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brokerage.store.database import make_engine
from brokerage.store.repository import load_snapshot, save_snapshot
from brokerage.store.schema import upgrade
from brokerage.synth.history import simulate_task_history
from brokerage.synth.with_history import demo_grid


def main() -> None:
    """Store the demo grid in a fresh database, then time load_snapshot REPEAT times."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--url", help="database URL to use instead of a temporary SQLite file (it is overwritten)")
    args = parser.parse_args()

    snap = demo_grid(seed=0)
    rows = sum(len(df) for df in snap.tables.values())
    start = time.perf_counter()
    simulate_task_history(snap.tables["tasks"], snap.taken_at, seed=0)
    simulate_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url or f"sqlite:///{Path(tmp) / 'bench.sqlite'}"
        engine = make_engine(url)
        upgrade(engine)
        start = time.perf_counter()
        save_snapshot(engine, snap)
        save_s = time.perf_counter() - start
        wall, cpu = [], []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            load_snapshot(engine)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        engine.dispose()
    print(f"demo grid: {len(snap.tables['queues'])} queues, {len(snap.tables['tasks'])} tasks, {rows} rows in all")
    print(f"simulate_task_history: {simulate_s:.3f} s   save_snapshot: {save_s:.3f} s")
    print(
        f"load_snapshot from {engine.dialect.name}: median {statistics.median(wall):.3f} s wall, "
        f"{statistics.median(cpu):.3f} s CPU (min {min(wall):.3f} s, {args.repeat} runs)"
    )


if __name__ == "__main__":
    main()
