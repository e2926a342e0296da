"""Queue status: only online queues take jobs unless the task pre-assigned them (-status)."""

from __future__ import annotations

import numpy as np

from brokerage import grid
from brokerage.framework import Verdict

ONLINE = "online"


def status_verdict(qa: grid.QueueArrays, waived: np.ndarray | None = None) -> Verdict:
    """Queues whose status is not online fail, except those in WAIVED (pre-assigned queues).

    Usage: ``status_verdict(grid.queue_arrays(cache)).passed``
    """
    status = qa["status"]
    ok = status == ONLINE
    if waived is not None:
        ok = ok | waived
    return Verdict(ok, "-status", lambda idx: [f"status={s}" for s in status[idx].tolist()])
