"""Where each share's jobs may sit on the demo grid: the queues its tasks' job brokerage accepts (issue 30)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from brokerage.brokers.router import run_job_brokerage
from brokerage.model.cache import cache_for
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot


def reach(snap: GridSnapshot, shares: Sequence[str], config: Config | None = None) -> np.ndarray:
    """Each share's demand per queue, (queue, share), queues in ``snap.queues`` order and shares in SHARES order:
    the sum over the share's tasks of the queue's draw probability in the task's job brokerage under CONFIG (the
    stored config by default: a candidate's weight over the weights of all its candidates), 0 where no task of
    the share can go. Jobs placed in proportion to it sit where the share's own tasks send jobs.

    Usage: ``demand = reach(snap, SHARES); (demand[:, 0] > 0).sum()``
    """
    cache = cache_for(snap, None)
    config = config or Config()
    queue_at = {str(name): i for i, name in enumerate(snap.queues["panda_queue"])}
    share_at = {str(name): k for k, name in enumerate(shares)}
    demand = np.zeros((len(queue_at), len(shares)))
    tasks = snap.tables["tasks"]
    for tid, share in zip(tasks["jeditaskid"].tolist(), tasks["gshare"].tolist(), strict=True):
        k = share_at.get(str(share))
        if k is None:
            continue
        candidates = run_job_brokerage(snap, int(tid), config, cache=cache).candidates
        weights = np.array([max(float(c.weight), 0.0) for c in candidates])
        total = weights.sum()
        for c, w in zip(candidates, weights, strict=True):
            demand[queue_at[c.name], k] += w / total if total > 0 else 1.0 / len(candidates)
    return demand


def spread(counts: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """COUNTS (queue, share) moved so that each share keeps its total, spread over the queues in proportion to
    DEMAND (queue, share); a share without demand anywhere gets none.

    Usage: ``spread(np.array([[4.0], [0.0]]), np.array([[1.0], [3.0]]))``  -> ``[[1.0], [3.0]]``
    """
    total = demand.sum(axis=0, keepdims=True)
    share = np.divide(demand, total, out=np.zeros_like(demand), where=total > 0)
    return np.round(counts.sum(axis=0, keepdims=True) * share)


def restrict(f: np.ndarray, raw: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Share fractions F per queue (rows) kept to the shares MASK allows and summing to 1 again; a queue whose kept
    fractions are all zero falls back to RAW (before small fractions were dropped) within the mask, and one the
    mask closes to every share gets all zeros (no job of these shares can be refilled there).

    Usage: ``restrict(np.array([[0.6, 0.4]]), raw, np.array([[False, True]]))``  -> ``[[0.0, 1.0]]``
    """
    kept = f * mask
    kept = np.where(kept.sum(axis=1, keepdims=True) > 0, kept, raw * mask)
    total = kept.sum(axis=1, keepdims=True)
    return np.divide(kept, total, out=np.zeros_like(kept), where=total > 0)


def move_shares(pairs: dict[str, np.ndarray], mask: np.ndarray, preference: Sequence[float]) -> None:
    """Analysis job pairs (queue, user, share) whose share MASK (queue, analysis share) closes at their queue move
    to the allowed share of largest PREFERENCE there; at a queue no analysis share reaches their counts become 0.
    Pairs that end up with the same key are merged (counts summed). PAIRS change in place.

    Usage: ``move_shares(pairs, mask[:, n_prod:], ANAL_P)``
    """
    order = np.argsort(-np.asarray(preference), kind="stable")
    pq, pg = pairs["queue"], pairs["share"].copy()
    allowed = mask[pq, pg]
    best = np.full(len(pq), -1)
    for g in order[::-1]:  # the most preferred allowed share wins: it is written last
        best = np.where(mask[pq, g], g, best)
    pg = np.where(allowed, pg, np.maximum(best, 0))
    dead = ~allowed & (best < 0)
    counts = [k for k in pairs if k not in ("queue", "user", "share")]
    n_users = int(pairs["user"].max()) + 1 if len(pq) else 1
    key = (pq * n_users + pairs["user"]) * mask.shape[1] + pg
    uniq, inverse = np.unique(key, return_inverse=True)
    merged = {c: np.bincount(inverse, weights=np.where(dead, 0, pairs[c]), minlength=len(uniq)) for c in counts}
    pq_new, rest = np.divmod(uniq, n_users * mask.shape[1])
    user_new, share_new = np.divmod(rest, mask.shape[1])
    pairs.update({"queue": pq_new, "user": user_new, "share": share_new, **merged})
