"""CPU-time buckets of task queues: a job's CPUTime rounded up to the first bucket, capped at the last."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# "restricted to 4 different values (500, 5000, 50000, 300000)" (seed 004)
SEED_BUCKETS: tuple[int, ...] = (500, 5000, 50000, 300000)
# TaskQueueDB.fitCPUTimeToSegments default when JobScheduling/taskQueueCPUTimeIntervals is not set
DIRAC_BUCKETS: tuple[int, ...] = (
    360, 1800, 3600, 21600, 43200, 86400, 172800, 259200, 345600, 518400, 691200, 864000, 1080000,
)  # fmt: skip


def fit_cpu_time(cpu_time: np.ndarray | Sequence[float] | float, buckets: Sequence[int]) -> np.ndarray:
    """The bucket of each CPU time: the first bucket >= it, or the last bucket when it exceeds them all.

    Usage: ``fit_cpu_time([10, 4000, 10**6], SEED_BUCKETS).tolist() == [500, 5000, 300000]``
    """
    edges = np.asarray(buckets, dtype=np.int64)
    values = np.asarray(cpu_time, dtype=np.float64)
    pos = np.searchsorted(edges, values, side="left")  # first edge >= value
    return edges[np.minimum(pos, len(edges) - 1)]
