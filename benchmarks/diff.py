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
from brokerage.gdpconfig import Config
from brokerage.synth import demo_snapshot

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
        inputs_changed=last.tables,
        explained_by_one_row=sum(1 for t in last.tasks if any(c.level == "row" for c in t.causes)),
    )
    if args.serial:
        t0 = time.perf_counter()
        diff_grids(old, new, config, client=None) if runs.configure(workers=0) is None else None
        out["serial_s"] = time.perf_counter() - t0
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
    if "serial_s" in out:
        print(f"in-process: {out['serial_s']:.2f} s")


if __name__ == "__main__":
    main()
