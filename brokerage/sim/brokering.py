"""The job brokers as the simulated JEDI sees them: their view of the grid, refreshed every JOB_BROKERAGE_REFRESH,
and each task's (and retried chunk's) candidate queues with their draw probabilities."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.brokers.router import run_job_brokerage
from brokerage.model.cache import derived_cache
from brokerage.model.explain import Decision
from brokerage.model.profiles import rule as profile_rule
from brokerage.model.views import carry_task_records
from brokerage.sim import live_counts
from brokerage.sim.jobs import IS_QUEUED, STATUSES, S
from brokerage.sim.state import SimState

# the weight's queued-jobs offset per label: production (running+1)/(queued+WEIGHT_QUEUE_OFFSET), analysis's
# original basic weight (running+1)/(queued+1) (seed 000, "ATLAS Analysis Job Brokerage" step 4)
ANALYSIS_OFFSET = 1.0


def tick(state: SimState, now: float) -> None:
    """Give the brokers the simulated job counts (JEDI reads pre-aggregated job statistics that lag too): per queue,
    share and status, per user (caps, Analysis Stabilizer) and per task's ended jobs (failed/closed-jobs filter);
    the kept decisions are dropped, so every task is brokered anew on them.

    Usage: ``brokering.tick(state, state.now)``
    """
    if now > 0:
        counts = job_counts(state)
        tables = {
            "job_counts": counts[state.snap.tables["job_counts"].columns],
            "user_job_counts": live_counts.user_job_counts(state),
            "task_job_counts": live_counts.task_job_counts(state),
        }
        if state.scouted:  # the scouts' estimates reach the brokers at their next refresh
            tasks = state.snap.tables["tasks"].copy()
            at = {int(tid): i for i, tid in enumerate(tasks["jeditaskid"])}
            for tid, values in state.scouted.items():
                for col, v in values.items():
                    tasks.iat[at[tid], tasks.columns.get_loc(col)] = v
            tables["tasks"] = tasks
        state.brokerage_snap = state.snap.replace(**tables)
        prev, state.cache = state.cache, derived_cache(state.base_cache, state.brokerage_snap)
        carry_task_records(state.cache, prev)  # only the changed tasks' records are built
        state.fresh.clear()  # the new snapshot holds them
    state.hp_stats = live_counts.hp_stats(state)  # JOB_STATS_HP, refreshed with the other job statistics
    state.decisions.clear()
    state.choices.clear()
    state.ref_counts = count_live(state)


def job_counts(state: SimState) -> pd.DataFrame:
    """job_counts of the live jobs not holding, per (panda_queue, gshare, resource_type, jobstatus, vo) (each job's
    task's VO: JEDI counts per VO), the rows as ``DataFrame.value_counts`` orders them (most jobs first, equal
    counts in the order their first job comes), counted on integer keys rather than on five columns of names.

    Usage: ``job_counts(state)["njobs"].sum()``
    """
    j, g = state.jobs, state.g
    live = state.live[j["jobStatus"][state.live] != S["holding"]]
    names = (g.queues, g.shares, g.rtypes, STATUSES, g.vos)
    codes = (j["computingSite"][live], j["gshare"][live], j["resource_type"][live], j["jobStatus"][live], j["vo"][live])
    key = np.zeros(len(live), np.int64)
    for vocabulary, code in zip(names, codes, strict=True):
        key = key * len(vocabulary) + code
    uniq, first, n = np.unique(key, return_index=True, return_counts=True)
    order = np.argsort(first)[np.argsort(-n[np.argsort(first)], kind="stable")]  # by count, then first seen
    uniq, n = uniq[order], n[order]
    columns: dict[str, np.ndarray] = {}
    for col, vocabulary in reversed(list(zip(JOB_COUNT_KEYS, names, strict=True))):
        columns[col] = np.asarray(vocabulary, dtype=object)[uniq % len(vocabulary)]
        uniq = uniq // len(vocabulary)
    return pd.DataFrame({**{c: columns[c] for c in JOB_COUNT_KEYS}, "njobs": n.astype(np.int64)})


JOB_COUNT_KEYS = ("panda_queue", "gshare", "resource_type", "jobstatus", "vo")


def count_live(state: SimState) -> tuple[np.ndarray, np.ndarray]:
    """(running, queued) per (VO, queue, share) of the live jobs, flat (``count_key``); queued is defined +
    assigned + activated + starting, as the brokers count it (per VO, as JEDI). The moves keep these counts
    (``StatusIndex``, keyed as ``count_key``).

    Usage: ``running, queued = count_live(state)``
    """
    by_qs = state.index.by_qs
    return by_qs[S["running"]].copy(), by_qs[IS_QUEUED].sum(axis=0)


def count_key(state: SimState, vo: np.ndarray | int, queues: np.ndarray, share: np.ndarray | int) -> np.ndarray:
    """The flat index of (VO, queue, share) in count_live's arrays.

    Usage: ``state.live_counts[1][count_key(state, 0, np.array([3]), 2)]``
    """
    return state.index.key(vo, queues, share)  # the status index keeps the counts under this key


def vo_code(state: SimState, tid: int) -> int:
    """The index in the run's VOs (SimGrid.vos) of task TID's VO.

    Usage: ``brokering.vo_code(state, 42)``
    """
    code = state.vo_of.get(tid)
    if code is None:  # a task's VO never changes during a run: looked up once
        code = state.vo_of[tid] = state.g.vos.index(str(state.tasks.at[tid, "vo"]))
    return code


def placed(state: SimState, queues: np.ndarray, share: int, vo: int = 0) -> None:
    """Jobs of SHARE and VO just placed at QUEUES count as queued for the next chunk's brokerage in this cycle.

    Usage: ``placed(state, np.array([3, 3, 5]), 0, 0)``
    """
    if state.live_counts is not None:
        np.add.at(state.live_counts[1], count_key(state, vo, queues, share), 1)


def decision(state: SimState, tid: int) -> Decision:
    """Task TID's job brokerage, kept until the next refresh or until its estimates change.

    Usage: ``brokering.decision(state, 42).message``
    """
    d = state.decisions.get(tid)
    if d is None:
        d = state.decisions[tid] = broker(state, tid)
    return d


def broker(state: SimState, tid: int, **fields: float) -> Decision:
    """Job brokerage of TID with its estimates changed since the brokers' snapshot, and FIELDS (a chunk's).

    Usage: ``brokering.broker(state, 42, ramcount=3000.0)``
    """
    changed = {**state.fresh.get(tid, {}), **fields}
    scout = is_scouting(state, tid)
    if scout != state.snap_is_scout.get(tid, False):  # the brokers' snapshot says otherwise: scouts as scouts
        changed["is_scout"] = scout
    return run_job_brokerage(state.brokerage_snap, tid, state.config, cache=state.cache, task_fields=changed or None)


def is_scouting(state: SimState, tid: int) -> bool:
    """Whether TID's next jobs are scouts (a task that has not run past its scouts: useScout, ready or scouting);
    the brokers then apply the scout rules (nucleus only, active queues, maxtime >= 24 h).

    Usage: ``brokering.is_scouting(state, 42)``
    """
    t = state.tasks
    return bool(t.at[tid, "useScout"]) and str(t.at[tid, "status"]) in ("ready", "scouting")


def choices(state: SimState, tid: int, ram: float | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """The task's candidate queues (indices) and their draw probabilities (weight shares) on the live job counts,
    None if none; RAM: a chunk's ramCount above the task's (inputs retried with more memory), brokered with it
    (getMaxRamCount). The brokerage itself is kept until the next refresh, but its weights and its step-4 caps
    are read on the counts of now (``live``), as JEDI's next cycle would see them.

    Usage: ``queues, p = brokering.choices(state, 42)``
    """
    key = tid if ram is None else (tid, ram)
    got = state.choices.get(key)
    if got is None:
        d = decision(state, tid) if ram is None else broker(state, tid, ramcount=ram)
        kept = [(state.qi[c.name], max(c.weight, 0.0), float(c.details.get("nRunning", np.nan)),
                 sum(float(c.details.get(f"n{k}", 0.0)) for k in ("Activated", "Assigned", "Starting", "Defined")))
                for c in d.candidates if c.name in state.qi]  # fmt: skip
        arr = np.array([k[1:] for k in kept], dtype=float).reshape(-1, 3)
        got = (np.array([k[0] for k in kept], np.int64), arr[:, 0], arr[:, 1], arr[:, 2])
        state.choices[key] = got
    queues, p = live(state, tid, *got)
    return (queues, p) if len(queues) else None


def live(
    state: SimState, tid: int, queues: np.ndarray, w: np.ndarray, nrun: np.ndarray, nq: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Weights W of QUEUES brokered on running NRUN and queued NQ (the brokers' view at the refresh) moved to the
    live counts of the task's share and VO: x (running + 1) / (nrun + 1) x (nq + offset) / (queued + offset); production
    queues whose queued exceed QUEUED_RUNNING_RATIO_CAP x running are skipped (step 4's caps; when all are, the
    ALL_CAPPED_KEEP_BEST best stay, 0 or the switch all_capped_wait: none). Candidates without counts (other brokers) keep their weight.

    Usage: ``queues, p = live(state, 42, queues, w, nrun, nq)``
    """
    if state.live_counts is None or state.ref_counts is None or len(queues) == 0:
        ok = w > 0
        return queues[ok], w[ok] / w[ok].sum() if ok.any() else w[ok]
    share = int(state.task_s[state.task_rows(np.array([tid]))][0])
    key = count_key(state, vo_code(state, tid), queues, max(share, 0))
    d_run = state.live_counts[0][key] - state.ref_counts[0][key]
    d_q = state.live_counts[1][key] - state.ref_counts[1][key]
    known = ~np.isnan(nrun)
    nrun0 = np.where(known, nrun, 0.0)  # nan_to_num(nrun): the counts are finite or NaN (unknown)
    run_now = np.where(known, np.maximum(nrun0 + d_run, 0.0), 0.0)
    q_now = np.where(known, np.maximum(nq + d_q, 0.0), nq)
    analysis = state.static[tid][3] == "user"
    offset = ANALYSIS_OFFSET if analysis else float(state.config["WEIGHT_QUEUE_OFFSET"])
    factor = np.where(known, (run_now + 1.0) / (nrun0 + 1.0) * (nq + offset) / (q_now + offset), 1.0)
    weight = w * factor
    ok = weight > 0
    if not analysis:
        capped = known & (q_now > float(state.config["QUEUED_RUNNING_RATIO_CAP"]) * run_now)
        if (ok & ~capped).any():
            ok &= ~capped
        else:
            # seeds 001 and 003 keep the 3 best; PanDA's code lets the task wait (brokers.production.all_capped_keep)
            wait = profile_rule(state.config, "all_capped_wait")
            keep = 0 if wait else int(state.config["ALL_CAPPED_KEEP_BEST"])
            best = np.argsort(-np.where(ok, weight, -np.inf), kind="stable")[:keep]
            ok = np.isin(np.arange(len(queues)), best) & ok
    if not ok.any():
        return queues[:0], weight[:0]
    return queues[ok], weight[ok] / weight[ok].sum()
