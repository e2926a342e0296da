"""nRunning as the job brokers count it: running jobs, bootstrapped by batch jobs, numSlots and starting jobs."""

from __future__ import annotations

import numpy as np

RULES = np.array(["running", "nBatchJob bootstrap", "numSlots", "starting (numSlots=0)"], dtype=object)


def effective_running(
    rreal: np.ndarray, nbatchjob: np.ndarray, numslots: np.ndarray, starting: np.ndarray, cap: float
) -> tuple[np.ndarray, np.ndarray]:
    """nRunning = the largest of Rreal, min(nBatchJob, 20) when bootstrapping, numSlots > 0, nStarting when numSlots = 0.

    Returns the value and which rule gave it.
    Usage: ``effective_running(np.array([3.0]), np.array([50.0]), np.array([np.nan]), np.array([0.0]), 20)``
    """
    boot = np.where((rreal < cap) & (nbatchjob > rreal), np.minimum(nbatchjob, cap), -np.inf)
    slots = np.where(numslots > 0, numslots, -np.inf)
    start = np.where(numslots == 0, starting, -np.inf)
    stack = np.vstack([rreal, boot, slots, start])
    which = np.argmax(stack, axis=0)
    return stack.max(axis=0), RULES[which]
