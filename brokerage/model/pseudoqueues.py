"""Unified queues (CRIC capability ucore) seen through PanDA's pseudo queues, one per resource type."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

UNIFIED_CAPABILITY = "ucore"  # CRIC capability of a unified queue
ANY_CORE_AS = 8  # cores a corecount-0 (any-core) task counts as when its resource type is decided
RAM_COMPENSATION = 0.9  # the RAM per core that decides a resource type is compensated like the memory check's
PSEUDO_COLUMNS = ("corecount", "minrss", "maxrss")  # the queue columns a pseudo queue changes


@dataclass(frozen=True)
class ResourceType:
    """One row of PanDA's RESOURCE_TYPES table: core range and RAM-per-core range (MB), None = unbounded."""

    name: str
    mincore: int
    maxcore: int | None
    minrampercore: int | None
    maxrampercore: int | None

    def matches(self, cores: int, ram_per_core: float) -> bool:
        """Whether a job of CORES cores and RAM_PER_CORE MB per core is of this type.

        Usage: ``SCORE.matches(1, 1800.0)``
        """
        return (
            cores >= self.mincore
            and (self.maxcore is None or cores <= self.maxcore)
            and (self.minrampercore is None or ram_per_core >= self.minrampercore)
            and (self.maxrampercore is None or ram_per_core <= self.maxrampercore)
        )


SCORE = ResourceType("SCORE", 1, 1, None, 2000)
SCORE_HIMEM = ResourceType("SCORE_HIMEM", 1, 1, 2001, None)
MCORE = ResourceType("MCORE", 2, None, None, 2000)
MCORE_HIMEM = ResourceType("MCORE_HIMEM", 2, None, 2001, None)
RESOURCE_TYPES: dict[str, ResourceType] = {rt.name: rt for rt in (SCORE, MCORE, SCORE_HIMEM, MCORE_HIMEM)}


def task_resource_type(task: Mapping[str, Any]) -> str:
    """PanDA's resource type of a task from its corecount and RAM per core (JEDI_TASKS fields).

    corecount null counts as 1 core and 0 (any) as ANY_CORE_AS; RAM per core is (ramcount x cores +
    baseramcount) / cores for MBPerCore units, else (ramcount + baseramcount) / cores, times RAM_COMPENSATION.
    A value between two types' ranges (e.g. 2000.5 MB) falls back to the plain SCORE or MCORE.
    Usage: ``task_resource_type({"corecount": 1, "ramcount": 2000, "ramunit": "MBPerCore"}) == "SCORE"``
    """
    cc = task.get("corecount")
    cores = 1 if cc is None else ANY_CORE_AS if int(cc) == 0 else int(cc)
    ram = float(task.get("ramcount") or 0)
    base = float(task.get("baseramcount") or 0)
    total = ram * cores + base if str(task.get("ramunit") or "").startswith("MBPerCore") else ram + base
    per_core = total / cores * RAM_COMPENSATION
    for rt in RESOURCE_TYPES.values():
        if rt.matches(cores, per_core):
            return rt.name
    return SCORE.name if cores == 1 else MCORE.name


def pseudo_queue_columns(col: Mapping[str, np.ndarray], resource_type: str) -> dict[str, np.ndarray]:
    """Queue columns COL with every unified queue's corecount/minrss/maxrss replaced by its RESOURCE_TYPE pseudo queue.

    Arrays stay over all queues in the same order (names unchanged, so explanations name the unified queue);
    other columns are the same arrays. Pseudo queue: cores = max(1, corecount) clamped to the type's
    [mincore, maxcore]; minrss/maxrss scaled by pseudo cores / cores and bounded by the type's RAM per core.
    A unified queue with fewer cores than the type's mincore has no such pseudo queue: it keeps its own
    minrss/maxrss and max(1, corecount) cores, so a task needing a multi-core queue fails the core-count check.
    Usage: ``pseudo_queue_columns(queue_arrays(snap).col, "SCORE")["maxrss"]``
    """
    rt = RESOURCE_TYPES[resource_type]
    unified = np.asarray(col["capability"]) == UNIFIED_CAPABILITY
    out = dict(col)
    if not unified.any():
        return out
    cores = np.maximum(np.asarray(col["corecount"], dtype=float), 1.0)
    minrss = np.asarray(col["minrss"], dtype=float)
    maxrss = np.asarray(col["maxrss"], dtype=float)
    has_pseudo = cores >= rt.mincore
    pcores = cores if rt.maxcore is None else np.minimum(cores, float(rt.maxcore))
    pcores = np.maximum(pcores, float(rt.mincore))
    scale = pcores / cores
    if rt.minrampercore is None:
        pmin = np.maximum(minrss * scale, minrss)
    else:
        pmin = np.maximum(pcores * rt.minrampercore, minrss * scale)
    if rt.maxrampercore is None:
        pmax = np.minimum(maxrss * scale, maxrss)
    else:
        pmax = np.minimum(pcores * rt.maxrampercore, maxrss * scale)
    pseudo = unified & has_pseudo
    out["corecount"] = np.where(unified, np.where(has_pseudo, pcores, cores), col["corecount"])
    out["minrss"] = np.where(pseudo, pmin, col["minrss"])
    out["maxrss"] = np.where(pseudo, pmax, col["maxrss"])
    for name in PSEUDO_COLUMNS:
        out[name].flags.writeable = False  # shared by every task of this resource type
    return out
