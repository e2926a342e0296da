"""How much input the demo grid's tasks hold: enough for each share to keep its running jobs busy (issue 30)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from brokerage.sim.setup import DEFAULT_BASE_WALLTIME_S, DEFAULT_CPU_EFFICIENCY
from brokerage.sim.state import MIN_WALL_S

# a share's tasks hold this many hours of its running jobs' work: a week, as long as the simulator's default
# arrival window (new tasks arrive at the share's live tasks per 168 h), so arrivals keep the work topped up
WORK_HOURS = 168.0


def job_hours(
    cputime: np.ndarray,
    cores: np.ndarray,
    cpueff: np.ndarray,
    basewall: np.ndarray,
    events_per_job: np.ndarray,
    inv_corepower: np.ndarray,
) -> np.ndarray:
    """Hours one job of each task runs in the simulator (``brokerage.sim.setup`` and ``jobgen``): baseWalltime
    (600 s when unset) + cputime x events per job / (cores x cpuEfficiency) / the queue's corepower, here its
    mean 1 / corepower INV_COREPOWER over the queues the task's share runs at; cpuEfficiency 0: baseWalltime
    only; at least the simulator's shortest job (MIN_WALL_S).

    Usage: ``job_hours(np.array([10.0]), np.array([1]), np.array([90]), np.array([0]), np.array([3240]),
    np.array([0.1]))`` -> ``[1.1667]`` (600 s + 10 x 3240 / 0.9 / 10 HS06 = 4,200 s)
    """
    eff = np.where(np.isnan(cpueff.astype(float)), DEFAULT_CPU_EFFICIENCY, cpueff) / 100.0
    base = np.where(basewall > 0, basewall, DEFAULT_BASE_WALLTIME_S)
    n_cores = np.where(cores == 0, 8, np.maximum(cores, 1))
    cpu_s = np.where(eff > 0, cputime * events_per_job / (n_cores * np.where(eff > 0, eff, 1.0)), 0.0)
    return np.maximum(base + cpu_s * inv_corepower, MIN_WALL_S) / 3600.0


def work_scale(
    gshare: np.ndarray, hours: np.ndarray, events_per_job: np.ndarray, running: Mapping[str, float]
) -> Callable[[np.ndarray], np.ndarray]:
    """A function from each task's events left to its input's growth factor: per share, max(1, RUNNING x
    WORK_HOURS / the job hours its tasks hold), job hours being jobs left (events left / EVENTS_PER_JOB) x the
    hours one of its jobs runs (HOURS, ``job_hours``). A share without running jobs keeps its input.

    Usage: ``work_scale(np.array(["A"]), np.array([8.0]), np.array([100]), {"A": 10.0})(np.array([800]))``
    -> ``[26.25]`` (10 running x 168 h over 8 jobs x 8 h)
    """
    share = np.asarray(gshare, dtype=object)

    def scale(events_left: np.ndarray) -> np.ndarray:
        held = np.maximum(events_left, 0) / np.maximum(events_per_job, 1) * hours
        k = np.ones(len(share))
        for name, r in running.items():
            mine = share == name
            total = float(held[mine].sum())
            if r > 0 and total > 0:
                k[mine] = max(1.0, r * WORK_HOURS / total)
        return k

    return scale
