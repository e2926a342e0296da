"""The DIRAC crosscheck: grids converted, DIRAC's TaskQueueDB and Matcher run in DIRAC's venv, ours here, compared.

Usage: ``report = crosscheck_dirac([(snap, Config(), pilots)], find_dirac()); report.totals["dirac"].to_dict()``
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from brokerage.crosscheck.compare import Totals
from brokerage.crosscheck.dirac_compare import compare_pilot, compare_queues, their_queues
from brokerage.crosscheck.dirac_convert import grid_document
from brokerage.crosscheck.dirac_env import DiracEnv, run_tqdb
from brokerage.crosscheck.run import Report, panda_config
from brokerage.dirac.matcher import match, task_queues
from brokerage.model.cache import cache_for
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import PANDA_104
from brokerage.model.snapshot import GridSnapshot

BROKERS = ("dirac_tq", "dirac")
TASKS_PER_GRID = 1000  # a pilot's number in the report: grid * 1000 + its index


def dirac_config(config: Config) -> Config:
    """CONFIG as the crosscheck runs ours: the panda-1.0.4 profile (DIRAC's code where the seed differs), the
    TaskQueuesAgent's share priorities, and no matching delay (9.1.22's token buckets are not the snapshot's
    seconds-since-last-match; not compared)."""
    return panda_config(config).with_overrides({"DIRAC_TQ_PRIORITY": "shares", "DIRAC_CHECK_MATCHING_DELAY": False})


def crosscheck_dirac(grids: Sequence[tuple[GridSnapshot, Config, list[dict[str, Any]]]], env: DiracEnv) -> Report:
    """Crosscheck every (snapshot, config, pilots) of GRIDS: DIRAC once for all grids, ours per grid and pilot."""
    started = time.perf_counter()
    prepared = [(snap, dirac_config(cfg), pilots) for snap, cfg, pilots in grids]
    docs = [grid_document(snap, cfg, pilots) for snap, cfg, pilots in prepared]
    convert_s = time.perf_counter() - started
    t0 = time.perf_counter()
    out = run_tqdb(env, docs)
    report = Report(f"DIRAC {out.get('dirac_version', env.version)}", PANDA_104, len(grids), against="DIRAC")
    report.seconds = {"convert": convert_s, "dirac_process": time.perf_counter() - t0, "ours": 0.0}
    report.totals = {b: Totals() for b in BROKERS}
    for g, ((snap, cfg, pilots), result) in enumerate(zip(prepared, out["grids"], strict=True)):
        t1 = time.perf_counter()
        for c in compare_grid(g, snap, cfg, pilots, result):
            report.comparisons.append(c)
            report.totals[c.broker].add(c)
        report.seconds["ours"] += time.perf_counter() - t1
    return report


def compare_grid(g: int, snap: GridSnapshot, cfg: Config, pilots: list[dict[str, Any]], result: dict[str, Any]) -> list[Any]:  # fmt: skip
    """The task-queue comparison of grid G, then one comparison per pilot (DIRAC's error fails each of them)."""
    cache = cache_for(snap, None)
    t0 = time.perf_counter()
    tqs = task_queues(snap, cfg, cache)
    build_ms = 1000 * (time.perf_counter() - t0)
    if "error" in result:
        result = {"taskqueues": {}, "jobs": {}, "pilots": [{"status": "refused", "message": result["error"]}] * len(pilots),
                  "error": result["error"]}  # fmt: skip
    out = [compare_queues(g, tqs, result, (build_ms, 1000 * float(result.get("insert_seconds", 0.0))))]
    if "error" in result:
        out[0].jedi.error = result["error"]
    queues = their_queues(result)
    for i, (pilot, theirs) in enumerate(zip(pilots, result["pilots"], strict=True)):
        t1 = time.perf_counter()
        m = match(snap, pilot, cfg, cache=cache)
        c = compare_pilot(g * TASKS_PER_GRID + i, m, theirs, 1000 * (time.perf_counter() - t1), queues)
        if "error" in result:
            c.jedi.error = result["error"]
        out.append(c)
    return out
