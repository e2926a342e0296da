"""PanDA 1.0.4's analysis weights and Stabilizer inputs (switches ``anal_weight_as_jedi``, ``anal_stabilizer_as_jedi``):
the new basic weight of AtlasAnalJobBroker, its data weight, and the Stabilizer with JEDI's inputs."""

from __future__ import annotations

from typing import Any

import numpy as np

from brokerage.brokers.analysis_context import AnalContext
from brokerage.brokers.stabilizer import StabilizerTable, compute, share_users
from brokerage.checks.panda_data import MAX_FILES, jedi_anal_local_disk, records_per_file
from brokerage.model import views

OVERLOAD_STATES = ("defined", "assigned", "activated", "starting")


def merge_chunk(ctx: AnalContext) -> bool:
    """The input chunk is a merge chunk (JEDI's inputChunk.isMerging)."""
    return bool(ctx.task.get("is_merge"))


EPS_INIT, EPS_HI_MID, EPS_HI_LO, EPS_MID_LO = 0.001, 0.05, 0.002, 0.1  # weight_epsilon_* of AtlasAnalJobBroker
CLASS_SHARES = ("User Analysis", "Express Analysis")
WEIGHT_FLOOR = 2.0**-20


def jobs_estimate(ctx: AnalContext) -> float:
    """JEDI's n_jobs_to_submit: the sub-chunks InputChunk.getSubChunk cuts the master's files into with
    nEventsPerJob (a file cut into event ranges gives one job per range; whole files are packed while their events
    fit), or one job per file; 1 without input. Usage: ``jobs_estimate(ctx)``"""
    snap = ctx.cache.snap
    ds = snap.datasets[(snap.datasets["jeditaskid"] == int(ctx.task["jeditaskid"])) & snap.datasets["is_master"]]
    if ds.empty or int(ds["nfiles"].iloc[0]) == 0:
        return 1.0
    n = max(1, min(int(ds["nfiles"].iloc[0]), MAX_FILES))
    nev = int(float(ds["nevents"].iloc[0]) // n)
    per_job = int(ctx.task.get("chunk_nevents") or 0)
    if per_job <= 0 or nev <= 0:
        return float(n)
    if per_job < nev:
        return float(n * records_per_file(n, float(ds["nevents"].iloc[0]), per_job))
    return float(-(-n // (per_job // nev)))


def _main_weights(task_class: int, n_jobs: float, rem_by_class: dict[int, float], total: float) -> dict[int, float]:
    """main_weight_site_class_dict: the jobs to place shared out over site classes in the task class's order."""
    main = {1: EPS_INIT, 0: EPS_INIT, -1: EPS_INIT}
    left = min(n_jobs, total)
    if task_class == -1:
        main[-1] = left
    elif task_class == 0:
        main[0] = min(left, rem_by_class[0])
        main[-1] = left - main[0]
        if main[0] > 0:
            main[0] -= EPS_MID_LO
            main[-1] += EPS_MID_LO
    else:
        main[1] = min(left, rem_by_class[1])
        left -= main[1]
        main[0] = min(left, rem_by_class[0])
        main[-1] = left - main[0]
        if main[1] > 0:
            main[1] -= EPS_HI_MID + EPS_HI_LO
            main[0] += EPS_HI_MID
            main[-1] += EPS_HI_LO
    return main


def basic_weight(ctx: AnalContext, idx: np.ndarray) -> np.ndarray:
    """AtlasAnalJobBroker.py:1900-2110: the new basic weight nbw_main x nbw_sec + 2^-20 of the candidates IDX, from
    the user's remaining queue room (the Stabilizer's max_q_len - nQ_user) and, for User and Express Analysis, the
    site classes. Usage: ``basic_weight(ctx, np.flatnonzero(alive))``"""
    rem = np.maximum(ctx.stab.max_q_len[idx] - ctx.stab.nQ_user[idx], 0.0).astype(float)
    n_jobs, total, merge = jobs_estimate(ctx), float(rem.sum()), merge_chunk(ctx)
    sc = ctx.qa["site_class"].astype(float)[idx]
    cls = np.where(np.isnan(sc), 0, sc).astype(int)
    if ctx.task.get("gshare") not in CLASS_SHARES:
        main = np.full(len(idx), n_jobs)
        numer = np.maximum(rem - n_jobs / len(idx), n_jobs * 0.001)
        if total - n_jobs > 0 and not merge:
            return main * (numer / (total - n_jobs)) + WEIGHT_FLOOR
        return main * (rem / total if total > 0 else np.full(len(idx), 1.0 / len(idx))) + WEIGHT_FLOOR
    tc_raw = ctx.task.get("task_class")
    tc = 1 if tc_raw is None or pd_isna(tc_raw) else int(tc_raw)
    rem_by = {c: float(rem[cls == c].sum()) for c in (1, 0, -1)}
    n_by = {c: int((cls == c).sum()) for c in (1, 0, -1)}
    mains = _main_weights(tc, n_jobs, rem_by, total)
    out = np.empty(len(idx))
    for k, c in enumerate(cls.tolist()):
        m = mains[c]
        numer = max(rem[k] - m / n_by[c], m * 0.001)
        reduced = rem_by[c] - m
        sec = numer / reduced if reduced > 0 and not merge else rem[k] / rem_by[c] if rem_by[c] > 0 else 1 / n_by[c]
        out[k] = m * sec + WEIGHT_FLOOR
    return out


def pd_isna(value: Any) -> bool:
    """A missing number (None or NaN)."""
    return value is None or (isinstance(value, float) and np.isnan(value))


def data_weight(ctx: AnalContext, idx: np.ndarray) -> np.ndarray:
    """AtlasAnalJobBroker.py:2200-2225: with the data check (no union), 1 per dataset on disk and 0.001 on tape
    only; else 1 + local disk GB (whole GB, every record counting its file's size) / 10 when the input has at least
    1 GB."""
    avail = ctx.avail
    if ctx.use_locality and not ctx.derived.get("union"):
        weight = ctx.derived.get("data_weight")
        if avail["total_files"] <= 0 or weight is None:
            return np.ones(len(idx))
        return np.where(weight[idx] > 0, weight[idx], 1.0)
    local = jedi_anal_local_disk(ctx)
    if local["total_gb"] <= 0:
        return np.ones(len(idx))
    return 1.0 + local["disk_gb"][idx] / 10.0


def jedi_stabilizer(ctx: AnalContext) -> StabilizerTable:
    """AtlasAnalJobBroker.py:1615-1700 and 1990-2040: the Stabilizer with JEDI's inputs: the to-running rate scaled
    by the gshare's share of the queue's running jobs, nR from the ``_total`` pseudo-user, nUsers counting that
    pseudo-user (1 at a queue without user jobs). Usage: ``jedi_stabilizer(ctx).max_q_len``"""
    gshare = str(ctx.task.get("gshare") or "")
    counts, all_counts = ctx.counts, views.job_counts(ctx.cache, None, views.task_vo(ctx.task))
    nq = sum(counts[s] for s in OVERLOAD_STATES)
    nr_share, nr_all = counts["running"], all_counts["running"]
    site_trr = np.nan_to_num(ctx.qa["trr"].astype(float))
    trr = np.divide(nr_share * site_trr, nr_all, out=np.zeros(ctx.n), where=nr_all > 0)
    su = share_users(ctx.cache, gshare, views.user_counts_vo(ctx.task, ctx.config))
    pairs = np.bincount(su.queue, minlength=ctx.n) if len(su.queue) else np.zeros(ctx.n)
    total_r = np.bincount(su.queue, weights=su.nR_user, minlength=ctx.n) if len(su.queue) else np.zeros(ctx.n)
    nr_pq = np.where(pairs > 0, total_r, nr_share)
    n_users = np.where(pairs > 0, pairs + 1.0, 1.0)
    nq_user, nr_user = np.zeros(ctx.n), np.zeros(ctx.n)
    pos = su.by_user.get(str(ctx.task.get("username") or ""))
    if pos is not None:
        nq_user[su.queue[pos]] = su.nQ_user[pos]
        nr_user[su.queue[pos]] = su.nR_user[pos]
    return compute(nq, nr_pq, trr, nr_user, nq_user, n_users, ctx.config)
