"""The crosscheck: grids converted, PanDA's brokers run in their own venv, ours run in this process, compared.

Usage: ``report = crosscheck([(snap, Config())], find_panda()); report.totals["prod"].to_dict()``
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from brokerage.crosscheck import verdicts
from brokerage.crosscheck.compare import TaskComparison, Totals, compare
from brokerage.crosscheck.convert import grid_document
from brokerage.crosscheck.panda import PandaEnv, run_jedi
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import PANDA_104, PROFILE_KEY
from brokerage.model.pseudoqueues import task_resource_type
from brokerage.model.snapshot import GridSnapshot

DEFAULT_BROKERS = ("prod", "nucleus", "anal")
ANALYSIS_LABEL = "user"


def brokers_of(task: dict[str, Any], wanted: Sequence[str]) -> list[str]:
    """Which brokers a task goes through: analysis tasks the analysis broker; production tasks with a nucleus the
    job broker, without one the nucleus broker (JEDI's task broker takes only those)."""
    if task.get("prodsourcelabel") == ANALYSIS_LABEL:
        return [b for b in ("anal",) if b in wanted]
    if task.get("nucleus"):  # JEDI's job generator only brokers WORLD tasks that have a nucleus
        return [b for b in ("prod",) if b in wanted]
    return [b for b in ("nucleus",) if b in wanted]


def select_tasks(cache: GridCache, wanted: Sequence[str], limit: int | None = None) -> list[dict[str, Any]]:
    """Task rows to crosscheck, each with its ``brokers`` list (at most LIMIT tasks, in id order)."""
    out = []
    for tid in sorted(int(t) for t in cache.snap.tasks["jeditaskid"]):
        row = views.task_row(cache, tid)
        row["brokers"] = brokers_of(row, wanted)
        if row["brokers"]:
            out.append(row)
        if limit is not None and len(out) >= limit:
            break
    return out


def panda_config(config: Config) -> Config:
    """CONFIG under the panda-1.0.4 rule profile (both sides read the same gdpconfig values)."""
    return config.with_overrides({PROFILE_KEY: PANDA_104})


@dataclass
class Report:
    """Everything one crosscheck found."""

    panda_version: str
    profile: str
    grids: int = 0
    comparisons: list[TaskComparison] = field(default_factory=list)
    totals: dict[str, Totals] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    against: str = "PanDA"  # whose code the other side ran (DIRAC for `--brokers dirac`)

    def not_allowed(self) -> int:
        """Differences no allow-list entry covers, plus unmapped tokens and unknown PanDA errors (the CI lane's count).

        Usage: ``if report.not_allowed(): sys.exit(1)``
        """
        rows = sum(1 for c in self.comparisons for r in c.rows if r.differs and not r.allowed)
        errors = sum(t.errors for t in self.totals.values())
        return rows + errors + sum(sum(t.unmapped.values()) for t in self.totals.values())

    def to_dict(self, with_tasks: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "panda_version": self.panda_version, "against": self.against, "profile": self.profile, "grids": self.grids,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "brokers": {b: t.to_dict() for b, t in self.totals.items()},
        }  # fmt: skip
        if with_tasks:
            out["tasks"] = [c.to_dict() for c in self.comparisons]
        return out


def crosscheck(
    grids: Sequence[tuple[GridSnapshot, Config]],
    env: PandaEnv,
    brokers: Sequence[str] = DEFAULT_BROKERS,
    max_tasks: int | None = None,
) -> Report:
    """Crosscheck every (snapshot, config) of GRIDS: PanDA's brokers once for all grids, ours per task."""
    started = time.perf_counter()
    prepared = []
    for i, (snap, config) in enumerate(grids):
        cfg = panda_config(config)
        cache = cache_for(snap, None)
        tasks = select_tasks(cache, brokers, max_tasks)
        prepared.append((cache, cfg, tasks, grid_document(cache, cfg, tasks, seed=i)))
    convert_s = time.perf_counter() - started
    t0 = time.perf_counter()
    out = run_jedi(env, [p[3] for p in prepared])
    report = Report(out.get("panda_version", env.version), PANDA_104, len(grids))
    report.seconds = {"convert": convert_s, "jedi_process": time.perf_counter() - t0, "ours": 0.0}
    report.totals = {b: Totals() for b in brokers}
    for (cache, cfg, tasks, _doc), result in zip(prepared, out["grids"], strict=True):
        t1 = time.perf_counter()
        for task in tasks:
            for c in compare_task(cache, cfg, task, result):
                report.comparisons.append(c)
                report.totals[c.broker].add(c)
        report.seconds["ours"] += time.perf_counter() - t1
    return report


def compare_task(cache: GridCache, cfg: Config, task: dict[str, Any], result: dict[str, Any]) -> list[TaskComparison]:
    """One comparison per broker of TASK (a ``select_tasks`` row, its ``brokers`` set): ours under CFG against
    PanDA's answer in RESULT (one grid of ``run_jedi``'s output; its error stands for a task it did not reach).

    Usage: ``comparisons = compare_task(cache, cfg, task, out["grids"][0])``
    """
    tid = int(task["jeditaskid"])
    res = result.get("tasks", {}).get(str(tid), {})
    out = []
    for b in task["brokers"]:
        prefer = task_resource_type(task) if b == "prod" else None
        theirs = verdicts.jedi(res.get(b, {"error": result.get("error", "no result")}), b, prefer)
        out.append(compare(tid, b, verdicts.ours(cache, tid, b, cfg), theirs))
    return out
