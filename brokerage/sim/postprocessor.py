"""PostProcessor (jedi-lifecycle.md §5.2, §6.2) and TaskCommando's finishing step: scouting tasks assessed from
their scouts, finishing tasks killed down and given their final status."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.model.profiles import rule
from brokerage.sim import jobsize, task_agent
from brokerage.sim.jobs import IS_FINAL, UNDISPATCHED, S
from brokerage.sim.propagate import end_jobs
from brokerage.sim.scouts import EARLY_AVALANCHE_FRACTION, N_SCOUTS_TO_ASSESS, assess
from brokerage.sim.state import SimState

FINISH_KILL_CODE = 52  # TaskCommando kills a finishing task's jobs that have not started (force kill by JEDI)


def tick(state: SimState, now: float) -> None:
    """PostProcessor (§5.2): a scouting task is assessed from its finished scout jobs once 5 are finished (seed
    003; switch scout_assess_as_jedi: once every exposed input is done, or a managed task's scouts are half
    finished) or all its exposed inputs are done: scouted -> running with the scout-derived ramCount and cpuTime,
    exhausted when a check fires, or tobroken -> broken when no scout finished. Finishing tasks first.

    Usage: ``postprocessor.tick(state, state.now)``
    """
    finish_tasks(state, now)
    t = state.tasks
    scouting = t.index[(t["status"] == "scouting").to_numpy()]
    if len(scouting) == 0:
        return
    sub = t.loc[scouting]
    exposed = np.minimum(sub["nFiles"], sub["nFilesToBeUsed"])
    all_done = (sub["nFilesFinished"] + sub["nFilesFailed"] >= exposed).to_numpy()
    code = rule(state.config, "scout_assess_as_jedi")
    managed = (sub["prodSourceLabel"] == "managed").to_numpy()
    finished = state.jobs_finished[state.task_rows(scouting.to_numpy(np.int64))]  # a scouting task's are its scouts'
    maybe = all_done | (finished >= (1 if code else N_SCOUTS_TO_ASSESS))
    j = state.jobs
    for i in np.flatnonzero(maybe).tolist():
        tid = int(scouting[i])
        mine = state.scout_rows.get(tid)
        rows = np.concatenate(mine) if mine else np.zeros(0, np.int64)
        rows = rows[j["jobStatus"][rows] == S["finished"]]
        # seed 003: "Once the first 5 jobs are finished"; the code: every exposed input done, or (managed) the early
        # avalanche at >= 50 % of the scouts finished
        enough = (
            managed[i] and len(rows) >= EARLY_AVALANCHE_FRACTION * sum(len(r) for r in mine or ())
            if code
            else len(rows) >= N_SCOUTS_TO_ASSESS
        )
        if not (all_done[i] or (enough and len(rows) > 0)):
            continue
        state.scout_rows.pop(tid, None)
        if len(rows) == 0:
            state.move_tasks(pd.Index([tid]), "tobroken", "PostProcessor: no scout jobs succeeded")
            state.move_tasks(pd.Index([tid]), "broken", "PostProcessor: final status of tobroken")
            continue
        assess_scouts(state, tid, rows)


def finish_tasks(state: SimState, now: float) -> None:
    """finishing -> passed -> the final status once none of the task's jobs is left (getFinalTaskStatus); the
    jobs no pilot took yet are cancelled first (code 52), running ones end on their own.

    Usage: ``finish_tasks(state, state.now)``
    """
    t = state.tasks
    finishing = t.index[(t["status"] == "finishing").to_numpy()]
    if len(finishing) == 0:
        return
    j = state.jobs
    mine = np.isin(j["jediTaskID"][state.live], finishing.to_numpy())
    queued = state.live[mine]
    queued = queued[np.isin(j["jobStatus"][queued], UNDISPATCHED)]
    if len(queued):
        j.cols["errorCode"][queued] = FINISH_KILL_CODE
        state.log.add(now, j["PandaID"][queued], "-", "cancelled", "command", np.full(len(queued), 52.0))
        end_jobs(state, queued, "cancelled")
        state.live = state.live[~np.isin(state.live, queued)]
        mine = np.isin(j["jediTaskID"][state.live], finishing.to_numpy())
    left = state.live[mine]  # the finishing tasks' jobs: only they can keep one of them busy
    busy = set(j["jediTaskID"][left][~IS_FINAL[j["jobStatus"][left]]].tolist())
    for tid in [x for x in finishing.tolist() if x not in busy]:
        fin, n = int(t.at[tid, "nFilesFinished"]), int(t.at[tid, "nFiles"])
        final = str(task_agent.final_status(np.array([n]), np.array([fin]))[0])
        state.move_tasks(pd.Index([tid]), "passed", "TaskCommando: no active job left")
        state.move_tasks(pd.Index([tid]), final, f"PostProcessor: {fin} of {n} inputs finished")


def assess_scouts(state: SimState, tid: int, rows: np.ndarray) -> None:
    """Apply the scouts' verdict for task TID from its finished scout jobs ROWS.

    Usage: ``assess_scouts(state, 42, rows)``
    """
    t, j = state.tasks, state.jobs
    basewall, cpu, cores, _label, _prio = state.static[tid]
    q = j["computingSite"][rows]
    old_cpu = float(t.at[tid, "cpuTime"])
    # HS06 s per event as JEDI derives it: the payload's time beyond basewalltime, at the queue's corepower,
    # times the job's cores (a task asking any core count ran with the queue's)
    at = j["coreCount"][rows] / cores
    fids = j["fileID"][rows]
    share = np.where(fids >= 0, state.files.share[np.maximum(fids, 0)], 1.0)  # a job shortened at its queue
    per_event = (np.maximum(j["runSeconds"][rows] - basewall, 0.0) * state.g.corepower[q] / np.maximum(cpu * share, 1e-9)
                 * old_cpu * at)  # fmt: skip
    pss = j["maxPSS"][rows].astype(float) / (at if tid in state.per_core else 1.0)  # at the task's core count
    left = int(t.at[tid, "nFiles"] - t.at[tid, "nFilesFinished"] - t.at[tid, "nFilesFailed"])
    v = assess(state.config, pss, per_event, j["runSeconds"][rows], int(cores), bool(t.at[tid, "ramPerCore"]),
               float(t.at[tid, "ramCount"]), old_cpu, left, float(t.at[tid, "baseRamCount"]))  # fmt: skip
    old_ram = t.at[tid, "ramCount"]
    state.estimates_changed(tid, {"ramcount": v.ram_count, "cputime": round(v.cpu_time, 3)})
    jobsize.reset_ng(state, tid)  # tgtMaxOutputForNG: nGBPerJob reset after the scouts
    t.at[tid, "nFilesToBeUsed"] = t.at[tid, "nFiles"]
    values = (
        f"ramCount {old_ram:.0f} -> {v.ram_count}, cpuTime {old_cpu:.1f} -> {v.cpu_time:.1f} from {len(rows)} scouts"
    )
    if v.check:
        state.move_tasks(
            pd.Index([tid]), "exhausted", f"PostProcessor: #ATM #KV action=set_exhausted {v.reason} ({values})"
        )
        return
    state.move_tasks(pd.Index([tid]), "scouted", f"PostProcessor: scouts succeeded ({values})")
    state.move_tasks(pd.Index([tid]), "running", "PostProcessor: scouted task goes on running")
