"""Scout jobs and what JEDI learns from them: scout-derived ramCount and cpuTime, the exhausted checks (§5)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import rule

N_SCOUT_JOBS = 10  # nChunksForScout: a scouting task exposes 10 chunks; a scout job reads one input
N_SCOUTS_TO_ASSESS = 5  # seed 003: "Once the first 5 jobs are finished" the task's ramCount is set
EARLY_AVALANCHE_FRACTION = 0.5  # switch scout_assess_as_jedi: managed tasks with >= 50 % of scouts finished
SCOUT_PRIORITY = 901  # scouts run at max(901, task priority + 1)
MIN_NEW_JOBS_FOR_CHECKS = 20  # the exhausted checks run only when more than 20 jobs are still to come
RAM_THR_EXHAUSTED_MB = 4000  # RAM check: the old ramCount below 4 GB and the scouts' above it
WRONG_CPUTIME_FACTOR = 2.0  # SCOUT_WRONG_CPUTIME_THRESHOLD: scouts' cpuTime above twice the task's ...
WRONG_CPUTIME_EXEC_S = 24 * 3600.0  # ... with jobs running longer than 24 h
CPUTIME_MARGIN = 1.5  # the P95 cpuTime is scaled by 1.5


@dataclass(frozen=True)
class ScoutVerdict:
    """What the scouts of one task say: the new estimates, and the exhausted check that fired (or '')."""

    ram_count: int  # MB per core for MBPerCore tasks, else MB per job
    cpu_time: float  # HS06 s per event
    check: str  # "", "scout_ramCount", "scout_cpuTime"
    reason: str


def scout_priority(priority: float) -> float:
    """A scout job's priority: max(901, the task's + 1).

    Usage: ``scout_priority(500) == 901``
    """
    return max(float(SCOUT_PRIORITY), priority + 1)


def percentile(values: np.ndarray, rank: float) -> float:
    """JEDI's percentile: linear interpolation between the closest ranks.

    Usage: ``percentile(np.array([1.0, 2.0, 3.0, 4.0]), 75) == 3.25``
    """
    return float(np.percentile(values, rank, method="linear"))


def assess(
    config: Config,
    max_pss_mb: np.ndarray,
    cpu_per_event: np.ndarray,
    exec_s: np.ndarray,
    cores: int,
    per_core: bool,
    old_ram: float,
    old_cpu: float,
    new_jobs: int,
    base_ram: float = 0.0,
) -> ScoutVerdict:
    """The scouts' verdict from their finished jobs: ramCount as seed 003 sets it, "(max(maxpss)-baseramcount)/
    corecount" (per core for MBPerCore tasks, max(maxPSS) otherwise), or with switch scout_assess_as_jedi
    P<SCOUT_RAMCOUNT_RANK> of maxPSS (per core) x (100 + SCOUT_RAMCOUNT_MARGIN) / 100; cpuTime =
    P<SCOUT_CPUTIME_RANK> x 1.5; then, when more than 20 jobs are to come, the RAM and wrong-cpuTime exhausted
    checks (§5.3, §5.4).

    Usage: ``assess(Config(), pss, cpu, exec_s, 8, True, 2000, 100.0, 500).ram_count``
    """
    if rule(config, "scout_assess_as_jedi"):
        pss = max_pss_mb / cores if per_core else max_pss_mb
        margin = (100 + float(config["SCOUT_RAMCOUNT_MARGIN"])) / 100
        ram = int(percentile(pss, float(config["SCOUT_RAMCOUNT_RANK"])) * margin)
    else:
        top = float(max_pss_mb.max())
        ram = int((top - base_ram) / cores) if per_core else int(top)
    cpu = percentile(cpu_per_event, float(config["SCOUT_CPUTIME_RANK"])) * CPUTIME_MARGIN
    if new_jobs > MIN_NEW_JOBS_FOR_CHECKS:
        ram_mb = ram * cores if per_core else ram
        old_mb = old_ram * cores if per_core else old_ram
        if per_core and old_mb < RAM_THR_EXHAUSTED_MB < ram_mb:
            return ScoutVerdict(ram, cpu, "scout_ramCount", f"reason=scout_ramCount {ram_mb:.0f} MB > "
                                f"{RAM_THR_EXHAUSTED_MB} MB (was {old_mb:.0f} MB)")  # fmt: skip
        if old_cpu > 0 and cpu > WRONG_CPUTIME_FACTOR * old_cpu and float(exec_s.max()) > WRONG_CPUTIME_EXEC_S:
            return ScoutVerdict(ram, cpu, "scout_cpuTime", f"reason=scout_cpuTime {cpu:.1f} > {WRONG_CPUTIME_FACTOR:g} "
                                f"x {old_cpu:.1f} HS06 s/event with jobs over 24 h")  # fmt: skip
    return ScoutVerdict(ram, cpu, "", "")
