"""The jobs of the demo grid: running and queued jobs per queue, share and status (with the bootstrap,
overloaded, stuck, inactive and many-transferring queues), pilot and worker activity, and the ``job_counts``
table by resource type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from brokerage.synth.common import INACTIVE_HOURS, NO_PILOT_HOURS, times
from brokerage.synth.placement import move_shares, restrict, spread
from brokerage.synth.queues import K, Queues
from brokerage.synth.shares import ANAL_P, COUNT_STATUSES, PROD_SHARES, SHARES, USER_STATUSES, S
from brokerage.synth.sites import Sites
from brokerage.synth.users import make_users, stabilize, user_pairs

_PROD_POP = np.array([0.34, 0.12, 0.15, 0.16, 0.06, 0.09, 0.03, 0.05])
# relative size of a queue of each kind (running jobs), in the order of queues.KINDS
_KIND_SIZE = np.array([1.5, 0.6, 0.5, 1.0, 0.4, 0.02, 0.02, 0.4, 0.05, 0.3, 2.0, 0.5, 0.3, 0.3])
RESOURCE_TYPES = ("SCORE", "MCORE", "MCORE_HIMEM")


@dataclass
class Jobs:
    """Job counts per queue, share and status; user counts; users; and the dynamic queue columns."""

    jc: np.ndarray  # (queue, share, status)
    pairs: dict[str, np.ndarray]  # user_job_counts per (queue, user, share)
    users: np.ndarray  # user names
    user_group: np.ndarray
    user_pop: np.ndarray
    dynamic: dict[str, Any]


@dataclass
class _Load:
    """Running jobs per queue and the flags that shape its other counts."""

    sf: np.ndarray  # size factor of the queue's site
    running: np.ndarray
    bootstrap: np.ndarray
    low: np.ndarray
    overloaded: np.ndarray
    many_transferring: np.ndarray
    inactive: np.ndarray


def _load(rng: np.random.Generator, sites: Sites, q: Queues) -> _Load:
    """Running jobs by site size, kind and status; bootstrap, low, overloaded, many-transferring, inactive."""
    n = q.n
    online = q.status == "online"
    sf = np.sqrt(sites.weight[q.site] / np.median(sites.weight))
    job_cores = np.where(q.corecount == 0, 4, q.corecount)
    cores = rng.lognormal(np.log(900.0), 0.9, n) * sf * _KIND_SIZE[q.kind]
    R = np.round(cores / job_cores)
    R = np.where(q.status == "brokeroff", np.round(R * rng.uniform(0.0, 0.3, n)), R)
    R = np.where(q.status == "standby", np.round(R * 0.5), R)
    R = np.where(np.isin(q.status, ("offline", "paused")), 0, R)
    R = np.where(q.status == "test", np.minimum(R, rng.integers(0, 20, n)), R)
    draw = rng.random(n)
    bootstrap = online & (draw < 0.04)
    low = online & (draw >= 0.04) & (draw < 0.08)
    R = np.where(bootstrap, 0, np.where(low, rng.integers(1, 20, n), R))
    overloaded = online & ~bootstrap & (rng.random(n) < np.where(q.kind == K["VP"], 0.4, 0.06))
    prod_capable = q.type != "analysis"
    many_tr = online & prod_capable & ~bootstrap & (R > 0) & (rng.random(n) < 0.03)
    inactive = online & ~bootstrap & (R > 0) & (rng.random(n) < 0.03)
    return _Load(sf, R, bootstrap, low, overloaded, many_tr, inactive)


def _ratios(rng: np.random.Generator, q: Queues, overloaded: np.ndarray) -> dict[str, np.ndarray]:
    """Queued over running per state (activated, assigned, starting, defined, transferring) and stuck queues."""
    n = q.n
    return {
        "activated": np.where(overloaded, rng.uniform(2.5, 5.0, n), rng.lognormal(np.log(0.35), 0.6, n)),
        "assigned": np.where(rng.random(n) < 0.05, rng.uniform(1.5, 3.0, n), rng.uniform(0.02, 0.4, n)),
        "starting": rng.uniform(0.005, 0.03, n),
        "defined": rng.uniform(0.01, 0.08, n),
        "transferring": rng.uniform(0.02, 0.15, n),
        "stuck": np.isin(q.status, ("offline", "brokeroff")) & (rng.random(n) < 0.4),
    }


def _production(
    rng: np.random.Generator, q: Queues, load: _Load, ratio: dict[str, np.ndarray], reach: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Production job counts (queue, share, status) spread over the production shares (only those REACH allows at
    the queue, when given); running analysis jobs."""
    n, n_prod = q.n, len(PROD_SHARES)
    R = load.running
    prod_capable = q.type != "analysis"
    jc = np.zeros((n, len(SHARES), len(COUNT_STATUSES)), dtype=np.int64)
    R_prod = np.where(q.type == "unified", np.round(R * 0.85), np.where(q.type == "production", R, 0))
    raw = rng.dirichlet(_PROD_POP * 3.0, size=n)
    f = raw.copy()
    f[f < 0.04] = 0.0
    f[np.arange(n), np.argmax(f, axis=1)] += 1e-9
    f /= f.sum(axis=1, keepdims=True)
    drawn = f  # stuck and many-transferring queues keep their jobs as drawn (no task refills those states)
    run = np.round(R_prod[:, None] * f)
    if reach is not None:
        f = restrict(f, raw, reach[:, :n_prod] > 0)
        run = spread(run, reach[:, :n_prod])
    noise = rng.lognormal(0.0, 0.3, (n, n_prod))
    act = np.round(run * ratio["activated"][:, None] * noise)
    stuck = ratio["stuck"][:, None] & prod_capable[:, None] & (drawn > 0.2)
    act = np.where(stuck, rng.integers(1, 200, (n, n_prod)), act)
    jc[:, :n_prod, S["running"]] = run
    jc[:, :n_prod, S["activated"]] = act
    jc[:, :n_prod, S["assigned"]] = np.round(act * ratio["assigned"][:, None] * noise)
    jc[:, :n_prod, S["starting"]] = np.round(run * ratio["starting"][:, None])
    jc[:, :n_prod, S["defined"]] = np.round(run * ratio["defined"][:, None])
    tr = np.round(run * ratio["transferring"][:, None])
    limit = np.where(q.cols["transferringlimit"] > 0, q.cols["transferringlimit"], 2000)
    tr_total = np.maximum(limit, 2 * run.sum(axis=1)) * rng.uniform(1.2, 2.0, n)
    tr = np.where(load.many_transferring[:, None], np.round(tr_total[:, None] * drawn), tr)
    jc[:, :n_prod, S["transferring"]] = tr
    r_anal = R - R_prod
    if reach is not None:
        r_anal = spread(r_anal[:, None], reach[:, n_prod:].sum(axis=1, keepdims=True))[:, 0]
    return jc, r_anal


def last_pilot_age(npilot: np.ndarray, laststart_age: np.ndarray) -> np.ndarray:
    """Seconds since the last pilot, consistent with NPILOT pilots over NO_PILOT_HOURS (no random draw, so the
    rest of the demo grid stays as it was): pilots arriving evenly, the last one half a gap ago; a queue
    without pilots last saw one an hour past the window or at its last job start, whichever is older."""
    window = NO_PILOT_HOURS * 3600.0
    silent = np.maximum(np.nan_to_num(laststart_age, nan=0.0), window + 3600.0)
    age = np.where(npilot > 0, window / (2.0 * np.maximum(npilot, 1)), silent)
    return np.where((npilot <= 0) & np.isnan(laststart_age), np.nan, age)  # never seen a pilot


def _activity(rng: np.random.Generator, q: Queues, jc: np.ndarray, load: _Load, taken: pd.Timestamp) -> dict[str, Any]:
    """Last job start, pilots, batch jobs and Harvester slots of every queue (CRIC/Harvester dynamic columns)."""
    n = q.n
    online = q.status == "online"
    bootstrap, low = load.bootstrap, load.low
    running_total = jc[:, :, S["running"]].sum(axis=1)
    waiting = jc[:, :, S["activated"]].sum(axis=1) + jc[:, :, S["starting"]].sum(axis=1)
    inactive = load.inactive & (waiting > 0)
    age = rng.exponential(300.0, n)
    age = np.where(inactive, rng.uniform((INACTIVE_HOURS + 1) * 3600, 30 * 3600, n), age)
    age = np.where(bootstrap | (running_total == 0), rng.uniform(86400, 10 * 86400, n), age)
    age = np.where((q.status == "offline") & (rng.random(n) < 0.3), np.nan, age)
    npilot = np.floor(rng.lognormal(np.log(40.0), 1.0, n)) + 1
    npilot = np.where(online & (rng.random(n) < 0.04), 0, npilot)
    npilot = np.where((q.status == "offline") & (rng.random(n) < 0.85), 0, npilot)
    nbatch = np.round(running_total * rng.uniform(1.0, 1.3, n)) + rng.integers(0, 50, n)
    nbatch = np.where(bootstrap, rng.integers(5, 80, n), nbatch)
    nbatch = np.where(low, running_total + rng.integers(20, 200, n), nbatch)
    nbatch = np.where(np.isin(q.status, ("offline", "paused")), 0, nbatch)
    slots_draw = rng.random(n)
    numslots = np.where(slots_draw < 0.02, 0.0, np.where(slots_draw < 0.04, rng.integers(50, 2000, n), np.nan))
    # JEDI divides a queue's Harvester slots by its cores: a queue of any cores (0) with a slots row would fail every
    # brokerage that reaches it, so such a queue publishes none
    numslots = np.where(q.corecount == 0, np.nan, numslots)
    return {
        "laststart": times(taken, age),
        "npilot": npilot,
        "lastpilot": times(taken, last_pilot_age(npilot, age)),
        "nbatchjob": nbatch,
        "numslots": numslots,
    }


def make_jobs(
    rng: np.random.Generator, sites: Sites, q: Queues, taken: pd.Timestamp, reach: np.ndarray | None = None
) -> Jobs:
    """Running and queued jobs per queue and share, user jobs at analysis queues, and pilot/worker activity;
    REACH (queue, share), when given, keeps each share's jobs to the queues its tasks can go to (the same draws
    are made either way, so only the counts move).

    Usage: ``make_jobs(rng, sites, q, taken, reach=placement.reach(snap, SHARES))``
    """
    n = q.n
    load = _load(rng, sites, q)
    ratio = _ratios(rng, q, load.overloaded)
    jc, r_anal = _production(rng, q, load, ratio, reach)
    users, user_pop, user_group = make_users(rng, int(np.clip(round(n * 0.3), 20, 3000)))
    pairs = user_pairs(rng, q, load.sf, r_anal, ratio["activated"], user_pop)
    if reach is not None:
        move_shares(pairs, reach[:, len(PROD_SHARES) :] > 0, ANAL_P)
    # trr: jobs starting per hour over the last 6 h ~ running / mean job duration
    R_real = jc[:, :, S["running"]].sum(axis=1) + np.bincount(pairs["queue"], weights=pairs["running"], minlength=n)
    trr = np.round(R_real / rng.uniform(1.5, 6.0, n), 1)
    online = q.status == "online"
    stabilize(rng, pairs, online & (q.type == "analysis") & ~load.overloaded & (r_anal >= 40), trr)
    n_prod = len(PROD_SHARES)
    for st in USER_STATUSES:
        np.add.at(jc[:, :, S[st]], (pairs["queue"], n_prod + pairs["share"]), pairs[st])
    anal_run = jc[:, n_prod:, S["running"]]
    jc[:, n_prod:, S["transferring"]] = np.round(anal_run * ratio["transferring"][:, None] * 0.3)
    jc[load.bootstrap] = 0
    for st in USER_STATUSES:  # a bootstrap queue has no job at all, its users' included (the placement may put some)
        pairs[st] = np.where(load.bootstrap[pairs["queue"]], 0, pairs[st])
    dynamic = _activity(rng, q, jc, load, taken)
    dynamic["trr"] = trr
    return Jobs(jc=jc, pairs=pairs, users=users, user_group=user_group, user_pop=user_pop, dynamic=dynamic)


def job_count_rows(rng: np.random.Generator, q: Queues, jobs: Jobs) -> dict[str, Any]:
    """job_counts rows for every non-zero (queue, share, resource type, status)."""
    qi, gi, si = np.nonzero(jobs.jc)
    nj = jobs.jc[qi, gi, si]
    queue_rt = np.where(q.corecount == 1, 0, np.where(q.kind == K["HIMEM"], 2, 1))
    anal = gi >= len(PROD_SHARES)
    rt = np.where(anal, np.where(q.corecount[qi] > 1, 1, 0), queue_rt[qi])
    # unified queues run single- and multi-core production jobs side by side
    uni = (q.type[qi] == "unified") & ~anal
    score_frac = rng.uniform(0.15, 0.4, q.n)[qi]
    n_score = np.where(uni, np.floor(nj * score_frac), 0).astype(np.int64)
    extra = np.flatnonzero(n_score > 0)
    qi = np.concatenate([qi, qi[extra]])
    gi = np.concatenate([gi, gi[extra]])
    si = np.concatenate([si, si[extra]])
    rt = np.concatenate([rt, np.zeros(len(extra), dtype=rt.dtype)])
    nj = np.concatenate([nj - n_score, n_score[extra]])
    ok = nj > 0
    order = np.lexsort((si[ok], rt[ok], gi[ok], qi[ok]))
    qi, gi, si, rt, nj = (a[ok][order] for a in (qi, gi, si, rt, nj))
    return {
        "panda_queue": q.name[qi],
        "gshare": np.array(SHARES, dtype=object)[gi],
        "resource_type": np.array(RESOURCE_TYPES, dtype=object)[rt],
        "jobstatus": np.array(COUNT_STATUSES, dtype=object)[si],
        "njobs": nj,
    }
