"""datasetManager's finisher (jedi-lifecycle.md §3.6): transferring jobs whose outputs reached the nucleus end; those
whose outputs never came fail at the transfer timeout (seed 000: transtimehi / transtimelo days)."""

from __future__ import annotations

import numpy as np

from brokerage.model.profiles import rule
from brokerage.sim.propagate import end_jobs
from brokerage.sim.retry import SOURCE_CODE
from brokerage.sim.state import SimState

HIGH_PRIORITY = 800  # transferring jobs at this priority or above wait 1 h, the others 2 h
HIGH_WAIT_S, LOW_WAIT_S = 3600.0, 7200.0
# PanDA's hard-coded transfer timeouts (TRANSFER_TIMEOUT_HI_PRIORITY / _LO_PRIORITY), the seed profile's fallback
# where the queue leaves transtimehi / transtimelo unset
CODE_HI_D, CODE_LO_D = 2.0, 6.0
TRANSFER_TIMEOUT_CODE = 101  # taskBufferErrorCode: transfer timeout


def tick(state: SimState, now: float) -> None:
    """Transferring jobs past their transfer timeout fail (transfer_timeouts); the others whose outputs arrived
    (after 1 h at priority >= 800, else 2 h) are finished; output replicas are taken to arrive in that time.

    Usage: ``finisher.tick(state, state.now)``
    """
    j = state.jobs
    tr = state.live_rows("transferring")
    limit_d = transfer_timeouts(state, tr)
    since = np.where(np.isnan(j["endTime"][tr]), j["modificationTime"][tr], j["endTime"][tr])
    age_d = (now - since) / 86400.0
    late = age_d > limit_d
    if late.any():  # outputs not at the nucleus this long: they would have been finished at an earlier pass
        rows = tr[late]
        state.log.add(now, j["PandaID"][rows], "transferring", "failed", "transfer_timeout", age_d[late],
                      limit_d[late])  # fmt: skip
        j.cols["errorCode"][rows] = TRANSFER_TIMEOUT_CODE
        j.cols["errorSource"][rows] = SOURCE_CODE["taskbuffer"]
        end_jobs(state, rows, "failed")
        tr = tr[~late]
    wait = np.where(j["currentPriority"][tr] >= HIGH_PRIORITY, HIGH_WAIT_S, LOW_WAIT_S)
    done = tr[j["modificationTime"][tr] < now - wait]
    state.log.add(now, j["PandaID"][done], "transferring", "finished", "finisher",
                  (now - j["modificationTime"][done]) / 3600.0)  # fmt: skip
    end_jobs(state, done, "finished")


def transfer_timeouts(state: SimState, rows: np.ndarray) -> np.ndarray:
    """Days each transferring job of ROWS may wait for its outputs. Seed 000: "transtimehi days for transferring jobs
    with job.currentPriority>=800, while transtimelo days for transferring jobs with job.currentPriority<800" (the
    queue's CRIC values; unset: PanDA's 2 / 6 days); switch transfer_timeout_as_jedi: 2 days at priority >= 800
    for non-analysis jobs, else 6 days, whatever the queue says.

    Usage: ``transfer_timeouts(state, state.live_rows("transferring"))``
    """
    j = state.jobs
    high = j["currentPriority"][rows] >= HIGH_PRIORITY
    if rule(state.config, "transfer_timeout_as_jedi"):
        return np.where(high & (j["prodSourceLabel"][rows] != 1), CODE_HI_D, CODE_LO_D)
    cric = state.g.transtime_d[j["computingSite"][rows]]
    days = np.where(high, cric[:, 0], cric[:, 1])
    return np.where(np.isnan(days), np.where(high, CODE_HI_D, CODE_LO_D), days)
