"""The queue context: what every job broker's per-task context offers the shared queue checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from brokerage.framework import Reads
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.network import NETWORK_KEYS, NetworkWeights
from brokerage.model.pseudoqueues import task_resource_type
from brokerage.model.snapshot import GridSnapshot


def queue_view(cache: GridCache, task: dict[str, Any]) -> tuple[str | None, views.QueueArrays]:
    """The queues as TASK's brokerage sees them: unified queues as the pseudo queue of the task's resource type.

    Returns (view name for memo keys, None when no queue is unified; the queue arrays).
    Usage: ``view, qa = queue_view(cache, task)``
    """
    rtype = task_resource_type(task)
    qa = views.pseudo_queue_arrays(cache, rtype)
    return (None if qa is views.queue_arrays(cache) else rtype), qa


def queue_fields(
    cache: GridCache, task: dict[str, Any], config: Config, gshare: str | None, avail: dict[str, Any]
) -> dict[str, Any]:
    """The QueueContext fields every job broker fills alike: the task's view of the queues, endpoints, job counts
    of GSHARE and the task's VO (JEDI counts per VO) and the input AVAIL at each queue (``job_cores`` is set once
    the context exists).

    Usage: ``ProdContext(**queue_fields(cache, task, config, task.get("gshare"), avail), at_nucleus=...)``
    """
    view, qa = queue_view(cache, task)
    return {
        "cache": cache,
        "task": task,
        "config": config,
        "view": view,
        "qa": qa,
        "ep": views.endpoint_arrays(cache),
        "counts": views.job_counts(cache, gshare, views.task_vo(task)),
        "avail": avail,
        "job_cores": np.zeros(0),
    }


@dataclass(kw_only=True)
class QueueContext:
    """Arrays over every queue and the task's own numbers, for one task.

    Scalar facts (``priority``, ``scout``, ``nucleus``, ...) enter memo keys by value; the per-task arrays
    are listed in ``DEPENDS`` with what they are derived from, so a verdict reading them is keyed on that.
    ``wan_needed`` marks queues whose storage must also move files over WAN (None: no queue needs it).
    ``view`` names the pseudo-queue resource type the arrays show unified queues as (None: no unified queue).
    """

    DEPENDS: ClassVar[dict[str, Reads]] = {
        "counts": Reads(task=("gshare", "vo")),
        "job_cores": Reads(task=("corecount",)),
        "avail": Reads(task=("jeditaskid", "taskbrokeronmaster")),
    }

    cache: GridCache
    task: dict[str, Any]
    config: Config
    view: str | None = None
    qa: views.QueueArrays
    ep: views.EndpointArrays
    counts: dict[str, np.ndarray]
    avail: dict[str, Any]
    job_cores: np.ndarray
    at_nucleus: np.ndarray
    wan_needed: np.ndarray | None = None
    priority: int = 0
    scout: bool = False
    merge: bool = False
    any_core_needs_multi: bool = False
    es_high: bool = False  # event service jobs may use jobseed=eshigh queues (priority >= ES_HIGH_PRIORITY or scouts)
    alive: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    derived: dict[str, Any] = field(default_factory=dict)

    @property
    def snap(self) -> GridSnapshot:
        """The snapshot the arrays come from."""
        return self.cache.snap

    @property
    def n(self) -> int:
        """Number of queues."""
        return self.qa.n

    def names(self, idx: np.ndarray) -> np.ndarray:
        """Queue names of rows IDX."""
        return self.qa.name[idx]


@dataclass(kw_only=True)
class ProdContext(QueueContext):
    """The queue context of a production task: its nucleus (None in hint mode), network weights and flags."""

    DEPENDS: ClassVar[dict[str, Reads]] = {
        **QueueContext.DEPENDS,
        "at_nucleus": Reads(facts=("nucleus",)),
        "wan_needed": Reads(facts=("nucleus",)),
        "nw": Reads(config=NETWORK_KEYS, facts=("nucleus", "express")),
    }
    # what production_queues.make_context computes the scalar facts from: memo keys hold the facts' values, the
    # declarations of the filters reading them reach these keys through here (framework.declared_keys)
    MADE_FROM: ClassVar[dict[str, Reads]] = {
        "priority": Reads(task=("currentpriority",)),
        "scout": Reads(task=("is_scout",)),
        "merge": Reads(task=("is_merge",)),
        "express": Reads(config=("EXPRESS_PRIORITY",), task=("processingtype",), facts=("priority",)),
        "any_core_needs_multi": Reads(config=("HIGH_PRIO_MULTICORE",), facts=("priority", "scout")),
        "es_high": Reads(config=("ES_HIGH_PRIORITY",), facts=("priority", "scout")),
        "preassigned": Reads(task=("site",)),
    }

    nucleus: str | None = None
    preassigned: bool = False
    express: bool = False
    hint_mode: bool = False
    nw: NetworkWeights | None = None
