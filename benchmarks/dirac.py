"""Benchmark DIRAC task queues and matching: 1,000,000 waiting jobs -> 10,000 task queues; prints medians."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brokerage.dirac.matcher import match, task_queues
from brokerage.dirac.pilot import parse_pilot
from brokerage.dirac.taskqueues import build_task_queues
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import empty_snapshot, frame
from tests.reference import dirac_reference as ref

SITES = [f"LCG.SITE{i:02d}.org" for i in range(40)]
PLATFORMS = ["x86_64-el9", "x86_64-el8", "aarch64-el9"]
GROUPS = ["lhcb_user", "lhcb_mc", "lhcb_data", "gridpp_user"]
PILOT = "Site=LCG.SITE03.org,CPUTime=60000,Platform=x86_64-el9,NumberOfProcessors=8,MaxRAM=16000"


def jobs_frame(n_jobs: int, n_profiles: int, seed: int = 0) -> pd.DataFrame:
    """N_JOBS waiting jobs over N_PROFILES distinct requirement sets (so N_PROFILES task queues when none fills)."""
    rng = np.random.default_rng(seed)
    p = np.arange(n_profiles)
    user, variant = p // 5, p % 5
    cpu_top = np.array([400, 4000, 40000, 250000, 250000])[variant]
    platform = np.where(variant == 4, PLATFORMS[1], PLATFORMS[0])

    def pool(k: int, make: Callable[[int], list[str]]) -> np.ndarray:
        out = np.empty(k, dtype=object)
        out[:] = [make(i) for i in range(k)]
        return out

    sites = pool(n_profiles, lambda i: [] if rng.random() < 0.6 else list(rng.choice(SITES, 2, replace=False)))
    banned = pool(n_profiles, lambda i: [] if rng.random() < 0.9 else [SITES[int(rng.integers(40))]])
    plats = pool(n_profiles, lambda i: [str(platform[i])])
    types = pool(n_profiles, lambda i: [["User", "MCSimulation", "DataReconstruction"][int(rng.integers(3))]])
    tags = pool(n_profiles, lambda i: [] if rng.random() < 0.8 else ["MultiProcessor", "8Processors"])
    ces = pool(n_profiles, lambda i: [] if rng.random() < 0.97 else ["ce1.site03.org"])
    prof = rng.integers(n_profiles, size=n_jobs)
    return pd.DataFrame({
        "JobID": np.arange(1, n_jobs + 1), "Owner": np.array([f"user{u:04d}" for u in user], dtype=object)[prof],
        "OwnerGroup": np.array(GROUPS, dtype=object)[user % 4][prof], "VO": "lhcb",
        "CPUTime": (cpu_top[prof] * rng.uniform(0.5, 1.0, n_jobs)).astype(np.int64),
        "Sites": sites[prof], "BannedSites": banned[prof], "GridCEs": ces[prof], "Platforms": plats[prof],
        "JobTypes": types[prof], "Tags": tags[prof], "Priority": rng.choice([0, 1, 1, 1, 3, 10], n_jobs),
        "Status": "Waiting",
    })  # fmt: skip


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    """Median wall time of FN over REPEAT runs, in ms."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    """Build, match, explain and compare with the scalar reference; print the medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--taskqueues", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    jobs = jobs_frame(args.jobs, args.taskqueues)
    shares = frame("dirac_group_shares", [{"OwnerGroup": "lhcb_mc", "JobShare": 3000.0, "JobSharing": True}])
    config = Config()
    build_ms = median_ms(lambda: build_task_queues(jobs, shares, config), 3)
    # the pilot's site has a running limit reached and a matching delay running (the Limiter's work is timed too)
    limits = frame("dirac_running_limits", [
        {"Site": "LCG.SITE03.org", "Attribute": "JobType", "Value": "MCSimulation", "Limit": 100},
        {"Site": "LCG.SITE03.org", "Attribute": "OwnerGroup", "Value": "lhcb_data", "Limit": 500},
    ])  # fmt: skip
    counts = frame("dirac_running_counts", [
        {"Site": "LCG.SITE03.org", "Attribute": "JobType", "Value": "MCSimulation", "Running": 150},
        {"Site": "LCG.SITE03.org", "Attribute": "OwnerGroup", "Value": "lhcb_data", "Running": 20},
    ])  # fmt: skip
    delays = frame("dirac_matching_delays", [
        {"Site": "LCG.SITE03.org", "Attribute": "Owner", "Value": "user0007", "Delay": 60, "SinceLastMatch": 10.0},
    ])  # fmt: skip
    snap = empty_snapshot().replace(dirac_jobs=jobs, dirac_group_shares=shares, dirac_running_limits=limits,
                                    dirac_running_counts=counts, dirac_matching_delays=delays)  # fmt: skip
    cache = GridCache(snap)
    tqs = task_queues(snap, config, cache)
    seeds = iter(range(10**9))
    match_ms = median_ms(lambda: match(snap, PILOT, config, seed=next(seeds), cache=cache), args.repeat)
    result = match(snap, PILOT, config, seed=0, cache=cache)
    json_ms = median_ms(lambda: json.dumps(match(snap, PILOT, config, seed=1, cache=cache).to_dict()), 3)

    # the scalar reference judges every task queue one by one (its rule loop; its O(n^3) exact probability
    # integral is left out: it is only usable for a few dozen queues)
    ref_tqs = [{**tqs.definition(i), "jobs": [None] * int(tqs.njobs[i])} for i in range(len(tqs))]
    for t in ref_tqs:
        for f in ref.MULTI:
            t[f] = frozenset(t[f])
    pilot = parse_pilot(PILOT)
    tables: dict[str, list[Any]] = {"dirac_group_shares": [{"OwnerGroup": "lhcb_mc", "JobSharing": True}]}
    for name in ("dirac_running_limits", "dirac_running_counts", "dirac_matching_delays"):
        tables[name] = snap.tables[name].to_dict("records")
    ref_ms = median_ms(lambda: [ref.failing_rules(t, pilot, tables, config) for t in ref_tqs], 3)
    eligible = int(result.eligible.sum())
    out = {
        "jobs": args.jobs,
        "taskqueues": len(tqs),
        "eligible": eligible,
        "drawn_from": int(result.drawn_from.sum()),
        "build_ms": round(build_ms, 1),
        "match_ms": round(match_ms, 3),
        "match_to_json_ms": round(json_ms, 1),
        "reference_rules_ms": round(ref_ms, 1),
        "ratio": round(ref_ms / match_ms, 1),
    }
    if args.json:
        print(json.dumps(out))
        return
    print(
        f"{out['jobs']:,} waiting jobs -> {out['taskqueues']:,} task queues: build {out['build_ms']} ms (median of 3)"
    )
    print(
        f"match one pilot, every queue's verdict, every failing rule (masks), funnel, probabilities of "
        f"{out['drawn_from']} drawable queues, the job: {out['match_ms']} ms (median of {args.repeat})"
    )
    print(f"same, rendered as JSON with a sentence per failing rule: {out['match_to_json_ms']} ms")
    print(f"scalar reference, failing rules of every queue: {out['reference_rules_ms']} ms -> ratio {out['ratio']}x")


if __name__ == "__main__":
    main()
