"""JobGenerator with the job throttler (jedi-lifecycle.md §8, §9.1): per aligned work queue x resource type the
throttler's budget, then the tasks in priority order, each chunk brokered and its jobs drawn over the candidates."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.sim import brokering, jobsize, machines, retry
from brokerage.sim.jobs import IS_NOT_RUN, S
from brokerage.sim.scouts import scout_priority
from brokerage.sim.setup import MAX_ATTEMPT, MAX_FAILURE
from brokerage.sim.state import DEFAULT_RAM_MB, MAX_WALL_S, MIN_WALL_S, Files, SimState
from brokerage.sim.status_index import RT_SLOTS
from brokerage.sim.throttler import high_prio_queued, limits_of, override, throttle

GENERATING = ("ready", "running", "scouting")  # task statuses JobGenerator reads (§9.1)
STAGEIN_SHARE = 0.4  # of the failures the queues' failure rates make: stage-in (pilot 1099), the rest the payload's


def counts(state: SimState) -> dict[tuple[int, int], tuple[int, int, int]]:
    """(running, notRun, defined) per (aligned work queue, resource type) of the live jobs, from the counts the
    moves keep (``state.index``).

    Usage: ``counts(state)[(0, 0)]``
    """
    by_wr = state.index.by_wr
    running, define = by_wr[S["running"]], by_wr[S["defined"]]
    not_run = by_wr[IS_NOT_RUN].sum(axis=0)
    out: dict[tuple[int, int], tuple[int, int, int]] = {}
    for s in range(len(state.g.work_queues)):
        for r in range(len(state.g.rtypes)):
            k = s * RT_SLOTS + r
            out[(s, r)] = (int(running[k]), int(not_run[k]), int(define[k]))
    return out


def tick(state: SimState, now: float) -> None:
    """One JobGenerator cycle: the tasks in GENERATING with inputs to give (new ones exposed, or back for a retry),
    grouped by aligned work queue x resource type, each group within the throttler's budget.

    Usage: ``jobgen.tick(state, state.now)``
    """
    t = state.tasks
    status = t["status"].to_numpy(object)
    ids = t.index.to_numpy(np.int64)
    used = t["nFilesUsed"].to_numpy(np.int64).copy()
    rows = np.flatnonzero(np.isin(status, GENERATING) & (state.task_w >= 0) & (state.task_r >= 0))
    pool = retry_counts(state.retry_pool, ids[rows])
    exposed = np.minimum(t["nFiles"].to_numpy(np.int64), t["nFilesToBeUsed"].to_numpy(np.int64))
    avail = exposed[rows] - used[rows] + pool
    scouts = t["useScout"].to_numpy(bool) & np.isin(status, ("ready", "scouting"))
    rows, avail = rows[avail > 0], avail[avail > 0]
    if len(rows) == 0:
        return
    per_queue = counts(state)
    state.live_counts = brokering.count_live(state)  # the brokers' weights and caps read them (brokering.live)
    prio = t["currentPriority"].to_numpy(float)[rows]
    order = np.lexsort((-prio, state.task_r[rows], state.task_w[rows]))  # stable: equal priorities keep task order
    rows, avail, prio = rows[order], avail[order], prio[order]
    w_of, r_of = state.task_w[rows], state.task_r[rows]
    starts = np.flatnonzero(np.r_[True, (np.diff(w_of) != 0) | (np.diff(r_of) != 0)])
    for a, b in zip(starts, np.r_[starts[1:], len(rows)], strict=True):
        w, r = int(w_of[a]), int(r_of[a])
        label = state.static[int(ids[rows[a]])][3]
        budget, floor = _budget(state, w, r, per_queue[(w, r)], float(prio[a]), label)
        for k in range(a, b):
            if budget <= 0 or prio[k] < floor:
                break
            row = int(rows[k])
            n = min(int(avail[k]), int(state.task_chunk[row]), budget)
            made, new_units = make_jobs(state, int(ids[row]), n, int(state.task_s[row]), w, r, status[row],
                                        bool(scouts[row]))  # fmt: skip
            budget -= made
            used[row] += new_units
    t["nFilesUsed"] = used
    flush(state, now)
    state.add_live()


def flush(state: SimState, now: float) -> None:
    """The jobs this cycle made (``state.new_jobs``, in the order they were made) join the job table in one append,
    are checked against the job machine and logged (activated by "generate", each with its draw's probability and
    its ramCount).

    Usage: ``jobgen.flush(state, state.now)``
    """
    if not state.new_jobs:
        return
    made, state.new_jobs, state.new_n = state.new_jobs, [], 0
    sizes = [len(m["fileID"]) for m in made]
    # a chunk's jobs share most columns' values: kept once per chunk, spread over its jobs here in one go
    cols = {
        k: np.concatenate([m[k] for m in made]) if isinstance(v, np.ndarray) else np.repeat([m[k] for m in made], sizes)
        for k, v in made[0].items()
    }
    p = cols.pop("_p")
    rows = state.jobs.append(**cols)
    pids = state.jobs["PandaID"][rows]
    machines.check_job_births(pids, "activated", machines.GENERATED_VIA)
    state.log.add(now, pids, "-", "activated", "generate", p, cols["ramCount"])


def retry_counts(retry_pool: dict[int, list[int]], tids: np.ndarray) -> np.ndarray:
    """Per task of TIDS, its inputs back for a retry (``state.retry_pool``; only a few tasks have any).

    Usage: ``retry_counts({42: [7, 8]}, np.array([41, 42]))``
    """
    held = {tid: len(units) for tid, units in retry_pool.items() if units}
    out = np.zeros(len(tids), np.int64)
    if held:
        at = np.flatnonzero(np.isin(tids, np.fromiter(held, np.int64, len(held))))
        out[at] = [held[int(t)] for t in tids[at]]
    return out


def _budget(
    state: SimState, w: int, r: int, counted: tuple[int, int, int], top: float, label: str
) -> tuple[int, float]:  # fmt: skip
    """The job throttler's verdict for work queue W x resource type R (kept for the run's output): its max jobs and
    the minPriority of the high-priority override (a SKIP but g passes when a waiting task at priority TOP
    outranks the work queue's jobs: highPrioQueued, production only)."""
    wq, rtype = state.g.work_queues[w], state.g.rtypes[r]
    limits = state.limits.get((wq, rtype))
    if limits is None:
        limits = state.limits[(wq, rtype)] = limits_of(state.config, wq, rtype)
    verdict = throttle(state.config, wq, rtype, *counted, limits=limits, throttled=bool(state.g.wq_throttled[w]))
    if verdict.throttled and verdict.rule != "g" and label != "user":
        in_panda, n_top = top_in_panda(state, w, r)
        if high_prio_queued(top, in_panda, n_top, False):
            # the overridden SKIPs let the later checks run: NRUNNINGCAP (g) is never overridden
            capped = limits[2] and counted[0] > limits[2]
            verdict = throttle(state.config, wq, rtype, counted[0], 0, 0, limits=limits) if capped else override(
                verdict, top)  # fmt: skip
    state.verdicts[(wq, rtype)] = verdict
    return (0 if verdict.throttled else verdict.max_jobs), verdict.min_priority


def top_in_panda(state: SimState, w: int, r: int) -> tuple[float, int]:
    """JOB_STATS_HP for work queue W x resource type R as of the brokers' last refresh (``state.hp_stats``, a
    pre-aggregated table in PanDA too): the highest currentPriority among its live jobs and how many of those are
    not running yet; minus infinity and 0 without jobs.

    Usage: ``top_in_panda(state, 0, 0)``
    """
    return state.hp_stats.get((w, r), (float("-inf"), 0))


def make_jobs(
    state: SimState, tid: int, n: int, s: int, w: int, r: int, status: str, scout: bool = False
) -> tuple[int, int]:
    """Broker task TID (in STATUS) and insert N activated jobs (SCOUT: scout jobs) at the drawn queues:
    (jobs made, new units). Inputs back for a retry with a raised ramCount are brokered with it; when no queue
    fits it they wait (the task goes pending if nothing could be made).

    Usage: ``made, new_units = make_jobs(state, 42, 10, 0, 0, 0, "ready")``
    """
    got = brokering.choices(state, tid)
    if got is None:
        hold(state, tid, status, brokering.decision(state, tid).message)
        return 0, 0
    task_ram = state.task_ram[tid]
    pool = state.retry_pool.get(tid, [])
    reuse = np.asarray(pool[:n], np.int64)
    rams = np.maximum(state.files.ramCount[reuse], task_ram) if pool else reuse
    groups: list[tuple[np.ndarray, float, tuple[np.ndarray, np.ndarray]]] = []
    waiting: list[int] = []
    for ram in np.unique(rams).tolist() if pool else ():  # most chunks have no retried inputs
        fids = reuse[rams == ram]
        chunk = got if ram <= task_ram else brokering.choices(state, tid, ram)
        if chunk is None:
            waiting.extend(fids.tolist())
        else:
            groups.append((fids, ram, chunk))
    state.retry_pool[tid] = waiting + pool[n:]
    _basewall, _cpu, _cores, label, _prio = state.static[tid]
    new = state.files.add(tid, n - len(reuse), MAX_ATTEMPT.get(label, 3), MAX_FAILURE.get(label, 10**6))
    if len(new):
        jobsize.take_tail(state, tid, new)
        groups.append((new, task_ram, got))
    made = 0
    for fids, ram, (queues, p) in groups:
        made += insert_jobs(state, tid, fids, ram, queues, p, (s, w, r), scout)
    if made == 0:
        hold(state, tid, status, f"no queue has the memory its retried inputs need ({max(rams):g} MB)")
        return 0, len(new)
    state.jobs_made[state.task_rows(np.array([tid]))] += made
    if status == "ready":
        new_status, why = ("scouting", "first scout jobs submitted") if scout else ("running", "first jobs submitted")
        flush(state, state.now)  # the log keeps its order: the jobs, then the task's move they caused
        state.move_tasks(pd.Index([tid]), new_status, f"JobGenerator: {why}")
    return made, len(new)


def hold(state: SimState, tid: int, status: str, why: str) -> None:
    """setOnHold: a task whose chunks found no queue goes pending (frozenTime set on its first pending).

    Usage: ``hold(state, 42, "running", "no queue passed the memory check")``
    """
    if status == "pending":
        return
    if np.isnan(state.tasks.at[tid, "frozenTime"]):
        state.tasks.at[tid, "frozenTime"] = state.now
    flush(state, state.now)
    state.move_tasks(pd.Index([tid]), "pending", f"JobGenerator: brokerage found no queue ({why})")


def insert_jobs(
    state: SimState, tid: int, fids: np.ndarray, ram: float, queues: np.ndarray, p: np.ndarray,
    swr: tuple[int, int, int], scout: bool,
) -> int:  # fmt: skip
    """Activated jobs for TID, one per input unit FIDS, brokered with ramCount RAM, each at a queue drawn from
    QUEUES with probabilities P, in the share, work queue and resource type SWR, each the size that fits its queue
    (jobsize.shares_at; the input a shortened job leaves becomes new units). A payload whose memory peak
    exceeds twice the queue's maxrss (scaled to the job's cores on a multi-core queue) will be killed by the pilot
    (PAYLOADEXCEEDMAXMEM).

    Usage: ``insert_jobs(state, 42, fids, 2000.0, queues, p, (0, 0, 0), False)``
    """
    n, g = len(fids), state.g
    pick = draw(state.rng, p, n)
    q = queues[pick]
    basewall, cpu, cores, label, prio = state.static[tid]
    state.files.status[fids] = Files.RUNNING
    if scout:
        prio = scout_priority(prio)
    qcores = g.queue_cores[q]
    # a task asking any core count runs with the queue's; its CPU work and per-core memory scale with it
    job_cores = np.where(qcores > 0, qcores, cores) if tid in state.any_cores else np.full(n, float(cores))
    scale = cores / job_cores
    held = state.files.share[fids]
    share = jobsize.shares_at(state, tid, held, q, job_cores, scout)  # the events that fit the queue's limits
    state.files.share[fids] = share
    noise = state.rng.lognormal(0.0, 0.15, n)
    wall = basewall + cpu * share * scale * state.true_cpu.get(tid, 1.0) * noise / g.corepower[q]
    maxtime = g.maxtime_s[q]
    time_kill = (maxtime > 0) & (wall > maxtime)  # the batch system ends the payload at the queue's maxtime
    wall = np.clip(wall, MIN_WALL_S, np.where(maxtime > 0, maxtime, MAX_WALL_S))
    pss = state.true_ram_mb.get(tid, DEFAULT_RAM_MB) * state.rng.lognormal(0.0, 0.1, n)
    if tid in state.per_core:
        pss = pss / scale
    limit = 2.0 * g.maxrss[q] * np.where(qcores > 0, job_cores / np.maximum(qcores, 1), 1.0)
    mem_kill = (limit > 0) & (pss > limit)
    fails = mem_kill | time_kill | (state.rng.random(n) < g.failure_rate[q])
    code, source = failure_codes(state.rng, fails, mem_kill, time_kill)
    s, w, r = swr
    vo = brokering.vo_code(state, tid)
    now = state.now
    state.new_jobs.append({  # arrays per job, scalars for the chunk's jobs (spread by flush)
        "jediTaskID": tid, "computingSite": q, "jobStatus": S["activated"], "gshare": s, "workQueue": w,
        "resource_type": r, "nucleus": state.task_nucleus[tid], "vo": vo, "prodSourceLabel": int(label == "user"),
        "currentPriority": prio, "maxPSS": pss, "isScout": scout, "ramCount": ram,
        "attemptNr": state.files.attemptNr[fids] + 1, "coreCount": job_cores, "fileID": fids, "creationTime": now,
        "modificationTime": now, "stateChangeTime": now, "activationTime": now, "runSeconds": wall,
        "willFail": fails, "errorCode": code, "errorSource": source, "_p": p[pick],
    })  # fmt: skip
    first = state.jobs.n + state.new_n  # the rows the jobs will have once flushed
    state.new_n += n
    rows = np.arange(first, first + n)
    state.new_rows.append(rows)
    brokering.placed(state, q, s, vo)
    if scout:
        state.scout_rows.setdefault(tid, []).append(rows)
    jobsize.credit(state, tid, float((held - share).sum()))  # the input the shortened jobs left
    return n


def draw(rng: np.random.Generator, p: np.ndarray, n: int) -> np.ndarray:
    """N indices drawn with probabilities P, the numbers ``rng.choice(len(p), n, p=p)`` gives (its inverse-CDF draw
    on the same uniforms) without its per-call checks of P, which the brokers' weights already pass.

    Usage: ``pick = draw(rng, np.array([0.25, 0.75]), 10)``
    """
    cdf = p.cumsum()
    cdf /= cdf[-1]
    return cdf.searchsorted(rng.random(n), side="right")


def failure_codes(
    rng: np.random.Generator, fails: np.ndarray, mem_kill: np.ndarray, time_kill: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(errorCode, errorSource) of jobs whose payload FAILS (0 for the others): REACHEDMAXTIME for a payload past
    the queue's maxtime, PAYLOADEXCEEDMAXMEM for a memory kill, else a stage-in failure (pilot, a system error)
    or a transformation error (exe), in STAGEIN_SHARE proportion.

    Usage: ``code, source = failure_codes(rng, fails, mem_kill, time_kill)``
    """
    code = np.zeros(len(fails), np.int64)
    source = np.zeros(len(fails), np.int64)
    if not fails.any():
        return code, source
    stagein = rng.random(len(fails)) < STAGEIN_SHARE
    code[fails] = np.where(stagein, retry.STAGEINFAILED, retry.TRANSFORM_FAILED)[fails]
    src = retry.SOURCE_CODE
    source[fails] = np.where(stagein, src["pilot"], src["exe"])[fails]
    code[time_kill] = retry.REACHEDMAXTIME
    code[mem_kill] = retry.PAYLOADEXCEEDMAXMEM  # the memory peak comes before the end of the walltime
    source[mem_kill | time_kill] = src["pilot"]
    return code, source
