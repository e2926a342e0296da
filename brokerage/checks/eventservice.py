"""Event service: ES tasks need ES queues (eshigh only at high priority), others avoid ES-only queues."""

from __future__ import annotations

import numpy as np

from brokerage.checks.context import QueueContext
from brokerage.framework import Filter, Reads, Verdict


def f_eventservice(ctx: QueueContext) -> Verdict:
    """Event service settings: ES tasks need ES queues (eshigh only for high priority), others avoid es-only queues."""
    seed = ctx.qa["jobseed"]
    if ctx.task.get("eventservice"):
        high_prio = int(ctx.config["ES_HIGH_PRIORITY"])
        std = seed == "std"
        high_only = (seed == "eshigh") & (not ctx.es_high)
        codes = np.where(std, "-es", "-eshigh")
        texts = np.where(
            std, "event service task on a queue with jobseed=std", f"jobseed=eshigh needs priority >= {high_prio}"
        )
        return Verdict(~(std | high_only), codes, lambda idx: texts[idx].tolist())
    es = seed == "es"
    return Verdict(~es, "-nones", "non event service task on a queue with jobseed=es")


EVENTSERVICE = Filter(
    "event service check",
    ("-es", "-eshigh", "-nones"),
    "event service tasks need queues with jobseed es or all (eshigh only at ES_HIGH_PRIORITY or for scouts); "
    "other tasks avoid jobseed=es queues",
    f_eventservice,
    reads=Reads(config=("ES_HIGH_PRIORITY",), task=("eventservice",), facts=("es_high",)),
)
