"""Pilots (jedi-lifecycle.md §7.3, §11): getJob takes activated jobs into each queue's free slots, and a payload
that reached its walltime ends (running -> holding, the job output report sent)."""

from __future__ import annotations

import numpy as np

from brokerage.model import profiles
from brokerage.model.gdpconfig import Config
from brokerage.model.workqueues import sorted_leaves, stretched_targets
from brokerage.sim import machines, retry
from brokerage.sim.jobs import JobTable, S, status_mask
from brokerage.sim.setup import NO_PILOT_STATUSES
from brokerage.sim.state import SimState

_BUSY = status_mask([S["sent"], S["starting"], S["running"]])  # a pilot holds the job: its slot is taken
DEFAULT_SLOPPY_RATIO = 10  # getSortingCriteria's value when SLOPPY_DISPATCH_RATIO is unset or 0
MAX_PRIORITY = 2**14 - 1  # currentPriority is below it (merge jobs 5000, boosted tasks 900, scouts 901)


def pack(*keys: np.ndarray) -> np.ndarray:
    """One int64 sort key from non-negative integer KEYS, most significant first (np.lexsort over 4 keys costs
    several times one argsort); falls back to lexsort ranks when they do not fit in 63 bits.

    Usage: ``order = np.argsort(pack(queue, rank, priority, panda_id), kind="stable")``
    """
    bits = [max(1, int(k.max()).bit_length()) if len(k) else 1 for k in keys]
    if sum(bits) > 63:
        order = np.lexsort(tuple(reversed(keys)))
        out = np.empty(len(order), np.int64)
        out[order] = np.arange(len(order))
        return out
    packed = np.zeros(len(keys[0]), np.int64)
    for k, b in zip(keys, bits, strict=True):
        packed = (packed << b) | k.astype(np.int64)
    return packed


def place_in_group(groups: np.ndarray) -> np.ndarray:
    """Each element's place in its run of equal values of GROUPS (sorted by group): 0 for the first of each run.

    Usage: ``place_in_group(np.array([3, 3, 5, 7, 7, 7]))  # [0, 1, 0, 0, 1, 2]``
    """
    if len(groups) == 0:
        return np.zeros(0, np.int64)
    starts = np.r_[0, np.flatnonzero(np.diff(groups)) + 1]
    return np.arange(len(groups)) - np.repeat(starts, np.diff(np.r_[starts, len(groups)]))


def within_reach(queue: np.ndarray, level: np.ndarray, free: np.ndarray, rounds: int = 8) -> np.ndarray:
    """Which candidates (at QUEUE, with sort LEVEL, in PandaID order) are among the FREE[queue] first of their queue
    by (level, PandaID): every one below the lowest level where the queue's count reaches its free slots, and the
    oldest at that level up to the slots left. A queue not resolved within ROUNDS levels keeps every candidate (the
    caller's full sort decides there).

    Usage: ``near = within_reach(cq, (rank << 14) | prio, free)``
    """
    top = np.iinfo(np.int64).max
    limit = np.full(len(free), top)  # the level each queue is filled at (top: all its candidates fit)
    need = free.astype(np.int64)
    idx = np.arange(len(queue))
    for _ in range(rounds):
        if len(idx) == 0:
            break
        q, lv = queue[idx], level[idx]
        lo = np.full(len(free), top)
        np.minimum.at(lo, q, lv)
        at = lv == lo[q]
        got = np.bincount(q[at], minlength=len(free))
        filled = (got > 0) & (got >= need)
        limit[filled] = lo[filled]
        need = need - got
        idx = idx[~at & ~filled[q]]  # the next level of the queues not filled yet
    unresolved = np.zeros(len(free), bool)
    unresolved[queue[idx]] = True
    lim = limit[queue]
    below = level < lim
    edge = np.flatnonzero(level == lim)  # at the level a queue is filled at: the oldest first
    left = free - np.bincount(queue[below], minlength=len(free))
    eq = queue[edge]
    order = np.argsort(eq, kind="stable")  # by queue, PandaID order kept within each
    occ = np.empty(len(edge), np.int64)
    occ[order] = place_in_group(eq[order])
    keep = below | unresolved[queue]
    keep[edge[occ < left[eq]]] = True
    return keep


def dispatch(state: SimState, now: float) -> None:
    """Pilots take activated jobs up to each queue's free slots: the most under-pledged share's, then priority,
    then age (seed 003's fairshare in the job dispatcher). Under ``age_ordered_dispatch_as_panda`` each getJob
    throws PanDA's dice (§7.3): with probability ``age_ordered_fraction`` it takes the oldest activated job, so of
    a queue's F free slots Binomial(F, p) take its oldest jobs and the rest go by share. getJob (sent) and the
    first heartbeat (running) fall in the same tick.

    Usage: ``pilots.dispatch(state, state.now)``
    """
    j, g = state.jobs, state.g
    q = j["computingSite"]
    confirm(state, now)
    nq, ns = len(g.queues), len(g.shares)
    by_qs = state.index.queue_share()  # the live jobs per (status, queue x share), kept by the moves
    busy = by_qs[_BUSY].sum(axis=0).reshape(nq, ns).sum(axis=1)
    free = np.maximum(g.slots - busy, 0)
    free[np.isin(g.queue_status, NO_PILOT_STATUSES)] = 0
    act = state.live_rows("activated")
    aq = q[act]
    pick = free[aq] > 0
    cand, cq = act[pick], aq[pick]
    if len(cand) == 0:
        return
    per_share = by_qs.reshape(-1, nq, ns).sum(axis=1)  # live jobs per (status, share)
    share_rank = _share_rank(state, per_share[S["running"]], per_share[S["activated"]])
    p_age = age_ordered_fraction(state.config)
    by_age = state.rng.binomial(free, p_age) if p_age > 0 else np.zeros_like(free)
    oldest = _oldest_per_queue(cq, by_age)  # the age-ordered getJobs take their queue's oldest activated jobs
    waiting = by_qs[S["activated"]].reshape(nq, ns).copy()  # per (queue, share) the jobs left for the fair share
    if by_age.any():
        np.subtract.at(waiting, (cq[oldest], j["gshare"][cand[oldest]]), 1)
    rest = np.flatnonzero(~oldest)
    rc = cand[rest]
    first = _first_per_queue(rc, cq[rest], share_rank, waiting, free - by_age, j)
    take = np.concatenate([cand[oldest], rc[first]])
    if len(take) == 0:
        return
    state.log.add(now, j["PandaID"][take], "activated", "running", "dispatch", free[q[take]])
    state.move_jobs(take, "running", via=machines.DISPATCHED_VIA)
    j.cols["startTime"][take] = now
    state.laststart[np.unique(q[take])] = now  # SiteData.laststart: R5 reads it (seed 000 "Timeout Rules")


def age_ordered_fraction(config: Config) -> float:
    """The fraction of getJobs that take the queue's oldest activated job: none under the seed's fairshare; under
    the switch ``age_ordered_dispatch_as_panda`` (SLOPPY_DISPATCH_RATIO + 1) / 100, where 0 reads as unset (10)
    as getSortingCriteria does (``if not sloppy_ratio``) and a negative ratio sends none.

    Usage: ``age_ordered_fraction(Config().with_overrides({"RULES": "panda-1.0.4"}))  # 0.11``
    """
    if not profiles.rule(config, "age_ordered_dispatch_as_panda"):
        return 0.0
    ratio = int(config["SLOPPY_DISPATCH_RATIO"]) or DEFAULT_SLOPPY_RATIO
    return max(ratio + 1, 0) / 100.0


def _oldest_per_queue(cq: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """Which candidates (at queues CQ, in PandaID order) are among the SLOTS[queue] oldest of their queue: a mask."""
    out = np.zeros(len(cq), bool)
    some = np.flatnonzero(slots[cq] > 0)
    if len(some) == 0:
        return out
    sq = cq[some]
    small = sq.astype(np.int16) if len(slots) < 2**15 else sq  # numpy's stable sort is a radix sort at 16 bits
    order = np.argsort(small, kind="stable")  # PandaID order kept within each queue
    qs = sq[order]
    out[some[order[place_in_group(qs) < slots[qs]]]] = True
    return out


def _first_per_queue(
    cand: np.ndarray, cq: np.ndarray, share_rank: np.ndarray, waiting: np.ndarray, slots: np.ndarray, j: JobTable
) -> np.ndarray:
    """Which of the candidate rows CAND (at queues CQ, in PandaID order) are among the SLOTS[queue] first of their
    queue by (share rank, priority, PandaID): a mask over CAND. WAITING (the candidates per queue x share) finds at
    each queue the share its slots run out in: every candidate of a share before it is taken, and only that
    share's are sorted (a backlog of 400,000 shrinks to a few thousand)."""
    nq, ns = waiting.shape
    by_rank = np.argsort(share_rank, kind="stable")  # the shares in the order they are served
    place = np.empty(ns, np.int64)
    place[by_rank] = np.arange(ns)
    cum = waiting[:, by_rank].cumsum(axis=1)
    filled = cum >= slots[:, None]
    edge_at = np.where(filled.any(axis=1), filled.argmax(axis=1), ns)  # ns: every candidate of the queue fits
    before = np.where(edge_at > 0, cum[np.arange(nq), np.maximum(edge_at - 1, 0)], 0)
    left = np.where(edge_at < ns, slots - before, 0)
    at = place[j["gshare"][cand]]
    out = at < edge_at[cq]
    edge = np.flatnonzero(at == edge_at[cq])
    if len(edge) == 0:
        return out
    eq = cq[edge]
    prio = (MAX_PRIORITY - np.clip(j["currentPriority"][cand[edge]], 0, MAX_PRIORITY)).astype(np.int64)
    # the keys are unique (PandaID is the last one), so any sort gives the one order
    near = np.flatnonzero(within_reach(eq, prio, left))
    order = near[np.argsort(pack(eq[near], prio[near], j["PandaID"][cand[edge[near]]]))]
    sq = eq[order]
    out[edge[order[place_in_group(sq) < left[sq]]]] = True
    return out


def confirm(state: SimState, now: float) -> None:
    """Jobs a pilot holds in sent or starting (the snapshot's) at a queue with pilots report running: the pilot's
    updateJob (§2, sent/starting -> running); their payload starts now. A sent job silent for 30 min is the
    Watcher's (H3) before this.

    Usage: ``pilots.confirm(state, state.now)``
    """
    j = state.jobs
    rows = state.live_rows("sent", "starting")
    rows = rows[~np.isin(state.g.queue_status, NO_PILOT_STATUSES)[j["computingSite"][rows]]]
    if len(rows) == 0:
        return
    hours = (now - j["modificationTime"][rows]) / 3600.0
    state.log.add(now, j["PandaID"][rows], j["jobStatus"][rows], "running", "pilot_update", hours)
    state.move_jobs(rows, "running")
    j.cols["startTime"][rows] = now
    state.laststart[np.unique(j["computingSite"][rows])] = now


def _share_rank(state: SimState, running: np.ndarray, activated: np.ndarray) -> np.ndarray:
    """Per share (RUNNING, ACTIVATED: its running and activated jobs), its place in JEDI's sorted leaves (0 first);
    shares outside the tree after every leaf."""
    g = state.g
    n_tree = len(g.tree.names)
    rank = np.arange(len(g.shares), dtype=np.int64)
    target = share_targets(state, running, activated)[:n_tree]
    rank[:n_tree] = sorted_leaves(g.tree, running[:n_tree].astype(float), target)
    return rank


def share_targets(state: SimState, running: np.ndarray, activated: np.ndarray) -> np.ndarray:
    """Per share its pledge in % of the grid: seed 003's "unused CPU to active queues, stretchable queues first"
    (a share is active with running or activated jobs; ``stretched_targets``); the tree's own targets under the
    switch ``stretchable_shares_as_jedi``.

    Usage: ``share_targets(state, running_per_share, activated_per_share)``
    """
    g = state.g
    target = np.zeros(len(g.shares))
    n_tree = len(g.tree.names)
    if profiles.rule(state.config, "stretchable_shares_as_jedi"):
        target[:n_tree] = g.tree.target
        return target
    target[:n_tree] = stretched_targets(g.tree, (running + activated)[:n_tree] > 0)
    return target


def end_payloads(state: SimState, now: float) -> None:
    """Payloads that reached their walltime (failing ones part-way) end: running -> holding.

    Usage: ``pilots.end_payloads(state, state.now)``
    """
    j = state.jobs
    run = state.live_rows("running")
    # a failing payload fails half-way, one killed at the queue's maxtime at its end
    part = j["willFail"][run] & (j["errorCode"][run] != retry.REACHEDMAXTIME)
    length = np.where(part, 0.5 * j["runSeconds"][run], j["runSeconds"][run])
    ended = run[j["startTime"][run] + length <= now]
    alive = ~np.isin(state.g.queue_status, NO_PILOT_STATUSES)[j["computingSite"][ended]]
    ended = ended[alive]  # a queue without pilots reports nothing: its jobs are left to the heartbeat rules
    if len(ended):
        hours = (now - j["startTime"][ended]) / 3600.0
        state.log.add(now, j["PandaID"][ended], "running", "holding", "pilot_end", hours)
        state.move_jobs(ended, "holding")
        j.cols["endTime"][ended] = now
