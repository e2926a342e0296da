"""Fingerprint of a simulator run: hashes of the result JSON, the event log and the job table (results must not move)."""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _digest(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode() + str(a.dtype).encode() + a.tobytes())
    return h.hexdigest()[:16]


def main() -> None:
    """Run one simulation and print its fingerprint (one JSON line) with the CPU time and peak memory."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hours", type=float, default=6.0)
    parser.add_argument("--queues", type=int, default=700)
    parser.add_argument("--tasks", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dump", help="write the result JSON here")
    args = parser.parse_args()
    from brokerage.model.gdpconfig import Config
    from brokerage.sim.engine import Simulation
    from brokerage.synth.demo import demo_snapshot

    snap = demo_snapshot(seed=0, queues=args.queues, tasks=args.tasks)
    c0 = time.process_time()
    sim = Simulation(snap, Config(), seed=args.seed)
    c1 = time.process_time()
    sim.run(args.hours)
    c2 = time.process_time()
    result = sim.result()
    c3 = time.process_time()
    text = json.dumps(result, default=str, sort_keys=True)
    if args.dump:
        Path(args.dump).write_text(text)
    ev = sim.log.frame()
    events = {c: ev[c].to_numpy().astype(str) if ev[c].dtype.name == "category" else ev[c].to_numpy() for c in ev}
    jobs = {k: sim.jobs[k] for k in sim.jobs.cols}
    print(json.dumps({
        "result": hashlib.sha256(text.encode()).hexdigest()[:16], "events": _digest(events), "jobs": _digest(jobs),
        "n_events": len(ev), "n_jobs": sim.jobs.n, "cpu_setup": round(c1 - c0, 1), "cpu_run": round(c2 - c1, 1),
        "cpu_output": round(c3 - c2, 1), "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
