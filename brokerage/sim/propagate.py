"""A job's end and what it does to its input (propagateResultToJEDI, jedi-lifecycle.md §4.2): the one way every
agent ends jobs (Adder, datasetManager, copyArchive, PostProcessor, task commands)."""

from __future__ import annotations

import numpy as np

from brokerage.sim import retrymodule
from brokerage.sim.state import Files, SimState


def end_jobs(state: SimState, rows: np.ndarray, status: str) -> None:
    """Final status STATUS for ROWS (checked against the job machine), counted per queue, share and task, and the
    file bookkeeping of §4.2: finished -> file finished; failed or closed -> attemptNr + 1 (failedAttempt + 1 only
    when failed, after the retry module acted on the error), back to ready while attempts are left.

    Usage: ``end_jobs(state, rows, "closed")``
    """
    if len(rows) == 0:
        return
    state.move_jobs(rows, status)
    j = state.jobs
    by_queue, by_share = state.ended["closed" if status == "cancelled" else status]
    np.add.at(by_queue, j["computingSite"][rows], 1)
    np.add.at(by_share, j["gshare"][rows], 1)
    if status in ("finished", "failed"):
        tids_all = j["jediTaskID"][rows]
        known = tids_all[tids_all >= 0]
        if len(known):
            np.add.at(state.jobs_finished if status == "finished" else state.jobs_failed, state.task_rows(known), 1)
    fid = j["fileID"][rows]
    mine = fid >= 0
    fid, tids = fid[mine], j["jediTaskID"][rows][mine]
    if len(fid) == 0:
        return
    f = state.files
    if status == "finished":
        f.status[fid] = Files.FINISHED
        state.count_files(tids, "nFilesFinished")
        return
    if status == "failed":
        retrymodule.on_failed(state, rows[mine])
    f.attemptNr[fid] += 1
    if status == "failed":
        f.failedAttempt[fid] += 1
    again = (f.attemptNr[fid] < f.maxAttempt[fid]) & (f.failedAttempt[fid] < f.maxFailure[fid])
    f.status[fid] = np.where(again, Files.READY, Files.FAILED)
    state.count_files(tids[~again], "nFilesFailed")
    for tid, u in zip(tids[again].tolist(), fid[again].tolist(), strict=True):
        state.retry_pool.setdefault(int(tid), []).append(int(u))
