"""Benchmark: simulated hours of the demo grid per wall-clock second, events per second and peak memory."""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    """Run the simulator on the demo grid (or a multiple of it) for --hours and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--scale", type=int, default=1, help="demo grid size multiple (700 queues, 3,000 tasks)")
    args = parser.parse_args()
    from brokerage.gdpconfig import Config
    from brokerage.sim.engine import Simulation
    from brokerage.synth import demo_snapshot

    snap = demo_snapshot(seed=0, queues=700 * args.scale, tasks=3000 * args.scale)
    t0 = time.perf_counter()
    sim = Simulation(snap, Config(), seed=0)
    t1 = time.perf_counter()
    sim.run(args.hours)
    t2 = time.perf_counter()
    result = sim.result()
    t3 = time.perf_counter()
    events = len(sim.log.frame())
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    h = result["headline"]
    print(
        f"demo grid x{args.scale}: {len(snap.queues)} queues, {len(snap.tasks)} tasks, {sim.jobs.n:,} jobs at the end"
    )
    print(f"{args.hours:g} simulated h: set-up {t1 - t0:.1f} s, run {t2 - t1:.1f} s, output {t3 - t2:.1f} s "
          f"(one core); {events:,} events, {events / (t2 - t1):,.0f} events/s; peak memory {peak_mb:,.0f} MB")  # fmt: skip
    print(f"jobs generated {h['jobs_generated']:,}, finished {h['jobs_finished']:,}, failed {h['jobs_failed']:,}, "
          f"closed {h['jobs_closed_reassigned']:,}; mean queued {h['mean_queued_minutes']:.1f} min")  # fmt: skip


if __name__ == "__main__":
    main()
