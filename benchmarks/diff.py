"""Diff of two versions of the demo grid (a pull 10 minutes later) on the embedded Dask cluster; medians."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brokerage import runs
from brokerage.diff.attribute import diff_grids
from brokerage.diff.drift import later
from brokerage.model.gdpconfig import Config
from brokerage.synth.demo import demo_snapshot

TARGET_S = 10.0


def main() -> None:
    """Print the median time of a whole-grid diff with attribution, serial and on the cluster."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2, help="embedded cluster workers")
    ap.add_argument("--serial", action="store_true", help="also time the in-process diff")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    old = demo_snapshot(seed=0)
    new = later(old, seed=1)
    config = Config()
    out: dict[str, Any] = {"queues": len(old.queues), "tasks": len(old.tasks)}
    if args.serial:  # first, before the cluster exists: workers=0 keeps every step in this process
        runs.configure(workers=0)
        t0 = time.perf_counter()
        serial = diff_grids(old, new, config)
        out["serial_s"] = time.perf_counter() - t0
        out["serial_phases_s"] = serial.phases
    runs.configure(workers=args.workers)
    t0 = time.perf_counter()
    client = runs.get_client()
    out["cluster_start_s"] = time.perf_counter() - t0
    times = []
    last = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        last = diff_grids(old, new, config, client=client)
        times.append(time.perf_counter() - t0)
    assert last is not None
    out.update(
        cluster_s=statistics.median(times),
        cluster_times_s=times,
        compared=last.compared,
        changed=len(last.tasks),
        replays=last.replays,
        phases_s=last.phases,
        inputs_changed=last.tables,
        explained_by_one_row=sum(1 for t in last.tasks if any(c.level == "row" for c in t.causes)),
    )
    runs.close()
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"demo grid: {out['queues']} queues, {out['tasks']} tasks; the new version: {out['inputs_changed']}")
    print(f"embedded cluster of {args.workers} workers started in {out['cluster_start_s']:.2f} s (once)")
    print(
        f"diff with attribution: median {out['cluster_s']:.2f} s over {args.repeat} "
        f"({', '.join(f'{t:.2f}' for t in times)}), target <= {TARGET_S:.0f} s"
    )
    print(
        f"{out['changed']} of {out['compared']} brokerages changed, {out['replays']} replays, "
        f"{out['explained_by_one_row']} explained by one row group"
    )
    print("last run by step: " + ", ".join(f"{k} {v:.2f} s" for k, v in last.phases.items()))
    if "serial_s" in out:
        steps = ", ".join(f"{k} {v:.2f} s" for k, v in out["serial_phases_s"].items())
        print(f"in-process (workers=0): {out['serial_s']:.2f} s ({steps})")


if __name__ == "__main__":
    main()
