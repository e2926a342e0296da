"""WatchDog (jedi-lifecycle.md §4.5, §6.1, §6.3): the task rules on their clocks (brokerage.sim.task_agent), the
progress-based actions (near-completion boost, failure-rate pause) and the paused tasks' throttled jobs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.sim import machines, task_agent
from brokerage.sim.jobs import IS_FINAL
from brokerage.sim.state import Files, SimState

BOOST_DONE_FRACTION, BOOST_MAX_REMAINING_JOBS, BOOST_PRIORITY = 0.95, 100, 900.0  # the near-completion boost
EXPRESS = "Express"
MIN_JOBS_TO_PAUSE, MIN_REMAINING_JOBS_TO_PAUSE = 1000, 100  # the failure-rate pause applies to big tasks only


def tick(state: SimState, now: float) -> None:
    """The task rules due now (pending, exhausted, throttling, final status), each change checked against the task
    machine, then the progress-based actions and the paused tasks' jobs.

    Usage: ``watchdog.tick(state, state.now)``
    """
    f = state.files
    # the task rules read only the units still in play (ready or running): the others are left out here already
    open_ = np.flatnonzero(f.status <= Files.RUNNING)
    files = pd.DataFrame({
        "jediTaskID": f.task[open_], "failedAttempt": f.failedAttempt[open_], "attemptNr": f.attemptNr[open_],
        "status": np.array(["ready", "running", "finished", "failed"], dtype=object)[f.status[open_]],
    })  # fmt: skip
    tids = state.jobs["jediTaskID"][state.live]
    tids = tids[(tids >= 0) & ~IS_FINAL[state.jobs["jobStatus"][state.live]]]
    per_task = pd.Series(tids).value_counts(sort=False).sort_index()  # hashed: np.unique sorted 800,000 ids
    per_task = pd.Series(per_task.to_numpy(np.int64), index=per_task.index.to_numpy(np.int64))
    tasks, changes = task_agent.step(state.tasks, files, per_task, now, state.config)
    moves = [(int(tid), old, new, f"{rule}: {cause}") for tid, old, new, rule, cause in zip(
        changes["jediTaskID"], changes["from"], changes["to"], changes["rule"], changes["cause"], strict=True)]  # fmt: skip
    for tid, old, new, why in moves:
        machines.check_task_moves([(tid, old, new)], why)
    state.tasks = tasks
    for tid, old, new, why in moves:
        state.log.add(now, np.array([tid]), old, new, "task")
        state.task_causes.append((now, tid, old, new, why))
    progress_actions(state, now)
    throttle_paused(state, now)


def progress_actions(state: SimState, now: float) -> None:
    """AtlasProdWatchDog's progress-based actions (§6.3) on running production tasks: near completion (95 % of
    the inputs done, at most 100 jobs left) the priority goes to 900 and the share to Express, for the task and
    its jobs; with MAX_JOB_FAILURE_RATE_TO_PAUSE set, a task of 1000+ jobs with 100+ to come whose ended jobs
    failed at that rate or more is paused.

    Usage: ``progress_actions(state, state.now)``
    """
    t = state.tasks
    run = t.index[((t["status"] == "running") & (t["prodSourceLabel"] != "user") & (t["nFiles"] > 0)).to_numpy()]
    if len(run) == 0:
        return
    sub = t.loc[run]
    pos = state.task_rows(run.to_numpy(np.int64))
    n_jobs = pd.Series(state.jobs_made[pos], index=run)
    fin = pd.Series(state.jobs_finished[pos], index=run)
    bad = pd.Series(state.jobs_failed[pos], index=run)
    done_files = sub["nFilesFinished"] + sub["nFilesFailed"]
    rem_jobs = ((sub["nFiles"] - done_files) * n_jobs / sub["nFiles"]).astype(int)
    near = (done_files / sub["nFiles"] >= BOOST_DONE_FRACTION) & (rem_jobs <= BOOST_MAX_REMAINING_JOBS)
    for tid in sub.index[near.to_numpy()].tolist():
        boost(state, int(tid), int(rem_jobs[tid]), float(done_files[tid] / sub.at[tid, "nFiles"]))
    for tid in sub.index[
        (~near & (n_jobs >= MIN_JOBS_TO_PAUSE) & (rem_jobs >= MIN_REMAINING_JOBS_TO_PAUSE)).to_numpy()
    ]:
        limit = state.config.get(f"MAX_JOB_FAILURE_RATE_TO_PAUSE_{t.at[tid, 'workQueue']}")
        limit = limit if limit is not None else state.config["MAX_JOB_FAILURE_RATE_TO_PAUSE"]
        ended_n = int(fin[tid] + bad[tid])
        rate = bad[tid] / ended_n if ended_n else 0.0
        if limit is not None and ended_n and rate >= float(limit):
            state.move_tasks(pd.Index([tid]), "paused", f"WatchDog: failure rate {rate:.2f} of {ended_n} ended "
                             f"jobs >= MAX_JOB_FAILURE_RATE_TO_PAUSE {float(limit):g}")  # fmt: skip


def boost(state: SimState, tid: int, rem_jobs: int, done: float) -> None:
    """Priority 900 (task and live jobs) and, for a task of a global share's queue, the Express share.

    Usage: ``boost(state, 42, 4, 0.96)``
    """
    t, j = state.tasks, state.jobs
    share = str(t.at[tid, "gshare"])
    to_express = share != EXPRESS and t.at[tid, "workQueue"] == share and EXPRESS in state.si
    if t.at[tid, "currentPriority"] >= BOOST_PRIORITY and not to_express:
        return  # boosted at an earlier pass: nothing to change (and no scan of the live jobs)
    live = state.live[j["jediTaskID"][state.live] == tid]
    why = f"{done:.0%} of inputs done, {rem_jobs} jobs left"
    if t.at[tid, "currentPriority"] < BOOST_PRIORITY:
        t.at[tid, "currentPriority"] = BOOST_PRIORITY
        j.cols["currentPriority"][live] = BOOST_PRIORITY
        b, c, k, lab, _p = state.static[tid]
        state.static[tid] = (b, c, k, lab, BOOST_PRIORITY)
        state.note_task(tid, f"WatchDog: priority -> 900 ({why})")
    if to_express:
        t.at[tid, "gshare"] = t.at[tid, "workQueue"] = EXPRESS
        pos = state.task_rows(np.array([tid]))
        state.task_s[pos], state.task_w[pos] = state.si[EXPRESS], state.wi[EXPRESS]
        state.set_share(live, state.si[EXPRESS], state.wi[EXPRESS])
        state.note_task(tid, f"WatchDog: share {share} -> Express ({why})")


def throttle_paused(state: SimState, now: float) -> None:
    """Paused tasks' activated jobs are throttled (doActionToThrottleJobInPausedTasks).

    Usage: ``throttle_paused(state, state.now)``
    """
    paused = state.tasks.index[(state.tasks["status"] == "paused").to_numpy()]
    if len(paused) == 0:
        return
    rows = state.live_rows("activated")
    rows = rows[np.isin(state.jobs["jediTaskID"][rows], paused.to_numpy())]
    if len(rows):
        state.log.add(now, state.jobs["PandaID"][rows], "activated", "throttled", "task_paused")
        state.move_jobs(rows, "throttled")
