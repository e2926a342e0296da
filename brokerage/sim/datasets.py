"""Dataset, file and event statuses of the simulated tasks (seed 003, jedi-lifecycle.md §6.5), with their counters."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.sim.jobs import STATUSES, S
from brokerage.sim.state import SimState

INPUT_FILE_STATUSES = ("ready", "running", "finished", "failed")  # picked lasts no time here: jobs are made at once
OUTPUT_FILE_STATUSES = ("defined", "running", "prepared", "finished", "failed")
EVENT_STATUSES = ("ready", "running", "finished", "done", "fatal")
FINAL_TASK = ("done", "finished", "failed", "broken", "aborted")
FAILED_TASK = ("failed", "broken", "aborted")
# a job's status -> the status of the output file it produces (seed 003's output file machine)
OUTPUT_OF_JOB = {
    **{s: "defined" for s in ("defined", "assigned", "activated", "throttled", "sent", "starting")},
    "running": "running", "holding": "prepared", "transferring": "prepared", "merging": "prepared",
    "finished": "finished", "failed": "failed", "cancelled": "failed", "closed": "failed",
}  # fmt: skip
# a job's status -> its events' status while the job holds its input (event service tasks)
EVENTS_OF_JOB = {"running": "running", "holding": "finished", "transferring": "done", "merging": "done"}


def input_status(task_status: str) -> str:
    """The master input dataset's status for a task in TASK_STATUS: defined until fed, ready while processed, then
    done / finished / failed as the task ends (§6.5).

    Usage: ``input_status("running") == "ready"``
    """
    if task_status in ("defined", "assigning"):
        return "defined"
    if task_status in FINAL_TASK:
        return "failed" if task_status in FAILED_TASK else task_status
    return "ready"


def output_status(task_status: str, jobs_made: int) -> str:
    """The output dataset's status: defined, ready (registered, no job yet), running (files being added), prepared
    (the task is finishing), done (failed for a failed task).

    Usage: ``output_status("running", 12) == "running"``
    """
    if task_status in ("defined", "assigning"):
        return "defined"
    if task_status in FINAL_TASK:
        return "failed" if task_status in FAILED_TASK else "done"
    if task_status in ("finishing", "passed", "prepared"):
        return "prepared"
    return "running" if jobs_made else "ready"


def dataset_counts(sim: SimState) -> pd.DataFrame:
    """Per task: its input dataset's status and files per status, its output dataset's status and files per
    status, and for event service tasks the events per status; each group adds up to its dataset's nFiles (nEvents).

    Usage: ``dataset_counts(sim).loc[42, "in_finished"]``
    """
    t, f, j = sim.tasks, sim.files, sim.jobs
    ids = t.index.to_numpy(np.int64)
    n_tasks = len(ids)
    pos_f = sim.task_rows(f.task) if f.n else np.zeros(0, np.int64)
    picked = np.zeros((n_tasks, 4), np.int64)
    np.add.at(picked, (pos_f, f.status.astype(np.int64)), 1)
    unpicked = t["nFiles"].to_numpy(np.int64) - picked.sum(axis=1)
    out = pd.DataFrame(index=t.index)
    status = t["status"].astype(str)
    out["in_status"] = status.map(input_status)
    out["in_nFiles"] = t["nFiles"].to_numpy(np.int64)
    out["in_ready"] = unpicked + picked[:, 0]
    for k, name in enumerate(INPUT_FILE_STATUSES[1:], start=1):
        out[f"in_{name}"] = picked[:, k]
    mine = j["jediTaskID"] >= 0
    pos_j = sim.task_rows(j["jediTaskID"][mine])
    job_status = j["jobStatus"][mine].astype(np.int64)
    by_status = np.zeros((n_tasks, len(STATUSES)), np.int64)
    np.add.at(by_status, (pos_j, job_status), 1)
    made = by_status.sum(axis=1)
    out["out_status"] = [output_status(s, int(m)) for s, m in zip(status, made, strict=True)]
    out["out_nFiles"] = made
    for name in OUTPUT_FILE_STATUSES:
        cols = [S[s] for s, o in OUTPUT_OF_JOB.items() if o == name]
        out[f"out_{name}"] = by_status[:, cols].sum(axis=1)
    _events(sim, out, pos_f, _holder_status(sim))
    return out


def _holder_status(sim: SimState) -> np.ndarray:
    """Per picked input unit, the status code of the live job that holds it (-1: none)."""
    j = sim.jobs
    holder = np.full(sim.files.n, -1, np.int64)
    live = sim.live[j["fileID"][sim.live] >= 0]
    holder[j["fileID"][live]] = j["jobStatus"][live]
    return holder


def _events(sim: SimState, out: pd.DataFrame, pos_f: np.ndarray, holder: np.ndarray) -> None:
    """Events per status for event service tasks: a unit's events follow the job that holds it (running ->
    running, holding -> finished, transferring/merging -> done), are done once it finished and fatal once it failed
    for good; everything else (not picked, back for a retry, in a queued job) is ready."""
    t, f = sim.tasks, sim.files
    per_unit = np.where(t["eventService"].to_numpy(bool), t["nEventsPerUnit"].to_numpy(np.int64), 0)
    unit_status = np.full(f.n, "ready", dtype=object)
    for job_status, ev in EVENTS_OF_JOB.items():
        unit_status[holder == S[job_status]] = ev
    unit_status[f.status == f.FINISHED] = "done"
    unit_status[f.status == f.FAILED] = "fatal"
    out["ev_nEvents"] = t["nFiles"].to_numpy(np.int64) * per_unit
    unpicked = out["in_nFiles"].to_numpy(np.int64) - np.bincount(pos_f, minlength=len(t))
    for name in EVENT_STATUSES:
        units = np.bincount(pos_f[unit_status == name], minlength=len(t)) + (unpicked if name == "ready" else 0)
        out[f"ev_{name}"] = units * per_unit
