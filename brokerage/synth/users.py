"""The analysis users of the demo grid: their names and groups, their jobs per (queue, user, share), the
Analysis Stabilizer's long user queues, disk quota, and the ``user_job_counts`` and ``users`` tables."""

from __future__ import annotations

from typing import Any

import numpy as np

from brokerage.synth.common import (
    BASE_QUEUE_LENGTH,
    BASE_QUEUE_RATIO,
    BASE_USER_QUEUE,
    BASE_WAIT_H,
    MAX_WAIT_H,
    STATIC_QR_RATIO,
)
from brokerage.synth.queues import Queues
from brokerage.synth.shares import ANAL_P, ANAL_SHARES, USER_STATUSES

_GROUPS = ("phys-higgs", "phys-susy", "phys-top", "phys-exotics", "phys-sm", "perf-egamma", "perf-muons", "perf-jets")
_FIRST = (
    "Anna", "Ben", "Chiara", "David", "Elena", "Felix", "Giulia", "Hiro", "Ines", "Jakub", "Kenji", "Laura",
    "Marco", "Nadia", "Oscar", "Paula", "Qiang", "Rosa", "Stefan", "Tomoko", "Ugo", "Vera", "Wei", "Yuki",
)  # fmt: skip
_LAST = (
    "Abe", "Bauer", "Costa", "Dubois", "Eriksson", "Fischer", "Garcia", "Horvat", "Ivanova", "Jensen", "Kowalski",
    "Lindqvist", "Moreau", "Novak", "Okafor", "Petrov", "Quinn", "Rossi", "Schmidt", "Tanaka", "Urban", "Varga",
    "Wang", "Yilmaz",
)  # fmt: skip


def _user_names(rng: np.random.Generator, n: int) -> np.ndarray:
    """N distinct personal names, as PanDA shows prodUserName."""
    combos = [f"{f} {last}" for f in _FIRST for last in _LAST]
    pick = rng.permutation(len(combos))
    names = [combos[i] for i in pick[: min(n, len(combos))]]
    names += [f"{combos[pick[i % len(combos)]]} {i // len(combos) + 1}" for i in range(len(names), n)]
    return np.array(names, dtype=object)


def make_users(rng: np.random.Generator, n_users: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Names, popularity (a few users submit most work) and physics group of N_USERS users."""
    users = _user_names(rng, n_users)
    user_pop = 1.0 / (np.arange(n_users) + 5.0) ** 1.1
    user_pop /= user_pop.sum()
    user_group = rng.choice(np.array(_GROUPS, dtype=object), size=n_users)
    return users, user_pop, user_group


def quota_users(n_users: int) -> list[int]:
    """Two occasional users whose global disk quota is exceeded."""
    return sorted({n_users // 2, n_users // 2 + 1} & set(range(n_users)))


def user_pairs(
    rng: np.random.Generator,
    q: Queues,
    sf: np.ndarray,
    r_anal: np.ndarray,
    act_ratio: np.ndarray,
    user_pop: np.ndarray,
) -> dict[str, np.ndarray]:
    """Jobs per (queue, user, analysis share): users spread over the analysis queues by popularity, the queue's
    running analysis jobs R_ANAL split among them."""
    n, n_users = q.n, len(user_pop)
    aq = np.flatnonzero((q.type != "production") & (r_anal > 0))
    is_ana = q.type[aq] == "analysis"
    k = np.where(
        is_ana, np.clip(1 + rng.poisson(3 + 3 * np.minimum(sf[aq], 3.0)), 1, 40), 1 + rng.poisson(1.5, len(aq))
    )
    pq = np.repeat(aq, k)
    pu = rng.choice(n_users, size=len(pq), p=user_pop)
    pg = rng.choice(3, size=len(pq), p=ANAL_P)
    key = (pq * n_users + pu) * 3 + pg
    key, inverse = np.unique(key, return_inverse=True)
    w = np.bincount(inverse, weights=rng.lognormal(0.0, 1.0, len(pq)), minlength=len(key))
    pq, rest = np.divmod(key, n_users * 3)
    pu, pg = np.divmod(rest, 3)
    W = np.bincount(pq, weights=w, minlength=n)
    p_run = np.round(r_anal[pq] * w / W[pq])
    p_act = np.round(p_run * act_ratio[pq] * rng.lognormal(0.0, 0.5, len(pq))) + np.where(
        rng.random(len(pq)) < 0.3, rng.integers(1, 10, len(pq)), 0
    )
    return {
        "queue": pq,
        "user": pu,
        "share": pg,
        "running": p_run,
        "activated": p_act,
        "assigned": np.round(p_act * rng.uniform(0.0, 0.08, len(pq))),
        "starting": np.round(p_run * rng.uniform(0.0, 0.03, len(pq))),
        "defined": np.round(p_act * rng.uniform(0.0, 0.06, len(pq))),
    }


def stabilize(rng: np.random.Generator, pairs: dict[str, np.ndarray], candidates: np.ndarray, trr: np.ndarray) -> None:
    """Analysis Stabilizer cases: one User Analysis user with a long queue at ~10% of the CANDIDATES queues, and
    a slow to-running rate TRR there (pairs and trr changed in place)."""
    pq, ua = pairs["queue"], pairs["share"] == 0
    n_ua_users = np.bincount(pq[ua], minlength=len(trr))
    cand = np.flatnonzero(candidates & (n_ua_users >= 3))
    stab = rng.choice(cand, size=min(len(cand), max(3, round(0.1 * len(cand)))), replace=False) if len(cand) else cand
    stab = np.sort(stab)
    for s in stab.tolist():
        rows = np.flatnonzero(ua & (pq == s))
        victim = rows[np.argmin(pairs["running"][rows])]
        nR = float(pairs["running"][rows].sum())
        frac = max(1.0 / len(rows), pairs["running"][victim] / nR if nR > 0 else 0.0)
        others = float(sum(pairs[st][rows].sum() for st in USER_STATUSES[1:]) - pairs["activated"][victim])
        max_nq = max(BASE_QUEUE_LENGTH, STATIC_QR_RATIO * nR)
        max_len = max(BASE_USER_QUEUE, BASE_QUEUE_RATIO * nR, max_nq * frac)
        want = np.ceil(max(max_len * rng.uniform(1.3, 2.0), BASE_QUEUE_LENGTH + 10))
        pairs["activated"][victim] = want
        nq_total = others + want
        # slow to-running rate: nQ(PQ) >= BASE_EXPECTED_WAIT_HOUR_ON_PQ x trr, and MAX_EXPECTED_WAIT_HOUR x trr stays small
        trr[s] = np.round(
            min(nq_total / (BASE_WAIT_H * rng.uniform(1.2, 2.0)), 2 * STATIC_QR_RATIO * nR / MAX_WAIT_H), 1
        )


def user_rows(
    q: Queues, pairs: dict[str, np.ndarray], users: np.ndarray, user_group: np.ndarray
) -> tuple[dict[str, Any], dict[str, Any]]:
    """user_job_counts rows, and the users table with running slots at hi-class sites."""
    p = pairs
    cores = np.where((q.type == "analysis") & (q.corecount > 1), q.corecount, 1)[p["queue"]]
    parts = []
    for st in USER_STATUSES:
        idx = np.flatnonzero(p[st] > 0)
        parts.append((idx, np.full(len(idx), st, dtype=object), p[st][idx]))
    idx = np.concatenate([x[0] for x in parts])
    st = np.concatenate([x[1] for x in parts])
    nj = np.concatenate([x[2] for x in parts]).astype(np.int64)
    order = np.lexsort((idx,))
    idx, st, nj = idx[order], st[order], nj[order]
    share = p["share"][idx]
    user = p["user"][idx]
    wg = np.where(share == 2, user_group[user], "").astype(object)
    rows = {
        "panda_queue": q.name[p["queue"][idx]],
        "gshare": np.array(ANAL_SHARES, dtype=object)[share],
        "produsername": users[user],
        "workinggroup": wg,
        "jobstatus": st,
        "njobs": nj,
        "ncores": nj * cores[idx],
    }
    hi = (q.cols["site_class"] == 1.0)[p["queue"]]
    slots = np.bincount(p["user"], weights=p["running"] * cores * hi, minlength=len(users))
    table = {
        "produsername": users,
        "running_slots_hi": slots.astype(np.int64),
        "disk_quota_exceeded": np.isin(np.arange(len(users)), quota_users(len(users))),
    }
    return rows, table
