"""Benchmark: simulated hours of the demo grid per wall-clock second, events per second and peak memory."""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    """Run the simulator on the demo grid (or a multiple of it) for --hours and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--scale", type=int, default=1, help="demo grid size multiple (700 queues, 3,000 tasks)")
    parser.add_argument(
        "--sweep", type=int, default=0, help="N configs (THROTTLE_THRESHOLD 1.0, 1.5, ...): serial vs cluster"
    )
    parser.add_argument("--compare", action="store_true", help="stored vs a what-if, both at once on the cluster")
    parser.add_argument("--replay", type=int, default=0, help="time replaying the run until job N is final")
    parser.add_argument("--replicas", type=int, default=0, help="N replicas of stored vs a what-if on the cluster")
    args = parser.parse_args()
    if args.replicas:
        replicas(args)
        return
    if args.sweep or args.compare:
        sweep(args)
        return
    from brokerage.model.gdpconfig import Config
    from brokerage.sim.engine import Simulation
    from brokerage.synth.demo import demo_snapshot

    snap = demo_snapshot(seed=0, queues=700 * args.scale, tasks=3000 * args.scale)
    load = os.getloadavg()
    t0, c0 = time.perf_counter(), time.process_time()
    sim = Simulation(snap, Config(), seed=0)
    t1, c1 = time.perf_counter(), time.process_time()
    sim.run(args.hours, progress=_daily(t1, c1) if args.hours > 24 else None)
    t2, c2 = time.perf_counter(), time.process_time()
    result = sim.result()
    t3, c3 = time.perf_counter(), time.process_time()
    events = sim.log.n
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    h = result["headline"]
    print(
        f"demo grid x{args.scale}: {len(snap.queues)} queues, {len(snap.tasks)} tasks, {sim.jobs.n:,} jobs at the end"
    )
    print(f"{args.hours:g} simulated h: set-up {c1 - c0:.1f} s, run {c2 - c1:.1f} s, output {c3 - c2:.1f} s of CPU "
          f"(wall {t1 - t0:.1f} / {t2 - t1:.1f} / {t3 - t2:.1f} s; one core); {events:,} events, "
          f"{events / (c2 - c1):,.0f} events per CPU second; peak memory {peak_mb:,.0f} MB; load average "
          f"{load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")  # fmt: skip
    print(f"jobs generated {h['jobs_generated']:,}, finished {h['jobs_finished']:,}, failed {h['jobs_failed']:,}, "
          f"closed {h['jobs_closed_reassigned']:,}; mean queued {h['mean_queued_minutes']:.1f} min; "
          f"{len(sim.task_causes):,} task status changes, {h['memory_increases']:,} inputs given more memory")  # fmt: skip
    if args.replay:
        from brokerage.sim.replay import replay_job

        t4 = time.perf_counter()
        out = replay_job(snap, Config(), 0, args.hours, args.replay)
        made = int(sim.jobs["creationTime"][args.replay - 1] // 3600)
        print(f"replay of job {args.replay} (made in hour {made}, final at hour {out['replayed_to_h']:g}): "
              f"{time.perf_counter() - t4:.1f} s, {len(out['steps'])} steps")  # fmt: skip


def _daily(t0: float, c0: float) -> Callable[[int, int], None]:
    """A progress callback that prints each simulated day's CPU and wall time and the memory so far."""
    per_day = round(24 * 3600 / 60)  # ticks of one simulated day (the clock's step is 60 s)

    def report(done: int, total: int) -> None:
        if done % per_day == 0 or done == total:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"  day {done / per_day:.2f}: {time.process_time() - c0:.0f} s CPU, {time.perf_counter() - t0:.0f} s "
                  f"wall, peak memory {peak:,.0f} MB, load average {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip

    return report


def sweep(args: argparse.Namespace) -> None:
    """Several configs: one after the other in this process, then all at once on the embedded cluster."""
    from brokerage.model.gdpconfig import Config
    from brokerage.runs import engine
    from brokerage.sim.engine import Simulation
    from brokerage.sim.sweep import simulate_many
    from brokerage.synth.demo import demo_snapshot

    snap = demo_snapshot(seed=0, queues=700 * args.scale, tasks=3000 * args.scale)
    n = 2 if args.compare else args.sweep
    configs = [Config().with_overrides({"THROTTLE_THRESHOLD": 1.0 + 0.5 * i}) for i in range(n)]
    if args.compare:
        configs = [Config(), Config().with_overrides({"THROTTLE_THRESHOLD": 1.5})]
    client = engine.get_client()  # started before timing: the dashboard's cluster is already up
    workers = len(client.scheduler_info(n_workers=-1)["workers"])
    first: list[float] = []
    t0 = time.perf_counter()
    results = simulate_many(snap, configs, args.hours, progress=lambda d, t: first.append(time.perf_counter() - t0)
                            if not first and d > 0 else None)  # fmt: skip
    cluster_s = time.perf_counter() - t0
    print(f"{n} configs x {args.hours:g} simulated h on the embedded cluster ({workers} workers): {cluster_s:.1f} s; "
          f"first progress after {first[0] if first else float('nan'):.1f} s")  # fmt: skip
    if args.compare:
        a, b = results[0]["headline"], results[1]["headline"]
        print(f"finished {a['jobs_finished']:,} vs {b['jobs_finished']:,}; generated {a['jobs_generated']:,} vs "
              f"{b['jobs_generated']:,}")  # fmt: skip
        return
    t0 = time.perf_counter()
    for cfg in configs:
        Simulation(snap, cfg, seed=0).run(args.hours).result()
    serial_s = time.perf_counter() - t0
    print(f"serial in one process: {serial_s:.1f} s; cluster speed-up {serial_s / cluster_s:.2f}x")


def replicas(args: argparse.Namespace) -> None:
    """N replicas x 2 configs (stored, THROTTLE_THRESHOLD 1.5) on the embedded cluster: replicas per minute,
    simulated hours per second and the workers' peak memory."""
    from brokerage.model.gdpconfig import Config
    from brokerage.runs import engine
    from brokerage.sim.replicas import compare_plan
    from brokerage.sim.sweep import replicate
    from brokerage.synth.demo import demo_snapshot

    snap = demo_snapshot(seed=0, queues=700 * args.scale, tasks=3000 * args.scale)
    client = engine.get_client()  # started before timing: the dashboard's cluster is already up
    workers = len(client.scheduler_info(n_workers=-1)["workers"])
    plan = compare_plan(Config(), {"THROTTLE_THRESHOLD": 1.5})
    cpu0 = client.run(_cpu_s)
    t0 = time.perf_counter()
    doc = replicate(snap, plan, args.hours, args.replicas)
    wall = time.perf_counter() - t0
    cpu = sum(client.run(_cpu_s).values()) - sum(cpu0.values())
    peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    runs = args.replicas * len(plan.configs)
    load = os.getloadavg()[0]
    print(
        f"workers' CPU time {cpu:.0f} s = {cpu / runs:.1f} s per run; on {workers} otherwise idle cores 20 replicas "
        f"would take about {cpu / runs * 20 * len(plan.configs) / workers / 60:.1f} min (load average now {load:.1f})"
    )
    print(f"{args.replicas} replicas x {len(plan.configs)} configs x {args.hours:g} simulated h of the demo grid "
          f"x{args.scale} on the embedded cluster ({workers} workers): {wall:.1f} s = {wall / 60:.1f} min; "
          f"{args.replicas / wall * 60:.2f} replicas/min; {runs * args.hours / wall:.2f} simulated h/s; "
          f"worker peak memory {max(peaks.values()):,.0f} MB")  # fmt: skip
    real = [r["name"] for r in doc["measures"] if r["significant"]]
    print(f"real differences ({len(real)} of {len(doc['measures'])} measures): {', '.join(real) or 'none'}")


def _cpu_s() -> float:
    """This process's CPU seconds (user + system)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


if __name__ == "__main__":
    main()
