"""Queue status: only online queues take jobs unless the task pre-assigned them (-status)."""

from __future__ import annotations

import numpy as np

from brokerage.framework import Verdict
from brokerage.model import views

ONLINE = "online"
STANDBY = "standby"


def status_verdict(qa: views.QueueArrays, waived: np.ndarray | None = None, standby: bool = False) -> Verdict:
    """Queues whose status is not online fail, except those in WAIVED (pre-assigned queues); STANDBY: standby passes
    too (rule switch ``standby_is_online``).

    Usage: ``status_verdict(views.queue_arrays(cache)).passed``
    """
    status = qa["status"]
    ok = (status == ONLINE) | (standby & (status == STANDBY))
    if waived is not None:
        ok = ok | waived
    return Verdict(ok, "-status", lambda idx: [f"status={s}" for s in status[idx].tolist()])
