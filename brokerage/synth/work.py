"""How much input the demo grid's tasks hold: enough for each share to keep its running jobs busy (issue 30)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from brokerage.synth.task_needs import JOB_HOURS

# a share's tasks hold this many hours of its running jobs' work: a week, as long as the simulator's default
# arrival window (new tasks arrive at the share's live tasks per 168 h), so arrivals keep the work topped up
WORK_HOURS = 168.0


def work_scale(
    gshare: np.ndarray, user: np.ndarray, events_per_job: np.ndarray, running: Mapping[str, float]
) -> Callable[[np.ndarray], np.ndarray]:
    """A function from each task's events left to its input's growth factor: per share, max(1, RUNNING x
    WORK_HOURS / the job hours its tasks hold), job hours being jobs left (events left / EVENTS_PER_JOB) x the
    jobs' target walltime (JOB_HOURS, managed or user). A share without running jobs keeps its input.

    Usage: ``work_scale(np.array(["A"]), np.array([False]), np.array([100]), {"A": 10.0})(np.array([800]))``
    -> ``[26.25]`` (10 running x 168 h over 8 jobs x 8 h)
    """
    hours = np.where(user, JOB_HOURS["user"], JOB_HOURS["managed"])
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
