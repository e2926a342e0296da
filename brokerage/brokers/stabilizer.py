"""Analysis Stabilizer: the longest queue one user may hold at each PQ within a global share (seed, analysis step 3)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.tables import DEFAULT_VO

# nQ counts the jobs waiting at the PQ: "queuing jobs" of the seed; nR counts running jobs.
QUEUED_STATUSES = ("defined", "assigned", "activated", "starting")
RUNNING_STATUSES = ("running",)

# Why a PQ cannot be throttled ("does not have enough queuing jobs"), in the seed's order.
RELEASE_RULES = np.array(
    ["", "nQ < BASE_QUEUE_LENGTH_PER_PQ", "nQ < BASE_EXPECTED_WAIT_HOUR_ON_PQ x trr"], dtype=object
)
# Which term of nQ_max(PQ) = max(...) won; ties go to the earlier term.
NQ_MAX_RULES = np.array(
    ["BASE_QUEUE_LENGTH_PER_PQ", "STATIC_MAX_QUEUE_RUNNING_RATIO x nR", "MAX_EXPECTED_WAIT_HOUR x trr"], dtype=object
)
PERCENTAGE_RULES = np.array(["nR_user / nR", "1 / nUsers"], dtype=object)
MAX_Q_LEN_RULES = np.array(
    ["BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER", "BASE_QUEUE_RATIO_ON_PQ x nR", "nQ_max x percentage"], dtype=object
)


@dataclass(frozen=True)
class StabilizerTable:
    """Every intermediate of the Stabilizer, one array entry per PQ (aligned with the input arrays).

    Usage: ``table.to_frame().loc[table.throttled]``
    """

    nQ: np.ndarray
    nR: np.ndarray
    trr: np.ndarray
    can_throttle: np.ndarray
    throttle_from: np.ndarray  # the nQ from which the PQ can throttle: max(base length, base wait x trr)
    release_rule: np.ndarray
    nQ_max: np.ndarray
    nQ_max_rule: np.ndarray
    nR_user: np.ndarray
    nUsers: np.ndarray
    percentage: np.ndarray
    percentage_rule: np.ndarray
    max_q_len: np.ndarray
    max_q_len_rule: np.ndarray
    nQ_user: np.ndarray
    throttled: np.ndarray

    def to_frame(self, queues: np.ndarray | None = None) -> pd.DataFrame:
        """The table as a DataFrame (one row per PQ; QUEUES become the ``panda_queue`` column)."""
        data: dict[str, Any] = {} if queues is None else {"panda_queue": queues}
        data.update({f.name: getattr(self, f.name) for f in fields(self)})
        return pd.DataFrame(data)

    def record(self, i: int) -> dict[str, Any]:
        """Row I as plain Python values (for JSON)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)[i]
            out[f.name] = v.item() if isinstance(v, np.generic) else v
        return out


# every gdpconfig key the Stabilizer reads (compute): the analysis context's "stab" is derived from these
CONFIG_KEYS = (
    "BASE_QUEUE_LENGTH_PER_PQ",
    "BASE_EXPECTED_WAIT_HOUR_ON_PQ",
    "STATIC_MAX_QUEUE_RUNNING_RATIO",
    "MAX_EXPECTED_WAIT_HOUR",
    "BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER",
    "BASE_QUEUE_RATIO_ON_PQ",
)


def compute(
    nQ: np.ndarray,
    nR: np.ndarray,
    trr: np.ndarray,
    nR_user: np.ndarray,
    nQ_user: np.ndarray,
    nUsers: np.ndarray,
    config: Config,
) -> StabilizerTable:
    """The Stabilizer over aligned arrays (one entry per PQ, or per (PQ, user) pair).

    Usage: ``compute(nQ, nR, trr, nR_user, nQ_user, nUsers, Config()).throttled``
    """
    nQ, nR, trr = (np.asarray(a, dtype=float) for a in (nQ, nR, trr))
    nR_user, nQ_user = np.asarray(nR_user, dtype=float), np.asarray(nQ_user, dtype=float)
    nUsers = np.maximum(np.asarray(nUsers, dtype=float), 1.0)
    base_len = float(config["BASE_QUEUE_LENGTH_PER_PQ"])
    base_wait = float(config["BASE_EXPECTED_WAIT_HOUR_ON_PQ"])
    static_ratio = float(config["STATIC_MAX_QUEUE_RUNNING_RATIO"])
    max_wait = float(config["MAX_EXPECTED_WAIT_HOUR"])
    base_user = float(config["BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER"])
    ratio_on_pq = float(config["BASE_QUEUE_RATIO_ON_PQ"])

    short = nQ < base_len
    fast = nQ < base_wait * trr
    can_throttle = ~(short | fast)
    release = np.where(short, 1, np.where(fast, 2, 0))

    terms = np.vstack([np.full(nQ.shape, base_len), static_ratio * nR, max_wait * trr])
    nq_max_which = np.argmax(terms, axis=0)
    nQ_max = terms.max(axis=0)

    # a PQ without running jobs gives the user no running share; 1/nUsers still applies
    share = np.divide(nR_user, nR, out=np.zeros_like(nR), where=nR > 0)
    pct_terms = np.vstack([share, 1.0 / nUsers])
    pct_which = np.argmax(pct_terms, axis=0)
    percentage = pct_terms.max(axis=0)

    len_terms = np.vstack([np.full(nQ.shape, base_user), ratio_on_pq * nR, nQ_max * percentage])
    len_which = np.argmax(len_terms, axis=0)
    max_q_len = len_terms.max(axis=0)

    return StabilizerTable(
        nQ=nQ,
        nR=nR,
        trr=trr,
        can_throttle=can_throttle,
        throttle_from=np.maximum(base_len, base_wait * trr),
        release_rule=RELEASE_RULES[release],
        nQ_max=nQ_max,
        nQ_max_rule=NQ_MAX_RULES[nq_max_which],
        nR_user=nR_user,
        nUsers=nUsers,
        percentage=percentage,
        percentage_rule=PERCENTAGE_RULES[pct_which],
        max_q_len=max_q_len,
        max_q_len_rule=MAX_Q_LEN_RULES[len_which],
        nQ_user=nQ_user,
        throttled=can_throttle & (nQ_user > max_q_len),
    )


@dataclass(frozen=True)
class ShareUsers:
    """Per-user queued and running jobs at each PQ within one global share, plus the users per PQ."""

    queue: np.ndarray  # queue index of each (PQ, user) pair
    user: np.ndarray  # user name of each pair
    nQ_user: np.ndarray
    nR_user: np.ndarray
    nUsers: np.ndarray  # per queue (length = number of queues): users with queued or running jobs
    by_user: dict[str, np.ndarray]  # user -> positions of their pairs


def share_users(cache: GridCache, gshare: str, vo: str | None = DEFAULT_VO) -> ShareUsers:
    """User job counts of VO (None: every VO summed) in one global share, aggregated per (PQ, user) (built once per
    snapshot and VO for every share).

    Usage: ``share_users(cache, "User Analysis", "atlas").nUsers``
    """
    shares = cache.get(("stabilizer:users", vo), lambda: _build_share_users(cache, vo))
    found = shares.get(gshare)
    if found is None:
        n = views.queue_arrays(cache).n
        empty = np.zeros(0)
        return ShareUsers(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object), empty, empty, np.zeros(n), {})
    return found


def _build_share_users(cache: GridCache, vo: str | None) -> dict[str, ShareUsers]:
    qa = views.queue_arrays(cache)
    u = views.user_counts(cache, vo)
    status = u["jobstatus"].to_numpy(dtype=object)
    queued = np.isin(status, QUEUED_STATUSES)
    running = np.isin(status, RUNNING_STATUSES)
    qi = np.fromiter((qa.index.get(q, -1) for q in u["panda_queue"]), dtype=np.int64, count=len(u))
    keep = (queued | running) & (qi >= 0)
    share_code, share_names = pd.factorize(u["gshare"])
    user_code, user_names = pd.factorize(u["produsername"])
    n_users = max(len(user_names), 1)
    # one integer key per (share, queue, user); np.unique sorts by share, then queue, then user
    key = (share_code.astype(np.int64) * qa.n + qi) * n_users + user_code
    pairs, inverse = np.unique(key[keep], return_inverse=True)
    nj = u["njobs"].to_numpy(dtype=float)[keep]
    nq = np.bincount(inverse, weights=np.where(queued[keep], nj, 0.0), minlength=len(pairs))
    nr = np.bincount(inverse, weights=np.where(running[keep], nj, 0.0), minlength=len(pairs))
    has_jobs = (nq + nr) > 0
    pairs, nq, nr = pairs[has_jobs], nq[has_jobs], nr[has_jobs]
    share_of, rest = np.divmod(pairs, qa.n * n_users)
    queue_of, user_of = np.divmod(rest, n_users)
    users_arr = np.asarray(user_names, dtype=object)
    out: dict[str, ShareUsers] = {}
    for code, name in enumerate(share_names):
        sel = np.flatnonzero(share_of == code)
        q, uc = queue_of[sel], user_of[sel]
        order = np.argsort(uc, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(uc[order]) != 0]) if len(order) else np.zeros(0, dtype=np.int64)
        ends = [*starts[1:], len(order)] if len(order) else []
        by_user = {str(users_arr[uc[order[a]]]): order[a:b] for a, b in zip(starts, ends, strict=True)}
        out[str(name)] = ShareUsers(
            queue=q,
            user=users_arr[uc],
            nQ_user=nq[sel],
            nR_user=nr[sel],
            nUsers=np.bincount(q, minlength=qa.n).astype(float),
            by_user=by_user,
        )
    return out


def _queue_totals(cache: GridCache, gshare: str, vo: str) -> tuple[np.ndarray, np.ndarray]:
    counts = views.job_counts(cache, gshare, vo)
    nQ = sum((counts[s] for s in QUEUED_STATUSES), np.zeros(views.queue_arrays(cache).n))
    return nQ, counts["running"]


def stabilizer(cache: GridCache, config: Config, user: str, gshare: str, vo: str = DEFAULT_VO) -> StabilizerTable:
    """The Stabilizer for one (user, gshare) of VO over every queue of the snapshot (aligned with queue_arrays): the
    queues' and users' jobs of that VO only (a user is a (USERNAME, VO) pair).

    The user counts as one of nUsers(PQ) at every PQ, also where they have no job yet.
    Usage: ``stabilizer(cache, Config(), "alice", "User Analysis", "atlas").throttled``
    """
    qa = views.queue_arrays(cache)
    nQ, nR = _queue_totals(cache, gshare, vo)
    su = share_users(cache, gshare, vo)
    nQ_user = np.zeros(qa.n)
    nR_user = np.zeros(qa.n)
    pos = su.by_user.get(user)
    if pos is not None:
        nQ_user[su.queue[pos]] = su.nQ_user[pos]
        nR_user[su.queue[pos]] = su.nR_user[pos]
    present = (nQ_user + nR_user) > 0
    nUsers = su.nUsers + ~present
    return compute(nQ, nR, qa["trr"].astype(float), nR_user, nQ_user, nUsers, config)


def stabilizer_grid(cache: GridCache, config: Config, gshare: str | None = None) -> pd.DataFrame:
    """The Stabilizer for every (PQ, user) pair with queued or running jobs, per global share (all shares if None)
    and VO (a user is a (USERNAME, VO) pair: each VO's users against that VO's queue counts).

    Columns: gshare, vo, panda_queue, produsername, then every StabilizerTable field.
    Usage: ``stabilizer_grid(cache, Config(), "User Analysis").query("throttled")``
    """
    qa = views.queue_arrays(cache)
    u = cache.snap.user_job_counts
    vos = u["vo"].fillna(DEFAULT_VO) if "vo" in u else pd.Series(DEFAULT_VO, index=u.index, dtype=object)
    pairs = sorted({(str(s), str(v)) for s, v in zip(u["gshare"], vos, strict=True) if gshare in (None, s)})
    trr_all = qa["trr"].astype(float)
    parts = []
    for share, vo in pairs:
        su = share_users(cache, share, vo)
        if not len(su.queue):
            continue
        nQ, nR = _queue_totals(cache, share, vo)
        q = su.queue
        table = compute(nQ[q], nR[q], trr_all[q], su.nR_user, su.nQ_user, su.nUsers[q], config)
        frame = table.to_frame(qa.name[q])
        frame.insert(0, "gshare", share)
        frame.insert(1, "vo", vo)
        frame.insert(3, "produsername", su.user)
        parts.append(frame)
    if not parts:
        empty = compute(*(np.zeros(0) for _ in range(6)), config).to_frame(np.zeros(0, dtype=object))
        empty.insert(0, "gshare", pd.Series(dtype=object))
        empty.insert(1, "vo", pd.Series(dtype=object))
        empty.insert(3, "produsername", pd.Series(dtype=object))
        return empty
    return pd.concat(parts, ignore_index=True)
