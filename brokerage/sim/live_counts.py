"""The per-user and per-task job counts the analysis broker reads, kept live from the simulated jobs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.sim.jobs import FINAL, NOT_RUN, STATUSES
from brokerage.sim.state import SimState

ENDED = ("finished", "failed", "closed")
WQ_KEY = (
    1 << 16
)  # (work queue, resource type) -> one integer key  # what task_job_counts holds (cancelled jobs are not counted)


def user_job_counts(state: SimState) -> pd.DataFrame:
    """user_job_counts now (user caps, the Analysis Stabilizer): the live analysis jobs of the run's tasks under their
    task's owner, working group and VO, plus the snapshot's own jobs (whose owner the job table does not know) shared
    out as the snapshot shared them: at each (queue, share) a user holds the fraction of those jobs the snapshot gave
    them, applied to the ones still live in each status.

    Usage: ``user_job_counts(state)["njobs"].sum()``
    """
    j, g = state.jobs, state.g
    live = state.live[~np.isin(j["jobStatus"][state.live], FINAL)]
    mine = live[(j["jediTaskID"][live] >= 0) & (j["prodSourceLabel"][live] == 1)]
    t = state.tasks
    owner = state.snap.tables["tasks"].set_index("jeditaskid")
    tids = j["jediTaskID"][mine]
    sim = pd.DataFrame({
        "panda_queue": np.asarray(g.queues, dtype=object)[j["computingSite"][mine]],
        "gshare": np.asarray(g.shares, dtype=object)[j["gshare"][mine]],
        "produsername": owner["username"].reindex(tids).fillna("").to_numpy(object) if len(t) else [],
        "workinggroup": owner["workinggroup"].reindex(tids).fillna("").to_numpy(object) if len(t) else [],
        "jobstatus": np.asarray(STATUSES, dtype=object)[j["jobStatus"][mine]],
        "njobs": 1, "ncores": j["coreCount"][mine].astype(np.int64),
        "vo": np.asarray(g.vos, dtype=object)[j["vo"][mine]],
    })  # fmt: skip
    keys = ["panda_queue", "gshare", "produsername", "workinggroup", "jobstatus", "vo"]
    sim = sim.groupby(keys, as_index=False)[["njobs", "ncores"]].sum()
    out = pd.concat([sim, _background_users(state, live)], ignore_index=True)
    out = out.groupby(keys, as_index=False)[["njobs", "ncores"]].sum()
    return out[out["njobs"] > 0][state.snap.tables["user_job_counts"].columns].reset_index(drop=True)


def _background_users(state: SimState, live: np.ndarray) -> pd.DataFrame:
    """The snapshot's per-user rows applied to the snapshot's own jobs still live: user u's fraction at (VO, queue,
    share) = its jobs there / all the snapshot's jobs of that VO there, times the live ones per status (rounded)."""
    u = state.snap.tables["user_job_counts"]
    cols = ["panda_queue", "gshare", "produsername", "workinggroup", "jobstatus", "njobs", "ncores", "vo"]
    if u.empty:
        return pd.DataFrame(columns=cols)
    j, g = state.jobs, state.g
    bg_all = np.flatnonzero(j["jediTaskID"] == -1)
    nq, ns = len(g.queues), len(g.shares)
    flat = lambda v, q, s: (v.astype(np.int64) * nq + q) * ns + s  # noqa: E731  # (VO, queue, share) -> one key
    at_start = np.bincount(flat(j["vo"][bg_all], j["computingSite"][bg_all], j["gshare"][bg_all]),
                           minlength=len(g.vos) * nq * ns)  # fmt: skip
    bg = live[j["jediTaskID"][live] == -1]
    key = flat(j["vo"][bg], j["computingSite"][bg], j["gshare"][bg])
    now = pd.DataFrame({"key": key, "jobstatus": j["jobStatus"][bg]}).value_counts().rename("n").reset_index()
    per_user = u.groupby(["panda_queue", "gshare", "produsername", "workinggroup", "vo"], as_index=False)[
        ["njobs", "ncores"]
    ].sum()
    qi = per_user["panda_queue"].map(state.qi)
    si = per_user["gshare"].map(state.si)
    vi = per_user["vo"].map({v: i for i, v in enumerate(g.vos)})
    ok = qi.notna() & si.notna() & vi.notna()
    per_user = per_user[ok].copy()
    per_user["key"] = flat(vi[ok].to_numpy(), qi[ok].to_numpy(np.int64), si[ok].to_numpy(np.int64))
    start = at_start[per_user["key"].to_numpy(np.int64)]
    per_user["frac"] = np.where(start > 0, per_user["njobs"] / np.maximum(start, 1), 0.0)
    per_user["cores_per_job"] = per_user["ncores"] / per_user["njobs"].clip(lower=1)
    m = per_user.drop(columns=["njobs", "ncores"]).merge(now, on="key")
    m["njobs"] = np.rint(m["frac"] * m["n"]).astype(np.int64)
    m["ncores"] = np.rint(m["njobs"] * m["cores_per_job"]).astype(np.int64)
    m["jobstatus"] = np.asarray(STATUSES, dtype=object)[m["jobstatus"].to_numpy(np.int64)]
    return m[cols]


def task_job_counts(state: SimState) -> pd.DataFrame:
    """task_job_counts now (the failed/closed-jobs filter, the closed-jobs retry pass): the snapshot's rows, aged by
    the run's time, plus the run's ended jobs of its tasks per (task, queue, status, hour), each at its last end. The
    brokers' clock stays the snapshot's, so a time is written as taken_at - (now - end).

    Usage: ``task_job_counts(state).groupby("jobstatus")["njobs"].sum()``
    """
    old = state.snap.tables["task_job_counts"]
    shift = pd.Timedelta(seconds=float(state.now))
    aged = old.assign(modificationtime=old["modificationtime"] - shift)
    agg = state.ended_groups.frame(state.jobs, state.g.queues)  # kept as jobs end: no scan of the whole table
    if agg.empty:
        return aged.reset_index(drop=True)
    taken = pd.Timestamp(state.snap.taken_at)
    agg["modificationtime"] = taken + pd.to_timedelta(agg["end"] - float(state.now), unit="s")
    new = agg[list(old.columns)]
    if not aged.empty:
        new = new.astype({"modificationtime": aged["modificationtime"].dtype})
        return pd.concat([aged, new], ignore_index=True)
    return new.reset_index(drop=True)


def hp_stats(state: SimState) -> dict[tuple[int, int], tuple[float, int]]:
    """JOB_STATS_HP of every (aligned work queue, resource type) from the live jobs: the highest currentPriority and
    how many jobs at it are not running yet (assigned, activated, starting); the throttler's high-priority override
    reads it.

    Usage: ``state.hp_stats = hp_stats(state)``
    """
    j, live = state.jobs, state.live
    if len(live) == 0:
        return {}
    key = j["workQueue"][live].astype(np.int64) * WQ_KEY + j["resource_type"][live]
    prio = j["currentPriority"][live]
    top = pd.Series(prio).groupby(key).max()
    at_top = prio == top.reindex(key).to_numpy()
    waiting = pd.Series(at_top & np.isin(j["jobStatus"][live], NOT_RUN)).groupby(key).sum()
    return {(int(k) // WQ_KEY, int(k) % WQ_KEY): (float(v), int(waiting[k])) for k, v in top.items()}
