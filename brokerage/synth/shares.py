"""Global shares and JEDI work queues of the demo grid: the share names and the job states counted per share,
each share's usage, the share tree, the work queues and each queue's slots (``gshares``, ``work_queues``,
``queue_slots``)."""

from __future__ import annotations

from typing import Any

import numpy as np

PROD_SHARES = (
    "MC Simulation",
    "MC Event Generation",
    "MC Reconstruction",
    "Data Derivations",
    "Reprocessing",
    "MC Merging",
    "Express",
    "Validation",
)
ANAL_SHARES = ("User Analysis", "Express Analysis", "Group Analysis")
SHARES = PROD_SHARES + ANAL_SHARES
ANAL_P = (0.85, 0.05, 0.10)  # how analysis work splits over ANAL_SHARES
COUNT_STATUSES = ("running", "activated", "assigned", "starting", "defined", "transferring")
USER_STATUSES = ("running", "activated", "assigned", "starting", "defined")
S = {s: i for i, s in enumerate(COUNT_STATUSES)}
_SHARE_USAGE = {  # near 100: the grid runs at its pledges, so the fair-share dispatch keeps it as it is
    "User Analysis": 92.0,  # above USAGE_THROTTLE_CLASS_C (90) and below ..._B (95): class C tasks are throttled
    "Express Analysis": 97.0,
    "Group Analysis": 98.0,
    "MC Simulation": 104.0,
    "MC Event Generation": 97.0,
    "MC Reconstruction": 96.0,
    "Data Derivations": 103.0,
    "Reprocessing": 98.0,
    "MC Merging": 99.0,
    "Express": 95.0,
    "Validation": 97.0,
}

# JEDI work queues of the demo: two Resource queues JobGenerator runs on their own (the throttler's named
# exceptions "Reprocessing default" and "Heavy Ion"), then per label ordered queues ending in a catch-all.
_WORK_QUEUES = (
    (1, "Reprocessing default", "managed", 1, "processingType = 'reprocessing'", {}, "Resource"),
    (2, "Heavy Ion", "managed", 2, "processingType = :pt AND workingGroup = 'AP_HI'", {":pt": "simul"}, "Resource"),
    (3, "evgen", "managed", 10, "processingType IN ('evgen')", {}, ""),
    (4, "simul and pileup", "managed", 11, "processingType IN ('simul', 'pile')", {}, ""),
    (5, "derivations", "managed", 12, "processingType LIKE 'deriv%'", {}, ""),
    (6, "managed", "managed", 100, "", {}, ""),
    (7, "group analysis", "user", 10, "workingGroup IS NOT NULL", {}, ""),
    (8, "user analysis", "user", 100, "", {}, ""),
)
# every share's work queue is throttled: one left alone (throttled='N') queues all its tasks' input as activated jobs
# when the step-4 caps keep the 3 best queues (seeds 001, 003), 93,000 of Express' on a 60-queue grid (issue 30)
_UNTHROTTLED_SHARES: tuple[str, ...] = ()


def share_usage(rng: np.random.Generator) -> list[float]:
    """Usage (percent of pledge) of every share in SHARES, jittered by 3%; User Analysis exactly as set."""
    jitter = rng.uniform(0.97, 1.03, len(SHARES))
    return [
        _SHARE_USAGE[g] if g == "User Analysis" else round(_SHARE_USAGE[g] * j, 1)
        for g, j in zip(SHARES, jitter, strict=True)
    ]


def _gshares(running: np.ndarray, usage: list[float]) -> dict[str, Any]:
    """The share tree: Production and Analysis branches, each leaf's value its fraction of the running jobs.

    The simulator weighs a share's executing jobs against its pledge (its fraction of all executing jobs: it
    counts jobs where PanDA counts HS06), and the fair-share dispatch serves the most under-pledged branch, then
    leaf, first: a grid at its pledges in job counts stays where it is, while one drawn off them moves every
    free slot of a unified queue to the branch below its pledge (issue 30: values of running / usage left the
    Analysis branch 3,200 jobs under its pledge on a 150-queue grid, and its smallest share, Express Analysis,
    took the slots: +400 % in 12 h). USAGE (the HS06 usage PanDA reports, which the analysis brokerage's
    throttle reads) is kept as drawn.
    """
    pledge = running.sum(axis=0).astype(float)
    leaf = np.round(100.0 * pledge / max(pledge.sum(), 1e-9), 3)
    n_prod = len(PROD_SHARES)
    branches = (("Production", float(leaf[:n_prod].sum())), ("Analysis", float(leaf[n_prod:].sum())))
    names = [b for b, _ in branches] + list(SHARES)
    return {
        "gshare": np.array(names, dtype=object),
        "usage_perc": np.array([100.0, 100.0, *usage]),
        "parent": np.array(["", "", *(["Production"] * n_prod), *(["Analysis"] * len(ANAL_SHARES))], dtype=object),
        "value": np.array([round(v, 2) for _, v in branches] + leaf.tolist()),
        "throttled": np.array([n not in _UNTHROTTLED_SHARES for n in names]),
    }


def _work_queues() -> dict[str, Any]:
    """The work queues above as columns."""
    cols = list(zip(*_WORK_QUEUES, strict=True))
    return {
        "queue_id": np.array(cols[0]), "queue_name": np.array(cols[1], dtype=object),
        "queue_type": np.array(cols[2], dtype=object), "vo": np.array(["atlas"] * len(_WORK_QUEUES), dtype=object),
        "queue_order": np.array(cols[3]), "criteria": np.array(cols[4], dtype=object), "variables": list(cols[5]),
        "queue_function": np.array(cols[6], dtype=object), "status": np.array(["active"] * len(_WORK_QUEUES), dtype=object),
    }  # fmt: skip


def shares_and_slots(
    queue_names: np.ndarray, jc: np.ndarray, numslots: Any, usage: list[float]
) -> dict[str, dict[str, Any]]:
    """The share tree, the work queues and each queue's slots (its running jobs, or Harvester numSlots when
    larger), from the job counts JC (queue, share, status)."""
    running = jc[:, :, S["running"]]
    slots_published = np.nan_to_num(np.asarray(numslots, dtype=float), nan=0.0)
    slots = {"panda_queue": queue_names, "nslots": np.maximum(running.sum(axis=1), slots_published).astype(np.int64)}
    return {"gshares": _gshares(running, usage), "work_queues": _work_queues(), "queue_slots": slots}
