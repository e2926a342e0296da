"""datasetManager's finisher (jedi-lifecycle.md §3.6): transferring jobs whose outputs reached the nucleus end."""

from __future__ import annotations

import numpy as np

from brokerage.sim.propagate import end_jobs
from brokerage.sim.state import SimState

HIGH_PRIORITY = 800  # transferring jobs at this priority or above wait 1 h, the others 2 h
HIGH_WAIT_S, LOW_WAIT_S = 3600.0, 7200.0


def tick(state: SimState, now: float) -> None:
    """Transferring jobs whose outputs arrived (after 1 h at priority >= 800, else 2 h) are finished; output
    replicas are taken to arrive in that time.

    Usage: ``finisher.tick(state, state.now)``
    """
    j = state.jobs
    tr = state.live_rows("transferring")
    wait = np.where(j["currentPriority"][tr] >= HIGH_PRIORITY, HIGH_WAIT_S, LOW_WAIT_S)
    done = tr[j["modificationTime"][tr] < now - wait]
    state.log.add(now, j["PandaID"][done], "transferring", "finished", "finisher",
                  (now - j["modificationTime"][done]) / 3600.0)  # fmt: skip
    end_jobs(state, done, "finished")
