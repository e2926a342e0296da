"""Whole-grid runs on Dask: one edit's grid impact, a 10x grid and a sweep, serial vs an embedded cluster; medians."""

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

from brokerage import runs
from brokerage.brokers import batch
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.synth.demo import demo_snapshot
from brokerage.whatif import impact

EDIT = {"NQUEUED_SAT_CAP": 300}  # the tuning benchmark's edit: production and task brokerage re-run
SWEEP = [50, 100, 150, 200, 300, 500, 1000, 2000]  # NQUEUED_SAT_CAP values


def median_s(fn: Callable[[], Any], repeat: int) -> tuple[float, list[float]]:
    """Median wall time of FN over REPEAT runs, and every time."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def impact_case(snap: GridSnapshot, client: Any, repeat: int) -> dict[str, Any]:
    """One edit's whole-grid impact (rerun_grid over the stored config's run), serial vs cluster."""
    base_cfg = Config()
    cache = GridCache(snap)
    base = batch.run_grid_serial(snap, base_cfg, cache=cache)
    cfg = base_cfg.with_overrides(EDIT)

    def serial() -> batch.GridRun:
        return impact.rerun_grid(snap, base, base_cfg, cfg, cache=cache)

    def cluster() -> batch.GridRun:
        return impact.rerun_grid(
            snap, base, base_cfg, cfg, cache=cache, run_with=lambda *a, **k: runs.run_grid(*a, client=client, **k)
        )

    assert serial().outcomes == cluster().outcomes  # also warms both sides
    s, _ = median_s(serial, repeat)
    c, _ = median_s(cluster, repeat)
    # the cluster's fixed cost per run: the same chunks with nothing to broker in them
    items = list(range(2 * 200))
    o, _ = median_s(lambda: runs.map_chunks(_noop, snap, items, client=client), repeat)
    return {"brokerages": serial().recomputed, "serial_s": s, "cluster_s": c, "overhead_s": o}


def _noop(snap: GridSnapshot, cache: GridCache, payload: Any, items: Any) -> int:
    return len(items)


def big_case(client: Any, repeat: int) -> dict[str, Any]:
    """Every waiting task of a 10x demo grid brokered, serial vs cluster."""
    snap = demo_snapshot(seed=0, tasks=30000)
    cfg = Config()
    cache = GridCache(snap)
    first = batch.run_grid_serial(snap, cfg, cache=cache)
    assert runs.run_grid(snap, cfg, client=client).outcomes == first.outcomes
    s, _ = median_s(lambda: batch.run_grid_serial(snap, cfg, cache=cache), repeat)
    c, _ = median_s(lambda: runs.run_grid(snap, cfg, cache=cache, client=client), repeat)
    return {"waiting_tasks": len(first.outcomes), "brokerages": first.recomputed, "serial_s": s, "cluster_s": c}


def sweep_case(snap: GridSnapshot, client: Any, repeat: int) -> dict[str, Any]:
    """A sweep of 8 NQUEUED_SAT_CAP values over the whole grid, serial vs one cluster job."""
    configs = [Config().with_overrides({"NQUEUED_SAT_CAP": v}) for v in SWEEP]
    cache = GridCache(snap)
    batch.run_grid_serial(snap, configs[0], cache=cache)
    s, _ = median_s(lambda: [batch.run_grid_serial(snap, c, cache=cache) for c in configs], repeat)
    c, _ = median_s(lambda: runs.sweep(snap, configs, cache=cache, client=client), repeat)
    return {"configs": len(configs), "serial_s": s, "cluster_s": c}


def main() -> None:
    """Run the cases; print a table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-big", action="store_true", help="leave out the 10x grid")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs.configure(workers=args.workers)
    t0 = time.perf_counter()
    client = runs.get_client()
    out: dict[str, Any] = {"cluster_start_s": time.perf_counter() - t0, "workers": args.workers}
    snap = demo_snapshot(seed=0)
    out["impact"] = impact_case(snap, client, args.repeat)
    out["sweep"] = sweep_case(snap, client, max(1, args.repeat // 2))
    if not args.skip_big:
        out["big"] = big_case(client, max(1, args.repeat // 2))
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"embedded cluster, {args.workers} workers, started in {out['cluster_start_s']:.2f} s")
    for name in ("impact", "sweep", "big"):
        if name in out:
            r = out[name]
            extra = {k: v for k, v in r.items() if not k.endswith("_s")}
            ratio = r["serial_s"] / r["cluster_s"]
            print(f"{name:7s} serial {r['serial_s']:.3f} s  cluster {r['cluster_s']:.3f} s  ({ratio:.2f}x)  {extra}")
    print(f"cluster overhead per run (empty chunks): {out['impact']['overhead_s'] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
