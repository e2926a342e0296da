"""copyArchive's job timeout and reassignment rules, in the order of one pass (jedi-lifecycle.md §3.2)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from brokerage.model import profiles
from brokerage.sim.jobs import ACTIVE_TABLE, DEFINED_TABLE, QUEUED, SUB_TOREASSIGN, S
from brokerage.sim.propagate import end_jobs
from brokerage.sim.retry import SOURCE_CODE
from brokerage.sim.setup import NO_PILOT_STATUSES
from brokerage.sim.state import SimState

H, D = 3600.0, 86400.0
HEARTBEAT_S = 1800.0  # pilot heartbeat period
R7_H, R8_H, R9_H = 12.0, 48.0, 48.0  # hard-coded in copyArchive
SENT_H, PENDING_H = 0.5, 1.0  # H3 (sent, on modificationTime) and K4 (pending, on creationTime), hard-coded
INACTIVE_SITE_H, INACTIVE_JOB_H, INACTIVE_PRIO = 2.0, 4.0, 800.0  # R5 constants
ANALY_OFFLINE_H = 3.0  # analysis rebrokerage at an offline or test queue
F_DRY_LIMIT = 10  # fast rebrokerage limit of a share without FAST_REBRO_THRESHOLD_NQUEUE_<gshare>
HOLDING_PRIO, HOLDING_FAST_H = 800.0, 3.0  # H5: high-priority holding jobs fail after 3 h
EVGEN_SIMUL_H = 6.0  # E6: activated evgen/simul jobs at T2s and non-US/ND T1s (seed 003)

Hit = tuple[str, np.ndarray, str, np.ndarray, float]  # rule, rows, new status, value compared, threshold
# error code a rule leaves on the job: jobDispatcherErrorCode 100 (lost heartbeat), 103/105 (holding timeout), or
# taskBufferErrorCode 102 (expired, kill code 2) / 100 (reassigned by JEDI, kill code 51); F sets 130 itself
ERROR_CODES = {"H1": 100, "H8": 100, "H3": 102, "H5": 103, "H6": 103, "K4": 102, "K1": 102, "K2": 102, "K3": 102,
               "K9": 102, "K10": 102, "R5": 100, "R6": 100, "R7": 100, "R8": 100, "R9": 100, "E6": 100,
               "A": 100}  # fmt: skip


def tick(state: SimState, now: float) -> None:
    """One copyArchive pass: each rule's hits end (failed or closed, with the rule's error code and source) before
    the next rule looks.

    Usage: ``timeouts.tick(state, state.now)``
    """
    c = state.jobs.cols
    for rule, rows, new, value, threshold in copy_archive(state):
        if len(rows) == 0:
            continue
        state.log.add(now, c["PandaID"][rows], c["jobStatus"][rows], new, rule, value, threshold)
        if new == "closed":
            c["jobSubStatus"][rows] = SUB_TOREASSIGN
        if rule != "F":
            c["errorCode"][rows] = ERROR_CODES.get(rule, 0)
        c["errorSource"][rows] = SOURCE_CODE["jobdispatcher" if new == "failed" else "taskbuffer"]
        end_jobs(state, rows, new)


def _last_heartbeat(sim: SimState, rows: np.ndarray) -> np.ndarray:
    """When each running job's pilot last reported: every HEARTBEAT_S since its start; at a queue without pilots
    (offline) the heartbeats stopped when the run began."""
    j = sim.jobs
    start = j["startTime"][rows]
    dead = np.isin(sim.g.queue_status, NO_PILOT_STATUSES)[j["computingSite"][rows]]
    until = np.where(dead, np.minimum(sim.now, 0.0), sim.now)
    beats = np.floor(np.maximum(until - start, 0.0) / HEARTBEAT_S)
    return start + beats * HEARTBEAT_S


def copy_archive(sim: SimState) -> Iterator[Hit]:
    """Each rule's hits, computed after the previous rule's were applied (the caller applies them as they come).

    Usage: ``for rule, rows, new, value, threshold in copy_archive(sim): ...``
    """
    live = sim.live  # non-final rows at the start of the pass; every rule filters by status again
    live = live[~spared(sim)[sim.jobs["computingSite"][live]]]
    user = sim.jobs["prodSourceLabel"][live] == 1
    yield from _watchers(sim, live, user)
    yield from _fast_rebrokerage(sim)
    yield from _reassignments(sim, live, user)
    yield from _evgen_simul(sim, live, user)
    yield from _analysis_and_expiry(sim, live, user)


def spared(sim: SimState) -> np.ndarray:
    """Per queue, whether copyArchive's timeout rules skip its jobs (profile ``seed``): "disable all timeout rules
    when the queue status is paused or the queue has disableReassign in catchall" (seed 000). Under the switch
    ``timeout_exemptions_as_panda`` none is spared whole: H8 and R5/R8/R9 skip them one by one. Fast rebrokerage
    (F) is no timeout and skips none.

    Usage: ``spared(sim)[queue_index]``
    """
    if profiles.rule(sim.config, "timeout_exemptions_as_panda"):
        return np.zeros(len(sim.g.queues), bool)
    return (sim.g.queue_status == "paused") | sim.g.disable_reassign


def _no_reassign(sim: SimState, rows: np.ndarray) -> np.ndarray:
    """ROWS without those at queues whose catchall has disableReassign (R5, R8, R9 skip them in PanDA's code)."""
    return rows[~sim.g.disable_reassign[sim.jobs["computingSite"][rows]]]


def _watchers(sim: SimState, live: np.ndarray, user: np.ndarray) -> Iterator[Hit]:
    """H1/H8 (lost heartbeat), H3 (sent 30 min), H6 (holding too long), K1/K2 (expired in the defined table or
    activated)."""
    j, cfg, now = sim.jobs, sim.config, sim.now
    st, q = j["jobStatus"], j["computingSite"]  # views: later rules see earlier changes
    # H1 analysis heartbeat, H8 production (paused queues skipped for H8 only)
    for rule, is_user, key in (
        ("H1", True, "HEARTBEAT_TIMEOUT_analysis"),
        ("H8", False, "HEARTBEAT_TIMEOUT_production"),
    ):
        limit = float(cfg.get(key))
        rows = live[np.isin(st[live], [S["running"], S["starting"]]) & (user == is_user)]
        if rule == "H8":
            rows = rows[sim.g.queue_status[q[rows]] != "paused"]
        silence = (now - _last_heartbeat(sim, rows)) / H
        hit = silence > limit
        yield rule, rows[hit], "failed", silence[hit], limit

    # H3: "30 min for sent jobs" (the pilot never confirmed the job it got)
    rows = live[st[live] == S["sent"]]
    age = (now - j["modificationTime"][rows]) / H
    yield "H3", rows[age > SENT_H], "failed", age[age > SENT_H], SENT_H

    yield from _holding(sim, live)

    for rule, statuses, days in (("K1", DEFINED_TABLE, 7.0), ("K2", np.array([S["activated"]]), 7.0)):
        rows = live[np.isin(st[live], statuses)]
        age = (now - j["creationTime"][rows]) / D
        yield rule, rows[age > days], "closed", age[age > days], days


def _holding(sim: SimState, live: np.ndarray) -> Iterator[Hit]:
    """H5 then H6. Seed 000: "3 hours for holding jobs with job.currentPriority>=800, while days for holding jobs
    with job.currentPriority<800" (the days: TIMEOUT_holding); switch holding_as_jedi: 3 h above 800 (strict) and
    for analysis holding jobs, then TIMEOUT_holding for all. (Seed 003's production table says "3 hours for holding
    jobs" without the priority split; the seed profile follows seed 000's rule list, docs/lifecycle.md.)"""
    j, now = sim.jobs, sim.now
    st = j["jobStatus"]
    rows = live[st[live] == S["holding"]]
    prio = j["currentPriority"][rows]
    if profiles.rule(sim.config, "holding_as_jedi"):
        fast = (prio > HOLDING_PRIO) | (j["prodSourceLabel"][rows] == 1)
    else:
        fast = prio >= HOLDING_PRIO
    since = np.where(np.isnan(j["endTime"][rows]), j["modificationTime"][rows], j["endTime"][rows])
    age = (now - np.minimum(since, j["modificationTime"][rows])) / H
    hit = fast & (age > HOLDING_FAST_H)
    yield "H5", rows[hit], "failed", age[hit], HOLDING_FAST_H
    limit = float(sim.config["TIMEOUT_holding"])
    rows = rows[~hit]
    age = (now - j["modificationTime"][rows]) / H
    yield "H6", rows[age > limit], "failed", age[age > limit], limit


def _reassignments(sim: SimState, live: np.ndarray, user: np.ndarray) -> Iterator[Hit]:
    """R5 (inactive site), R6/R7 (defined too long), R8 (activated), R9 (starting): managed jobs closed, code 51."""
    j, cfg, now = sim.jobs, sim.config, sim.now
    st, q, prio = j["jobStatus"], j["computingSite"], j["currentPriority"]
    # R5 inactive site: priority >= 800 managed jobs idle 4 h at a queue whose pilots stopped starting 2 h ago
    site_age = (now - sim.laststart) / H  # SiteData.laststart moves with every job start (pilots.dispatch)
    inactive = (site_age > INACTIVE_SITE_H) | np.isin(sim.g.queue_status, ("offline", "test"))
    cand = np.isin(st[live], [S["activated"], S["starting"]]) & ~user & (prio[live] >= INACTIVE_PRIO)
    rows = _no_reassign(sim, live[cand & inactive[q[live]]])
    idle = (now - np.minimum(j["modificationTime"][rows], j["stateChangeTime"][rows])) / H
    yield "R5", rows[idle > INACTIVE_JOB_H], "closed", idle[idle > INACTIVE_JOB_H], INACTIVE_JOB_H

    limit = float(cfg["TIMEOUT_defined"])
    rows = live[(st[live] == S["defined"]) & ~user]
    age = (now - j["modificationTime"][rows]) / H
    yield "R6", rows[age > limit], "closed", age[age > limit], limit

    rows = live[np.isin(st[live], DEFINED_TABLE) & ~user]
    age = (now - j["modificationTime"][rows]) / H
    yield "R7", rows[age > R7_H], "closed", age[age > R7_H], R7_H

    rows = _no_reassign(sim, live[(st[live] == S["activated"]) & ~user])
    age = (now - j["modificationTime"][rows]) / H
    yield "R8", rows[age > R8_H], "closed", age[age > R8_H], R8_H

    rows = _no_reassign(sim, live[(st[live] == S["starting"]) & ~user])
    age = (now - j["stateChangeTime"][rows]) / H
    yield "R9", rows[age > R9_H], "closed", age[age > R9_H], R9_H


def _evgen_simul(sim: SimState, live: np.ndarray, user: np.ndarray) -> Iterator[Hit]:
    """E6, seed 003's production timeouts: "6 hours for activated even/simul jobs at T2 when nRunning=0 or
    nActivated/nRunning>0" and "6 hours for activated evgen/simul jobs at T1 except US and ND": closed (code 51) to
    be reassigned. PanDA's code has no such rule (switch evgensimul_6h_as_jedi). At a T2 the condition holds for
    every activated job (its own queue has one activated job at least)."""
    if profiles.rule(sim.config, "evgensimul_6h_as_jedi") or len(sim.evgen_simul_tasks) == 0:
        return
    j, now = sim.jobs, sim.now
    st, q = j["jobStatus"], j["computingSite"]
    rows = live[(st[live] == S["activated"]) & ~user]
    rows = rows[np.isin(j["jediTaskID"][rows], sim.evgen_simul_tasks) & sim.g.evgen_6h_queue[q[rows]]]
    age = (now - j["modificationTime"][rows]) / H
    yield "E6", rows[age > EVGEN_SIMUL_H], "closed", age[age > EVGEN_SIMUL_H], EVGEN_SIMUL_H


def _analysis_and_expiry(sim: SimState, live: np.ndarray, user: np.ndarray) -> Iterator[Hit]:
    """K3 (analysis jobs unchanged 7 d), A (analysis rebrokerage), K4 (pending 1 h), K9 (21 d in the active table),
    K10 (throttled)."""
    j, cfg, now = sim.jobs, sim.config, sim.now
    st, q = j["jobStatus"], j["computingSite"]
    # K3: analysis jobs of the active table (running ones only get "tobekilled": left to the pilot)
    rows = live[np.isin(st[live], ACTIVE_TABLE) & (st[live] != S["running"]) & user]
    age = (now - j["modificationTime"][rows]) / D
    yield "K3", rows[age > 7.0], "closed", age[age > 7.0], 7.0

    # A: analysis rebrokerage after ANALY_TIMEOUT at an online queue, 3 h at an offline or test one
    limit = float(cfg["ANALY_TIMEOUT"])
    rows = live[(st[live] == S["activated"]) & user]
    down = np.isin(sim.g.queue_status[q[rows]], ("offline", "test"))
    age = (now - j["activationTime"][rows]) / H
    over = np.where(down, age > ANALY_OFFLINE_H, age > limit)
    yield "A", rows[over], "closed", age[over], limit

    # K4: "1 hour for pending jobs" (kill code 4, on creationTime)
    rows = live[st[live] == S["pending"]]
    age = (now - j["creationTime"][rows]) / H
    yield "K4", rows[age > PENDING_H], "closed", age[age > PENDING_H], PENDING_H

    # K9: "21 days for running jobs": every row of the active table by creationTime; a running one is only told
    # tobekilled in PanDA and its pilot ends it at the next heartbeat, here at once
    rows = live[np.isin(st[live], ACTIVE_TABLE)]
    age = (now - j["creationTime"][rows]) / D
    yield "K9", rows[age > 21.0], "closed", age[age > 21.0], 21.0

    rows = live[st[live] == S["throttled"]]
    age = (now - j["creationTime"][rows]) / D
    yield "K10", rows[age > 7.0], "closed", age[age > 7.0], 7.0


def _fast_rebrokerage(sim: SimState) -> Iterator[Hit]:
    """Rule F (§3.4): per (queue, global share) with nr x ratio < nq, nq > limit and nq > nq_tot x frac, the
    oldest excess - 1 queued jobs are closed with kill code 10; a share without FAST_REBRO_THRESHOLD_NQUEUE_<share>
    is a dry run (limit 10) that kills nothing. Seed 000: only where "nSlots is not defined in the Harvester_Slots
    table since it intentionally cause large nQueue when nRun is small": those queues' jobs are left out of every
    count (copyArchive's statistics leave them out the same way)."""
    j, cfg = sim.jobs, sim.config
    ratio, frac = float(cfg["FAST_REBRO_THRESHOLD_NQNR_RATIO"]), float(cfg["FAST_REBRO_THRESHOLD_NQUEUE_FRAC"])
    live = sim.live
    live = live[~sim.g.harvester_slots[j["computingSite"][live]]]
    st, q, sh = j["jobStatus"][live], j["computingSite"][live], j["gshare"][live]
    ns = len(sim.g.shares)
    key = q.astype(np.int64) * ns + sh
    queued = np.isin(st, QUEUED)
    size = len(sim.g.queues) * ns
    nq = np.bincount(key[queued], minlength=size)
    nr = np.bincount(key[st == S["running"]], minlength=size)
    nq_tot = np.bincount(sh[queued], minlength=ns)
    for share_i, share in enumerate(sim.g.shares):
        limit_set = cfg.get(f"FAST_REBRO_THRESHOLD_NQUEUE_{share}")
        limit = int(limit_set) if limit_set else F_DRY_LIMIT
        pairs = np.arange(share_i, size, ns)
        hit = pairs[(nr[pairs] * ratio < nq[pairs]) & (nq[pairs] > limit) & (nq[pairs] > nq_tot[share_i] * frac)]
        for pair in hit:
            n_q, n_r = int(nq[pair]), int(nr[pair])
            excess = math.ceil(min(n_q - n_r * ratio, n_q - limit, n_q - nq_tot[share_i] * frac))
            if not limit_set:
                sim.dry_runs.append((sim.now, sim.g.queues[pair // ns], share, excess - 1))
                continue
            rows = live[(key == pair) & queued][: max(excess - 1, 0)]  # live rows are in PandaID order
            sim.jobs.cols["errorCode"][rows] = 130
            allowed = max(n_r * ratio, limit, nq_tot[share_i] * frac)
            yield "F", rows, "closed", np.full(len(rows), float(n_q)), allowed
