"""The simulated clock and the agents that move jobs and tasks each cycle (jedi-lifecycle.md §11)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from brokerage.brokers.router import run_job_brokerage
from brokerage.model.cache import GridCache, derived_cache
from brokerage.model.explain import Decision
from brokerage.model.gcpause import gc_paused
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.workqueues import sorted_leaves
from brokerage.sim import commands, retry, task_agent
from brokerage.sim.commands import TaskCommand
from brokerage.sim.events import EventLog
from brokerage.sim.jobs import DEFINED_TABLE, FINAL, NOT_RUN, SUB_TOREASSIGN, JobTable, S
from brokerage.sim.scouts import assess, scout_priority
from brokerage.sim.setup import MAX_ATTEMPT, MAX_FAILURE, NO_PILOT_STATUSES, SimGrid, sim_grid
from brokerage.sim.throttler import Limits, Verdict, limits_of, throttle

TICK_S = 60.0  # the clock's step; JobGenerator (10 s in JEDI) and dispatch run every tick
SAMPLE_S = 600.0  # time series resolution
HEARTBEAT_S = 1800.0  # pilot heartbeat period (pilot3 default.cfg)
GENERATING = ("ready", "running", "scouting")  # task statuses JobGenerator reads (§9.1)
BACKGROUND_WALL_H = 6.0  # median walltime of the jobs the snapshot already holds (their task is unknown)
MIN_WALL_S, MAX_WALL_S = 600.0, 48 * 3600.0
DEFAULT_RAM_MB = 2000.0  # a task without a memory estimate
BOOST_DONE_FRACTION, BOOST_MAX_REMAINING_JOBS, BOOST_PRIORITY = 0.95, 100, 900.0  # the near-completion boost
EXPRESS = "Express"
MIN_JOBS_TO_PAUSE, MIN_REMAINING_JOBS_TO_PAUSE = 1000, 100  # the failure-rate pause applies to big tasks only
Progress = Callable[[int, int], None]
# error code a rule leaves on the job: jobDispatcherErrorCode 100 (lost heartbeat), 103/105 (holding timeout), or
# taskBufferErrorCode 102 (expired, kill code 2) / 100 (reassigned by JEDI, kill code 51); F sets 130 itself
STAGEIN_SHARE = 0.4  # of the failures the queues' failure rates make: stage-in (pilot 1099), the rest the payload's
SOURCE = {name: i + 1 for i, name in enumerate(retry.SOURCES)}  # errorSource codes (0: no error)
MAX_PRIORITY = 2**14 - 1  # currentPriority is below it (merge jobs 5000, boosted tasks 900, scouts 901)


def _pack(*keys: np.ndarray) -> np.ndarray:
    """One int64 sort key from non-negative integer KEYS, most significant first (np.lexsort over 4 keys costs
    several times one argsort); falls back to lexsort ranks when they do not fit in 63 bits."""
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


ERROR_CODES = {"H1": 100, "H8": 100, "H6": 103, "K1": 102, "K2": 102, "K3": 102, "K9": 102, "K10": 102,
               "R5": 100, "R6": 100, "R7": 100, "R8": 100, "R9": 100, "A": 100}  # fmt: skip


FILE_TYPES = {"status": np.int8, "ramCount": np.float64}


class Files:
    """Input units picked at least once (one job's input each), PanDA's per-file counters (§4.1), in growable
    columns: ``task``, ``attemptNr``, ``failedAttempt``, ``maxAttempt``, ``maxFailure``, ``status`` and ``ramCount``
    (MB, or MB per core; 0 until the retry module raises it for the next attempt)."""

    READY, RUNNING, FINISHED, FAILED = 0, 1, 2, 3
    _COLUMNS = ("task", "attemptNr", "failedAttempt", "maxAttempt", "maxFailure", "status", "ramCount")

    def __init__(self) -> None:
        self.n = 0
        self._cols = {c: np.zeros(1024, FILE_TYPES.get(c, np.int64)) for c in self._COLUMNS}

    def __getattr__(self, name: str) -> np.ndarray:
        cols = self.__dict__.get("_cols")
        if cols is None or name not in cols:
            raise AttributeError(name)
        return cols[name][: self.n]

    def add(self, task: int, n: int, max_attempt: int, max_failure: int) -> np.ndarray:
        """N new units of TASK, status running (picked by a job at once); their ids.

        Usage: ``ids = files.add(42, 10, 3, 10**6)``
        """
        if self.n + n > len(self._cols["task"]):
            cap = max(2 * len(self._cols["task"]), self.n + n)
            for c, col in self._cols.items():
                grown = np.zeros(cap, col.dtype)
                grown[: self.n] = col[: self.n]
                self._cols[c] = grown
        ids = np.arange(self.n, self.n + n)
        values = {"task": task, "attemptNr": 0, "failedAttempt": 0, "maxAttempt": max_attempt,
                  "maxFailure": max_failure, "status": self.RUNNING, "ramCount": 0.0}  # fmt: skip
        for c, v in values.items():
            self._cols[c][ids] = v
        self.n += n
        return ids


@dataclass
class Series:
    """Samples every SAMPLE_S: per queue, share and nucleus, and the throttler's verdicts."""

    times: list[float] = field(default_factory=list)
    queue: dict[str, list[np.ndarray]] = field(default_factory=dict)
    share: dict[str, list[np.ndarray]] = field(default_factory=dict)
    nucleus: dict[str, list[np.ndarray]] = field(default_factory=dict)
    work_queue: dict[str, list[np.ndarray]] = field(default_factory=dict)
    throttled: list[list[tuple[str, str, str]]] = field(default_factory=list)


class Simulation:
    """One run: SNAP moved forward under CONFIG, randomness from one generator seeded with SEED.

    Usage: ``sim = Simulation(snap, Config(), seed=1); sim.run(hours=24); sim.result()``
    """

    def __init__(
        self, snap: GridSnapshot, config: Config, seed: int = 0, retry_rules: Sequence[retry.RetryRule] | None = None,
        error_classes: Sequence[retry.ErrorClass] | None = None,
    ) -> None:  # fmt: skip
        self.snap, self.config, self.seed = snap, config, seed
        self.retry_rules = tuple(retry.DEFAULT_RULES if retry_rules is None else retry_rules)
        self.error_classes = tuple(retry.DEFAULT_CLASSES if error_classes is None else error_classes)
        self.retries: dict[tuple[str, int, str], int] = {}  # (error source, code, what the retry module did) -> jobs
        self.raised_ram: dict[int, dict[int, float]] = {}  # task -> its inputs the retry module gave more memory
        self.rng = np.random.default_rng(seed)
        self.g: SimGrid = sim_grid(snap)
        self.qi = {n: i for i, n in enumerate(self.g.queues)}
        self.si = {n: i for i, n in enumerate(self.g.shares)}
        self.wi = {n: i for i, n in enumerate(self.g.work_queues)}
        self.ri = {n: i for i, n in enumerate(self.g.rtypes)}
        self.tasks = self.g.tasks.copy()
        self.jobs = JobTable.empty(1 << 20)
        self.files = Files()
        self.retry_pool: dict[int, list[int]] = {}  # task -> units back to ready, waiting for a new job
        self.log = EventLog()
        # per task status change: time, jediTaskID, from, to, the sentence of its cause
        self.task_causes: list[tuple[float, int, str, str, str]] = []
        self.dry_runs: list[tuple[float, str, str, int]] = []  # fast rebrokerage dry runs: time, queue, share, jobs
        self.commands: list[tuple[float, int, str, str, str]] = []  # task commands: time, task, command, outcome, why
        self.series = Series()
        self.now = 0.0
        self.cache = GridCache(snap)
        self.base_cache = self.cache
        self.brokerage_snap = snap
        self.decisions: dict[int, Decision] = {}
        self.choices: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # per task: candidate queues, draw probabilities
        self._new_rows: list[np.ndarray] = []
        self.verdicts: dict[tuple[str, str], Verdict] = {}
        self.limits: dict[tuple[str, str], Limits] = {}
        self._next: dict[str, float] = {}
        t = self.tasks
        # fields JobGenerator reads for every chunk that do not change during a run (plain values: no pandas lookup)
        self.static = {
            int(tid): (float(b), float(c), int(k), str(lab), float(p))
            for tid, b, c, k, lab, p in zip(t.index, t["basewalltime"], t["cpu_hs06s_per_job"], t["coreCount"],
                                            t["prodSourceLabel"], t["currentPriority"], strict=True)
        }  # fmt: skip
        # per task row: aligned work queue, resource type and share indices (-1: unknown), chunk size
        self.task_w = t["workQueue"].map(self.wi).fillna(-1).to_numpy(np.int64).copy()
        self.task_r = t["resource_type"].map(self.ri).fillna(-1).to_numpy(np.int64)
        self.task_s = t["gshare"].map(self.si).fillna(-1).to_numpy(np.int64).copy()
        self.task_chunk = t["chunk_njobs"].to_numpy(np.int64)
        sites = snap.tables["sites"]
        self.nuclei = sorted(set(sites.loc[sites["role"] == "nucleus", "site_name"].astype(str))
                             | set(t["nucleus"].dropna().astype(str)))  # fmt: skip
        self.nucleus_code = {n: i + 1 for i, n in enumerate(self.nuclei)}  # 0: no nucleus
        self.task_nucleus = {  # task -> the code of its nucleus (0: none yet, or analysis)
            int(tid): self.nucleus_code.get(n, 0) if isinstance(n, str) else 0
            for tid, n in zip(t.index, t["nucleus"], strict=True)
        }
        self.task_ram = dict(zip(t.index.tolist(), t["ramCount"].astype(float).tolist(), strict=True))  # ramCount now
        # what scouts measure: each task's true memory per job (MB) and CPU factor against its estimate, from a
        # generator of its own so the run's other draws do not depend on them
        truth = np.random.default_rng([seed, 1])
        est_mb = np.where(t["ramPerCore"], t["ramCount"] * t["coreCount"], t["ramCount"]).astype(float)
        est_mb = np.where(est_mb > 0, est_mb, DEFAULT_RAM_MB)
        self.true_ram_mb = dict(
            zip(t.index.tolist(), (est_mb * truth.lognormal(0.1, 0.3, len(t))).tolist(), strict=True)
        )
        self.any_cores = set(t.index[t["anyCores"].to_numpy(bool)].tolist())
        self.per_core = set(t.index[t["ramPerCore"].to_numpy(bool)].tolist())
        self.true_cpu = dict(zip(t.index.tolist(), truth.lognormal(0.0, 0.3, len(t)).tolist(), strict=True))
        # task -> its estimates changed during the run (scout-derived ramcount and cputime, the retry module's
        # ramcount), given to the brokers at their next refresh
        self.scouted: dict[int, dict[str, float]] = {}
        self.fresh: dict[int, dict[str, float]] = {}  # of those, the ones the brokers' snapshot does not hold yet
        self.scout_rows: dict[int, list[np.ndarray]] = {}  # task -> rows of its scout jobs
        # per task row, counted as jobs are made and end (the WatchDog's progress actions read them)
        self.task_ids = t.index.to_numpy(np.int64)
        self.task_order = np.argsort(self.task_ids, kind="stable")
        self.jobs_made = np.zeros(len(t), np.int64)
        self.jobs_finished = np.zeros(len(t), np.int64)
        self.jobs_failed = np.zeros(len(t), np.int64)
        nq, ns = len(self.g.queues), len(self.g.shares)
        # jobs that ended, counted as they end: per final status, per queue and per share
        self.ended = {
            name: (np.zeros(nq, np.int64), np.zeros(ns, np.int64)) for name in ("finished", "failed", "closed")
        }
        self._seed_jobs()
        self.live = np.flatnonzero(~np.isin(self.jobs["jobStatus"], FINAL))  # rows not final, in PandaID order

    # ------------------------------------------------------------------ set-up

    def _seed_jobs(self) -> None:
        """The jobs the snapshot holds (job_counts), with ages drawn so the clocks of the rules start plausibly."""
        jc = self.snap.tables["job_counts"]
        jc = jc[jc["jobstatus"].isin([s for s in S if s in set(jc["jobstatus"])]) & (jc["njobs"] > 0)]
        jc = jc[jc["panda_queue"].isin(self.qi)]
        n = jc["njobs"].to_numpy(np.int64)
        rep = lambda col: np.repeat(col, n)  # noqa: E731
        q = rep(jc["panda_queue"].map(self.qi).to_numpy(np.int64))
        status = rep(jc["jobstatus"].map(S).to_numpy(np.int64))
        k = int(n.sum())
        r = self.rng
        wall = np.clip(r.lognormal(np.log(BACKGROUND_WALL_H * 3600), 0.6, k), MIN_WALL_S, MAX_WALL_S)
        created = -r.uniform(0, 12 * 3600, k)
        start = np.where(status == S["running"], -r.uniform(0, 1, k) * wall, np.nan)
        mod = np.where(np.isin(status, DEFINED_TABLE), -r.uniform(0, 6 * 3600, k), created)
        mod = np.where(status == S["transferring"], -r.uniform(0, 2 * 3600, k), mod)
        mod = np.where(status == S["running"], start, mod)
        self.jobs.append(
            jediTaskID=-1, computingSite=q, jobStatus=status,
            gshare=rep(jc["gshare"].map(self.si).to_numpy(np.int64)),
            workQueue=rep(jc["gshare"].map(self.si).to_numpy(np.int64)),  # a share's own work queue has its index
            resource_type=rep(jc["resource_type"].map(self.ri).fillna(0).to_numpy(np.int64)),
            prodSourceLabel=self.g.queue_is_analysis[q].astype(np.int8), currentPriority=r.choice([500.0, 900.0], k),
            attemptNr=1, coreCount=1, creationTime=created, modificationTime=mod,
            stateChangeTime=np.where(status == S["running"], start, mod),
            activationTime=np.where(status == S["activated"], created, np.nan), startTime=start,
            runSeconds=wall, willFail=r.random(k) < self.g.failure_rate[q],
        )  # fmt: skip

    # ------------------------------------------------------------------ clock

    def _due(self, agent: str, period: float) -> bool:
        """Whether AGENT runs this tick (first at the run's start, then every PERIOD)."""
        if self.now + 1e-9 >= self._next.get(agent, 0.0):
            self._next[agent] = self.now + period
            return True
        return False

    @gc_paused()
    def run(
        self, hours: float, progress: Progress | None = None, commands: Sequence[TaskCommand] = (),
        until: Callable[[Simulation], bool] | None = None,
    ) -> Simulation:  # fmt: skip
        """Move the grid forward HOURS, one tick at a time; PROGRESS(done, total) after each simulated minute;
        COMMANDS (task commands at simulated times) applied at their tick, a refused one kept with its rule; UNTIL
        (checked after each tick) ends the run early when it returns True.

        Usage: ``Simulation(snap, Config()).run(24).result()["headline"]``
        """
        cfg = self.config
        ticks = round(hours * 3600 / TICK_S)
        todo = sorted(commands, key=lambda c: c.at_s)
        for i in range(ticks):
            self.now = i * TICK_S
            while todo and todo[0].at_s < self.now + TICK_S:
                self._command(todo.pop(0))
            self.live = self.live[~np.isin(self.jobs["jobStatus"][self.live], FINAL)]
            if self._due("brokerage", float(cfg["JOB_BROKERAGE_REFRESH"])):
                self._refresh_brokerage()
            if self._due("taskbroker", float(cfg["TASKBROKER_PERIOD"])):
                self._task_broker()
            self._generate()
            self._end_payloads()
            if self._due("adder", float(cfg["ADDER_PERIOD"])):
                self._adder()
            if self._due("datasetmanager", float(cfg["DATASETMANAGER_PERIOD"])):
                self._finisher()
            if self._due("copyarchive", float(cfg["COPYARCHIVE_PERIOD"])):
                self._copy_archive()
            self._dispatch()
            self._post_process()
            if self._due("watchdog", float(cfg["WATCHDOG_PERIOD"])):
                self._watchdog()
            if self._due("sample", SAMPLE_S):
                self._sample()
            if progress:
                progress(i + 1, ticks)
            if until is not None and until(self):
                self.now += TICK_S
                return self
        self.now = ticks * TICK_S
        self._sample()
        return self

    # ------------------------------------------------------------------ brokerage

    def _live(self, *statuses: str) -> np.ndarray:
        """Rows of live jobs in one of STATUSES, in PandaID order."""
        st = self.jobs["jobStatus"][self.live]
        if len(statuses) == 1:
            return self.live[st == S[statuses[0]]]
        wanted = np.zeros(len(S), bool)
        wanted[[S[x] for x in statuses]] = True
        return self.live[wanted[st]]

    def _refresh_brokerage(self) -> None:
        """Give the brokers the simulated job counts (JEDI reads pre-aggregated job statistics that lag too)."""
        j = self.jobs
        live = self.live[j["jobStatus"][self.live] != S["holding"]]
        if self.now > 0:
            df = pd.DataFrame({
                "panda_queue": np.asarray(self.g.queues, dtype=object)[j["computingSite"][live]],
                "gshare": np.asarray(self.g.shares, dtype=object)[j["gshare"][live]],
                "resource_type": np.asarray(self.g.rtypes, dtype=object)[j["resource_type"][live]],
                "jobstatus": np.asarray(list(S), dtype=object)[j["jobStatus"][live]],
            })  # fmt: skip
            counts = df.value_counts().rename("njobs").reset_index()
            tables = {"job_counts": counts[self.snap.tables["job_counts"].columns]}
            if self.scouted:  # the scouts' estimates reach the brokers at their next refresh
                tasks = self.snap.tables["tasks"].copy()
                at = {int(tid): i for i, tid in enumerate(tasks["jeditaskid"])}
                for tid, values in self.scouted.items():
                    for col, v in values.items():
                        tasks.iat[at[tid], tasks.columns.get_loc(col)] = v
                tables["tasks"] = tasks
            self.brokerage_snap = self.snap.replace(**tables)
            self.cache = derived_cache(self.base_cache, self.brokerage_snap)
            self.fresh.clear()  # the new snapshot holds them
        self.decisions.clear()
        self.choices.clear()

    def _decision(self, tid: int) -> Decision:
        d = self.decisions.get(tid)
        if d is None:
            d = self.decisions[tid] = self._broker(tid)
        return d

    def _broker(self, tid: int, **fields: float) -> Decision:
        """Job brokerage of TID with its estimates changed since the brokers' snapshot, and FIELDS (a chunk's)."""
        changed = {**self.fresh.get(tid, {}), **fields}
        return run_job_brokerage(self.brokerage_snap, tid, self.config, cache=self.cache, task_fields=changed or None)

    def _estimates_changed(self, tid: int, fields: dict[str, float]) -> None:
        """Task TID's estimates (ramcount, cputime) changed: the task table takes them, its next brokerage uses them
        at once, as JEDI reads the task each cycle, and the brokers' snapshot takes them at its next refresh."""
        if "ramcount" in fields:
            self.tasks.at[tid, "ramCount"] = self.task_ram[tid] = float(fields["ramcount"])
        if "cputime" in fields:
            self.tasks.at[tid, "cpuTime"] = float(fields["cputime"])
        self.scouted.setdefault(tid, {}).update(fields)
        self.fresh.setdefault(tid, {}).update(fields)
        self.forget_brokerage(tid)

    def forget_brokerage(self, tid: int) -> None:
        """Drop task TID's kept brokerage (its decision and every chunk's choices): its next chunk is brokered anew.

        Usage: ``sim.forget_brokerage(4242)``
        """
        self.decisions.pop(tid, None)
        for key in [k for k in self.choices if k == tid or (isinstance(k, tuple) and k[0] == tid)]:
            del self.choices[key]

    def _task_broker(self) -> None:
        """ContentsFeeder and TaskBroker: defined tasks to assigning or ready; assigning tasks get a nucleus."""
        from brokerage.brokers import nucleus

        t = self.tasks
        defined = t.index[t["status"] == "defined"]
        needs = (t.loc[defined, "prodSourceLabel"] != "user") & t.loc[defined, "nucleus"].isna()
        self._task_move(defined[needs.to_numpy()], "assigning", "ContentsFeeder: a managed task without a nucleus")
        self._task_move(defined[~needs.to_numpy()], "ready", "ContentsFeeder: inputs registered")
        due = t.index[(t["status"] == "assigning") & (t["modificationTime"] <= self.now - 1800)]
        if len(due) == 0:
            return
        decisions = nucleus.broker_many(self.brokerage_snap, [int(x) for x in due], self.config, cache=self.cache)
        chosen = [(d.task, d.extra.get("chosen")) for d in decisions if d.extra.get("chosen")]
        for tid, nuc in chosen:
            t.at[tid, "nucleus"] = nuc
            self.task_nucleus[int(tid)] = self.nucleus_code.get(nuc, 0)  # the broker picks among the nuclei
        self._task_move(pd.Index([c[0] for c in chosen]), "ready", "TaskBroker: nucleus chosen")
        t.loc[due, "modificationTime"] = self.now

    def _task_move(self, ids: pd.Index, new: str, why: str) -> None:
        if len(ids) == 0:
            return
        old = self.tasks.loc[ids, "status"].to_numpy(object)
        self.tasks.loc[ids, "oldStatus"] = old
        self.tasks.loc[ids, "status"] = new
        self.tasks.loc[ids, "stateChangeTime"] = self.now
        self.tasks.loc[ids, "modificationTime"] = self.now
        self.log.add(self.now, ids.to_numpy(np.int64), old, new, "task")
        self.task_causes.extend((self.now, int(i), str(o), new, why) for i, o in zip(ids, old, strict=True))

    # ------------------------------------------------------------------ job generation

    def _counts(self) -> dict[tuple[int, int], tuple[int, int, int]]:
        """(running, notRun, defined) per (aligned work queue, resource type) of the live jobs."""
        j, live = self.jobs, self.live
        st, wq, rt = j["jobStatus"][live], j["workQueue"][live], j["resource_type"][live]
        key = wq.astype(np.int64) * 64 + rt
        out: dict[tuple[int, int], tuple[int, int, int]] = {}
        n_keys = (len(self.g.work_queues) + 1) * 64
        running = np.bincount(key[st == S["running"]], minlength=n_keys)
        not_run = np.bincount(key[np.isin(st, NOT_RUN)], minlength=n_keys)
        define = np.bincount(key[st == S["defined"]], minlength=n_keys)
        for s in range(len(self.g.work_queues)):
            for r in range(len(self.g.rtypes)):
                k = s * 64 + r
                out[(s, r)] = (int(running[k]), int(not_run[k]), int(define[k]))
        return out

    def _choices(self, tid: int, ram: float | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """The task's candidate queues (indices) and their draw probabilities (weight shares), None if none; RAM: a
        chunk's ramCount above the task's (inputs retried with more memory), brokered with it (getMaxRamCount)."""
        key = tid if ram is None else (tid, ram)
        got = self.choices.get(key)
        if got is None:
            d = self._decision(tid) if ram is None else self._broker(tid, ramcount=ram)
            kept = [(self.qi[c.name], max(c.weight, 0.0)) for c in d.candidates if c.name in self.qi]
            w = np.array([k[1] for k in kept], dtype=float)
            got = (np.array([k[0] for k in kept], np.int64), w / w.sum()) if kept and w.sum() > 0 else (
                np.zeros(0, np.int64), w)  # fmt: skip
            self.choices[key] = got
        return got if len(got[0]) else None

    def _generate(self) -> None:
        """JobGenerator: per aligned work queue (a global share, or a Resource work queue) x resource type, the
        throttler's budget, then the tasks in priority order, each chunk brokered and drawn over the candidates by
        weight."""
        t = self.tasks
        status = t["status"].to_numpy(object)
        ids = t.index.to_numpy(np.int64)
        used = t["nFilesUsed"].to_numpy(np.int64).copy()
        rows = np.flatnonzero(np.isin(status, GENERATING) & (self.task_w >= 0) & (self.task_r >= 0))
        pool = np.fromiter((len(self.retry_pool.get(int(i), ())) for i in ids[rows]), np.int64, len(rows))
        exposed = np.minimum(t["nFiles"].to_numpy(np.int64), t["nFilesToBeUsed"].to_numpy(np.int64))
        avail = exposed[rows] - used[rows] + pool
        scouts = t["useScout"].to_numpy(bool) & np.isin(status, ("ready", "scouting"))
        rows, avail = rows[avail > 0], avail[avail > 0]
        if len(rows) == 0:
            return
        counts = self._counts()
        prio = t["currentPriority"].to_numpy(float)[rows]
        order = np.lexsort((-prio, self.task_r[rows], self.task_w[rows]))  # stable: equal priorities keep task order
        rows, avail = rows[order], avail[order]
        w_of, r_of = self.task_w[rows], self.task_r[rows]
        starts = np.flatnonzero(np.r_[True, (np.diff(w_of) != 0) | (np.diff(r_of) != 0)])
        for a, b in zip(starts, np.r_[starts[1:], len(rows)], strict=True):
            w, r = int(w_of[a]), int(r_of[a])
            wq, rtype = self.g.work_queues[w], self.g.rtypes[r]
            limits = self.limits.get((wq, rtype))
            if limits is None:
                limits = self.limits[(wq, rtype)] = limits_of(self.config, wq, rtype)
            verdict = throttle(self.config, wq, rtype, *counts[(w, r)], limits=limits,
                               throttled=bool(self.g.wq_throttled[w]))  # fmt: skip
            self.verdicts[(wq, rtype)] = verdict
            budget = verdict.max_jobs
            for k in range(a, b):
                if budget <= 0:
                    break
                row = int(rows[k])
                n = min(int(avail[k]), int(self.task_chunk[row]), budget)
                made, new_units = self._make_jobs(int(ids[row]), n, int(self.task_s[row]), w, r, status[row],
                                                  bool(scouts[row]))  # fmt: skip
                budget -= made
                used[row] += new_units
        t["nFilesUsed"] = used
        if self._new_rows:
            self.live = np.concatenate([self.live, *self._new_rows])
            self._new_rows = []

    def _make_jobs(self, tid: int, n: int, s: int, w: int, r: int, status: str, scout: bool = False) -> tuple[int, int]:
        """Broker task TID (in STATUS) and insert N activated jobs (SCOUT: scout jobs) at the drawn queues:
        (jobs made, new units). Inputs back for a retry with a raised ramCount are brokered with it; when no queue
        fits it they wait (the task goes pending if nothing could be made)."""
        choices = self._choices(tid)
        if choices is None:
            self._hold(tid, status, self._decision(tid).message)
            return 0, 0
        task_ram = self.task_ram[tid]
        pool = self.retry_pool.get(tid, [])
        reuse = np.asarray(pool[:n], np.int64)
        rams = np.maximum(self.files.ramCount[reuse], task_ram)
        groups: list[tuple[np.ndarray, float, tuple[np.ndarray, np.ndarray]]] = []
        waiting: list[int] = []
        for ram in np.unique(rams).tolist():
            ids = reuse[rams == ram]
            got = choices if ram <= task_ram else self._choices(tid, ram)
            if got is None:
                waiting.extend(ids.tolist())
            else:
                groups.append((ids, ram, got))
        self.retry_pool[tid] = waiting + pool[n:]
        _basewall, _cpu, _cores, label, _prio = self.static[tid]
        new = self.files.add(tid, n - len(reuse), MAX_ATTEMPT.get(label, 3), MAX_FAILURE.get(label, 10**6))
        if len(new):
            groups.append((new, task_ram, choices))
        made = 0
        for fids, ram, (queues, p) in groups:
            made += self._insert_jobs(tid, fids, ram, queues, p, s, w, r, scout)
        if made == 0:
            self._hold(tid, status, f"no queue has the memory its retried inputs need ({max(rams):g} MB)")
            return 0, len(new)
        self.jobs_made[self.task_rows(np.array([tid]))] += made
        if status == "ready":
            new_status, why = (
                ("scouting", "first scout jobs submitted") if scout else ("running", "first jobs submitted")
            )
            self._task_move(pd.Index([tid]), new_status, f"JobGenerator: {why}")
        return made, len(new)

    def _hold(self, tid: int, status: str, why: str) -> None:
        """setOnHold: a task whose chunks found no queue goes pending (frozenTime set on its first pending)."""
        if status == "pending":
            return
        if np.isnan(self.tasks.at[tid, "frozenTime"]):
            self.tasks.at[tid, "frozenTime"] = self.now
        self._task_move(pd.Index([tid]), "pending", f"JobGenerator: brokerage found no queue ({why})")

    def _insert_jobs(
        self, tid: int, fids: np.ndarray, ram: float, queues: np.ndarray, p: np.ndarray, s: int, w: int, r: int,
        scout: bool,
    ) -> int:  # fmt: skip
        """Activated jobs for TID, one per input unit FIDS, brokered with ramCount RAM, each at a queue drawn from
        QUEUES with probabilities P. A payload whose memory peak exceeds twice the queue's maxrss (scaled to the
        job's cores on a multi-core queue) will be killed by the pilot (PAYLOADEXCEEDMAXMEM)."""
        n = len(fids)
        pick = self.rng.choice(len(queues), size=n, p=p)
        q = queues[pick]
        basewall, cpu, cores, label, prio = self.static[tid]
        self.files.status[fids] = Files.RUNNING
        if scout:
            prio = scout_priority(prio)
        qcores = self.g.queue_cores[q]
        # a task asking any core count runs with the queue's; its CPU work and per-core memory scale with it
        job_cores = np.where(qcores > 0, qcores, cores) if tid in self.any_cores else np.full(n, float(cores))
        scale = cores / job_cores
        noise = self.rng.lognormal(0.0, 0.15, n)
        wall = basewall + cpu * scale * self.true_cpu.get(tid, 1.0) * noise / self.g.corepower[q]
        maxtime = self.g.maxtime_s[q]
        time_kill = (maxtime > 0) & (wall > maxtime)  # the batch system ends the payload at the queue's maxtime
        wall = np.clip(wall, MIN_WALL_S, np.where(maxtime > 0, maxtime, MAX_WALL_S))
        pss = self.true_ram_mb.get(tid, DEFAULT_RAM_MB) * self.rng.lognormal(0.0, 0.1, n)
        if tid in self.per_core:
            pss = pss / scale
        limit = 2.0 * self.g.maxrss[q] * np.where(qcores > 0, job_cores / np.maximum(qcores, 1), 1.0)
        mem_kill = (limit > 0) & (pss > limit)
        fails = mem_kill | time_kill | (self.rng.random(n) < self.g.failure_rate[q])
        code, source = self._failure_codes(fails, mem_kill, time_kill)
        rows = self.jobs.append(
            jediTaskID=tid, computingSite=q, jobStatus=S["activated"], gshare=s, workQueue=w, resource_type=r,
            nucleus=self.task_nucleus[tid],
            prodSourceLabel=int(label == "user"), currentPriority=prio, maxPSS=pss, isScout=scout, ramCount=ram,
            attemptNr=self.files.attemptNr[fids] + 1, coreCount=job_cores, fileID=fids,
            creationTime=self.now, modificationTime=self.now, stateChangeTime=self.now, activationTime=self.now,
            runSeconds=wall, willFail=fails, errorCode=code, errorSource=source,
        )  # fmt: skip
        self._new_rows.append(rows)
        if scout:
            self.scout_rows.setdefault(tid, []).append(rows)
        self.log.add(self.now, self.jobs["PandaID"][rows], "-", "activated", "generate", p[pick], ram)
        return n

    def _failure_codes(
        self, fails: np.ndarray, mem_kill: np.ndarray, time_kill: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(errorCode, errorSource) of jobs whose payload FAILS (0 for the others): REACHEDMAXTIME for a payload past
        the queue's maxtime, PAYLOADEXCEEDMAXMEM for a memory kill, else a stage-in failure (pilot, a system error)
        or a transformation error (exe), in STAGEIN_SHARE proportion."""
        code = np.zeros(len(fails), np.int64)
        source = np.zeros(len(fails), np.int64)
        if not fails.any():
            return code, source
        stagein = self.rng.random(len(fails)) < STAGEIN_SHARE
        code[fails] = np.where(stagein, retry.STAGEINFAILED, retry.TRANSFORM_FAILED)[fails]
        source[fails] = np.where(stagein, SOURCE["pilot"], SOURCE["exe"])[fails]
        code[time_kill] = retry.REACHEDMAXTIME
        code[mem_kill] = retry.PAYLOADEXCEEDMAXMEM  # the memory peak comes before the end of the walltime
        source[mem_kill | time_kill] = SOURCE["pilot"]
        return code, source

    # ------------------------------------------------------------------ pilots

    def _dispatch(self) -> None:
        """Pilots take activated jobs up to each queue's free slots: the most under-pledged share first, then
        priority, then age; SLOPPY_DISPATCH_RATIO+1 % of queues take by age only this tick (§7.3)."""
        j = self.jobs
        q = j["computingSite"]
        st = j["jobStatus"][self.live]
        busy_rows = self.live[(st == S["sent"]) | (st == S["starting"]) | (st == S["running"])]
        busy = np.bincount(q[busy_rows], minlength=len(self.g.queues))
        free = self.g.slots - busy
        free[np.isin(self.g.queue_status, NO_PILOT_STATUSES)] = 0
        cand = self.live[st == S["activated"]]
        cand = cand[free[q[cand]] > 0]
        if len(cand) == 0:
            return
        share_rank = self._share_rank(self.live[st == S["running"]])
        sloppy = self.rng.random(len(self.g.queues)) < (int(self.config["SLOPPY_DISPATCH_RATIO"]) + 1) / 100.0
        cq = q[cand]
        by_age = sloppy[cq]
        rank = np.where(by_age, 0, share_rank[j["gshare"][cand]])
        prio = np.where(by_age, 0, MAX_PRIORITY - np.clip(j["currentPriority"][cand], 0, MAX_PRIORITY)).astype(np.int64)
        order = np.argsort(_pack(cq, rank, prio, j["PandaID"][cand]), kind="stable")
        cand, cq = cand[order], cq[order]
        first = np.r_[0, np.flatnonzero(np.diff(cq)) + 1]
        pos = np.arange(len(cand)) - np.repeat(first, np.diff(np.r_[first, len(cand)]))
        take = cand[pos < free[cq]]
        if len(take) == 0:
            return
        self.log.add(self.now, j["PandaID"][take], "activated", "running", "dispatch", free[q[take]])
        self._set(take, "running")
        self.jobs.cols["startTime"][take] = self.now

    def _share_rank(self, running_rows: np.ndarray) -> np.ndarray:
        """Per share, its place in JEDI's sorted leaves (0 first); shares outside the tree after every leaf."""
        g = self.g
        running = np.bincount(self.jobs["gshare"][running_rows], minlength=len(g.shares))
        n_tree = len(g.tree.names)
        rank = np.arange(len(g.shares), dtype=np.int64)
        rank[:n_tree] = sorted_leaves(g.tree, running[:n_tree].astype(float))
        return rank

    def _end_payloads(self) -> None:
        """Payloads that reached their walltime (failing ones part-way) end: running -> holding."""
        j = self.jobs
        run = self._live("running")
        # a failing payload fails half-way, one killed at the queue's maxtime at its end
        part = j["willFail"][run] & (j["errorCode"][run] != retry.REACHEDMAXTIME)
        length = np.where(part, 0.5 * j["runSeconds"][run], j["runSeconds"][run])
        ended = run[j["startTime"][run] + length <= self.now]
        alive = ~np.isin(self.g.queue_status[j["computingSite"][ended]], NO_PILOT_STATUSES)
        ended = ended[alive]  # a queue without pilots reports nothing: its jobs are left to the heartbeat rules
        if len(ended):
            hours = (self.now - j["startTime"][ended]) / 3600.0
            self.log.add(self.now, j["PandaID"][ended], "running", "holding", "pilot_end", hours)
            self._set(ended, "holding")
            self.jobs.cols["endTime"][ended] = self.now

    def _adder(self) -> None:
        """Adder: holding jobs become finished or failed as their output report says."""
        j = self.jobs
        hold = self._live("holding")
        bad = j["willFail"][hold]
        self.log.add(self.now, j["PandaID"][hold[~bad]], "holding", "finished", "adder_finished")
        self.log.add(self.now, j["PandaID"][hold[bad]], "holding", "failed", "adder_failed",
                     j["errorCode"][hold[bad]], self.g.failure_rate[j["computingSite"][hold[bad]]])  # fmt: skip
        self._end(hold[~bad], "finished")
        self._end(hold[bad], "failed")

    def _finisher(self) -> None:
        """datasetManager finisher: transferring jobs whose outputs arrived (after 1 h at priority >= 800, else
        2 h, §3.6) are finished; output replicas are taken to arrive in that time."""
        j = self.jobs
        tr = self._live("transferring")
        wait = np.where(j["currentPriority"][tr] >= 800, 3600.0, 7200.0)
        done = tr[j["modificationTime"][tr] < self.now - wait]
        self.log.add(self.now, j["PandaID"][done], "transferring", "finished", "finisher",
                     (self.now - j["modificationTime"][done]) / 3600.0)  # fmt: skip
        self._end(done, "finished")

    # ------------------------------------------------------------------ timeouts (copyArchive, §3.2 in order)

    def _copy_archive(self) -> None:
        from brokerage.sim import timeouts

        for rule, rows, new, value, threshold in timeouts.copy_archive(self):
            if len(rows) == 0:
                continue
            self.log.add(
                self.now, self.jobs["PandaID"][rows], self.jobs["jobStatus"][rows], new, rule, value, threshold
            )
            if new == "closed":
                self.jobs.cols["jobSubStatus"][rows] = SUB_TOREASSIGN
            if rule != "F":
                self.jobs.cols["errorCode"][rows] = ERROR_CODES.get(rule, 0)
            self.jobs.cols["errorSource"][rows] = SOURCE["jobdispatcher" if new == "failed" else "taskbuffer"]
            self._end(rows, new)

    # ------------------------------------------------------------------ bookkeeping

    def _set(self, rows: np.ndarray, status: str) -> None:
        c = self.jobs.cols
        c["jobStatus"][rows] = S[status]
        c["modificationTime"][rows] = self.now
        c["stateChangeTime"][rows] = self.now

    def _end(self, rows: np.ndarray, status: str) -> None:
        """Final status for ROWS and the file bookkeeping of §4.2: finished -> file finished; failed or closed ->
        attemptNr + 1 (failedAttempt + 1 only when failed), back to ready while attempts are left."""
        if len(rows) == 0:
            return
        self._set(rows, status)
        by_queue, by_share = self.ended["closed" if status == "cancelled" else status]
        np.add.at(by_queue, self.jobs["computingSite"][rows], 1)
        np.add.at(by_share, self.jobs["gshare"][rows], 1)
        if status in ("finished", "failed"):
            tids_all = self.jobs["jediTaskID"][rows]
            known = tids_all[tids_all >= 0]
            if len(known):
                np.add.at(self.jobs_finished if status == "finished" else self.jobs_failed, self.task_rows(known), 1)
        fid = self.jobs["fileID"][rows]
        mine = fid >= 0
        fid, tids = fid[mine], self.jobs["jediTaskID"][rows][mine]
        if len(fid) == 0:
            return
        f = self.files
        if status == "finished":
            f.status[fid] = Files.FINISHED
            self._count(tids, "nFilesFinished")
            return
        if status == "failed":
            self._retry_module(rows[mine])
        f.attemptNr[fid] += 1
        if status == "failed":
            f.failedAttempt[fid] += 1
        again = (f.attemptNr[fid] < f.maxAttempt[fid]) & (f.failedAttempt[fid] < f.maxFailure[fid])
        f.status[fid] = np.where(again, Files.READY, Files.FAILED)
        self._count(tids[~again], "nFilesFailed")
        for tid, u in zip(tids[again].tolist(), fid[again].tolist(), strict=True):
            self.retry_pool.setdefault(int(tid), []).append(int(u))

    def _retry_module(self, rows: np.ndarray) -> None:
        """retryModule.job_failure_postprocessing (§4.3) for failed jobs ROWS, before their inputs' attempts are
        counted: per error the rules acted on (no_retry, limit_retry, increase_memory), and system-class errors give
        the inputs one more allowed failure. Counted per (source, code, action) for the run's output."""
        j, f = self.jobs, self.files
        src, code = j["errorSource"][rows], j["errorCode"][rows]
        for s_code, e_code in set(zip(src.tolist(), code.tolist(), strict=True)):
            sel = rows[(src == s_code) & (code == e_code)]
            source = retry.SOURCES[s_code - 1] if s_code > 0 else ""
            fids = j["fileID"][sel]
            acted = []
            for rule in retry.preprocess_rules(self.retry_rules, source, e_code):
                if not rule.active:
                    acted.append(f"{rule.action} (inactive: logged only)")
                elif rule.action == "no_retry":
                    f.maxAttempt[fids] = f.attemptNr[fids] + 1  # the attempt that just failed is the last
                    acted.append(rule.action)
                elif rule.action == "limit_retry":
                    f.maxAttempt[fids] = np.minimum(f.maxAttempt[fids], int(rule.params.get("maxAttempt", 1)))
                    acted.append(rule.action)
                elif rule.action == "increase_memory":
                    for row in sel.tolist():
                        self._increase_ram(row)
                    acted.append(rule.action)
                elif rule.action == "increase_cputime":
                    for row in sel.tolist():
                        self._increase_cputime(row)
                    acted.append(rule.action)
                else:
                    acted.append(f"{rule.action} (not simulated)")
            if retry.error_class(self.error_classes, source, e_code) == "system":
                f.maxFailure[fids] += 1
                acted.append("increase_max_failure")
            key = (source, int(e_code), ", ".join(acted) or "-")
            self.retries[key] = self.retries.get(key, 0) + len(sel)

    def _increase_cputime(self, row: int) -> None:
        """initialize_cpu_time_task (§4.3) for one job killed at its queue's maxtime: the task's cpuTime from it."""
        j, t = self.jobs, self.tasks
        tid, q = int(j["jediTaskID"][row]), int(j["computingSite"][row])
        pos = self.task_rows(np.array([tid]))[0]
        old = float(t.at[tid, "cpuTime"])
        verdict = retry.increase_cputime(
            bool(self.jobs_finished[pos] > 0), float(self.g.maxtime_s[q]), float(self.g.corepower[q]),
            float(self.g.queue_cores[q]), int(j["coreCount"][row]), float(t.at[tid, "basewalltime"]),
            float(t.at[tid, "cpuEfficiency"]), int(t.at[tid, "nEventsPerUnit"]), old,
        )  # fmt: skip
        pid = j["PandaID"][row : row + 1]
        if verdict.cpu_time is None:
            self.log.add(self.now, pid, "failed", "-", "retry_cputime_kept", old)
            return
        self.log.add(self.now, pid, "failed", "-", "retry_cputime", verdict.cpu_time, old)
        if verdict.cpu_time == old:
            return  # the same value written again (a later kill of the same task): nothing changes
        self._estimates_changed(tid, {"cputime": verdict.cpu_time})
        status = str(t.at[tid, "status"])
        self.task_causes.append((self.now, tid, status, status, f"retry module increase_cputime: {verdict.why}"))

    def _increase_ram(self, row: int) -> None:
        """increaseRamLimitJobJEDI (§4.4) for one failed job: the task's ramCount (30 % rule) or its input's."""
        j, f, t = self.jobs, self.files, self.tasks
        tid, fid = int(j["jediTaskID"][row]), int(j["fileID"][row])
        per_core, cores = bool(t.at[tid, "ramPerCore"]), int(j["coreCount"][row])
        base = float(t.at[tid, "baseRamCount"])
        norm = retry.job_ram(retry.min_ram_count(float(j["ramCount"][row]), base, cores, per_core), base, cores,
                             per_core)  # fmt: skip
        task_ram = self.task_ram[tid]
        raised = self.raised_ram.setdefault(tid, {})
        verdict = retry.increase_ram(norm, task_ram, np.fromiter(raised.values(), float, len(raised)),
                                     int(t.at[tid, "nFiles"]), bool(t.at[tid, "ramFixed"]))  # fmt: skip
        pid = j["PandaID"][row : row + 1]
        if verdict.task_ram is not None:
            self._estimates_changed(tid, {"ramcount": verdict.task_ram})
            self.task_causes.append((self.now, tid, str(t.at[tid, "status"]), str(t.at[tid, "status"]),
                                     f"retry module increase_memory: {verdict.why}"))  # fmt: skip
            self.log.add(self.now, pid, "failed", "-", "retry_task_ram", verdict.task_ram, task_ram)
        elif verdict.file_ram is not None:
            f.ramCount[fid] = raised[fid] = max(f.ramCount[fid], verdict.file_ram)
            self.log.add(self.now, pid, "failed", "-", "retry_ram", verdict.file_ram, norm)
        else:
            self.log.add(self.now, pid, "failed", "-", "retry_ram_kept", norm, task_ram)

    def task_rows(self, tids: np.ndarray) -> np.ndarray:
        """Row positions in the task table of task ids TIDS (all known)."""
        return self.task_order[np.searchsorted(self.task_ids, tids, sorter=self.task_order)]

    def _count(self, tids: np.ndarray, column: str) -> None:
        if len(tids):
            ids, n = np.unique(tids, return_counts=True)
            self.tasks.loc[ids, column] = self.tasks.loc[ids, column].to_numpy() + n

    def _command(self, cmd: TaskCommand) -> None:
        """Apply one task command now; a refused one is kept (time, task, command, outcome, sentence)."""
        try:
            why = commands.apply(self, cmd)
        except commands.CommandRefused as exc:
            self.commands.append((self.now, cmd.task, cmd.command, "refused", str(exc)))
            return
        self.commands.append((self.now, cmd.task, cmd.command, "applied", why))

    def _finish_tasks(self) -> None:
        """finishing -> passed -> the final status once none of the task's jobs is left (getFinalTaskStatus)."""
        t = self.tasks
        finishing = t.index[(t["status"] == "finishing").to_numpy()]
        if len(finishing) == 0:
            return
        j = self.jobs
        queued = self.live[np.isin(j["jediTaskID"][self.live], finishing.to_numpy())]
        queued = queued[np.isin(j["jobStatus"][queued], commands.QUEUED)]
        if len(queued):  # TaskCommando kills what has not started (code 52); running jobs end on their own
            j.cols["errorCode"][queued] = 52
            self.log.add(self.now, j["PandaID"][queued], "-", "cancelled", "command", np.full(len(queued), 52.0))
            self._end(queued, "cancelled")
            self.live = self.live[~np.isin(self.live, queued)]
        busy = set(j["jediTaskID"][self.live][~np.isin(j["jobStatus"][self.live], FINAL)].tolist())
        for tid in [x for x in finishing.tolist() if x not in busy]:
            fin, n = int(t.at[tid, "nFilesFinished"]), int(t.at[tid, "nFiles"])
            final = str(task_agent.final_status(np.array([n]), np.array([fin]))[0])
            self._task_move(pd.Index([tid]), "passed", "TaskCommando: no active job left")
            self._task_move(pd.Index([tid]), final, f"PostProcessor: {fin} of {n} inputs finished")

    def _post_process(self) -> None:
        """PostProcessor (§5.2): a scouting task whose exposed inputs are all done is assessed from its finished
        scout jobs: scouted -> running with the scout-derived ramCount and cpuTime, exhausted when a check fires,
        or tobroken -> broken when no scout finished."""
        self._finish_tasks()
        t = self.tasks
        scouting = t.index[(t["status"] == "scouting").to_numpy()]
        if len(scouting) == 0:
            return
        sub = t.loc[scouting]
        exposed = np.minimum(sub["nFiles"], sub["nFilesToBeUsed"])
        done = scouting[(sub["nFilesFinished"] + sub["nFilesFailed"] >= exposed).to_numpy()]
        if len(done) == 0:
            return
        j = self.jobs
        for tid in done.tolist():
            rows = np.concatenate(self.scout_rows.pop(tid, [np.zeros(0, np.int64)]))
            rows = rows[j["jobStatus"][rows] == S["finished"]]
            if len(rows) == 0:
                self._task_move(pd.Index([tid]), "tobroken", "PostProcessor: no scout jobs succeeded")
                self._task_move(pd.Index([tid]), "broken", "PostProcessor: final status of tobroken")
                continue
            self._assess_scouts(tid, rows)

    def _assess_scouts(self, tid: int, rows: np.ndarray) -> None:
        """Apply the scouts' verdict for task TID from its finished scout jobs ROWS."""
        t, j = self.tasks, self.jobs
        basewall, cpu, cores, _label, _prio = self.static[tid]
        q = j["computingSite"][rows]
        old_cpu = float(t.at[tid, "cpuTime"])
        # HS06 s per event as JEDI derives it: the payload's time beyond basewalltime, at the queue's corepower,
        # times the job's cores (a task asking any core count ran with the queue's)
        at = j["coreCount"][rows] / cores
        per_event = (np.maximum(j["runSeconds"][rows] - basewall, 0.0) * self.g.corepower[q] / max(cpu, 1e-9)
                     * old_cpu * at)  # fmt: skip
        pss = j["maxPSS"][rows].astype(float) / (at if tid in self.per_core else 1.0)  # at the task's core count
        left = int(t.at[tid, "nFiles"] - t.at[tid, "nFilesFinished"] - t.at[tid, "nFilesFailed"])
        v = assess(self.config, pss, per_event, j["runSeconds"][rows], int(cores),
                   bool(t.at[tid, "ramPerCore"]), float(t.at[tid, "ramCount"]), old_cpu, left)  # fmt: skip
        old_ram = t.at[tid, "ramCount"]
        self._estimates_changed(tid, {"ramcount": v.ram_count, "cputime": round(v.cpu_time, 3)})
        t.at[tid, "nFilesToBeUsed"] = t.at[tid, "nFiles"]
        values = f"ramCount {old_ram:.0f} -> {v.ram_count}, cpuTime {old_cpu:.1f} -> {v.cpu_time:.1f} from {len(rows)} scouts"
        if v.check:
            self._task_move(
                pd.Index([tid]), "exhausted", f"PostProcessor: #ATM #KV action=set_exhausted {v.reason} ({values})"
            )
            return
        self._task_move(pd.Index([tid]), "scouted", f"PostProcessor: scouts succeeded ({values})")
        self._task_move(pd.Index([tid]), "running", "PostProcessor: scouted task goes on running")

    def _watchdog(self) -> None:
        """WatchDog and PostProcessor: the task rules (task_agent.step, swapped for the full rules later)."""
        f = self.files
        files = pd.DataFrame({
            "jediTaskID": f.task, "failedAttempt": f.failedAttempt,
            "status": np.array(["ready", "running", "finished", "failed"], dtype=object)[f.status],
        })  # fmt: skip
        tids = self.jobs["jediTaskID"][self.live]
        tids = tids[(tids >= 0) & ~np.isin(self.jobs["jobStatus"][self.live], FINAL)]
        ids, n = np.unique(tids, return_counts=True)
        tasks, changes = task_agent.step(self.tasks, files, pd.Series(n, index=ids), self.now, self.config)
        self.tasks = tasks
        for row in changes.itertuples(index=False):
            self.log.add(self.now, np.array([row.jediTaskID]), row._1, row.to, "task")
            self.task_causes.append((self.now, int(row.jediTaskID), row._1, row.to, f"{row.rule}: {row.cause}"))
        self._progress_actions()
        self._throttle_paused()

    def _progress_actions(self) -> None:
        """AtlasProdWatchDog's progress-based actions (§6.3) on running production tasks: near completion (95 % of
        the inputs done, at most 100 jobs left) the priority goes to 900 and the share to Express, for the task and
        its jobs; with MAX_JOB_FAILURE_RATE_TO_PAUSE set, a task of 1000+ jobs with 100+ to come whose ended jobs
        failed at that rate or more is paused."""
        t = self.tasks
        run = t.index[((t["status"] == "running") & (t["prodSourceLabel"] != "user") & (t["nFiles"] > 0)).to_numpy()]
        if len(run) == 0:
            return
        sub = t.loc[run]
        pos = self.task_rows(run.to_numpy(np.int64))
        n_jobs = pd.Series(self.jobs_made[pos], index=run)
        fin = pd.Series(self.jobs_finished[pos], index=run)
        bad = pd.Series(self.jobs_failed[pos], index=run)
        done_files = sub["nFilesFinished"] + sub["nFilesFailed"]
        rem_jobs = ((sub["nFiles"] - done_files) * n_jobs / sub["nFiles"]).astype(int)
        near = (done_files / sub["nFiles"] >= BOOST_DONE_FRACTION) & (rem_jobs <= BOOST_MAX_REMAINING_JOBS)
        for tid in sub.index[near.to_numpy()].tolist():
            self._boost(int(tid), int(rem_jobs[tid]), float(done_files[tid] / sub.at[tid, "nFiles"]))
        for tid in sub.index[
            (~near & (n_jobs >= MIN_JOBS_TO_PAUSE) & (rem_jobs >= MIN_REMAINING_JOBS_TO_PAUSE)).to_numpy()
        ]:
            limit = self.config.get(f"MAX_JOB_FAILURE_RATE_TO_PAUSE_{t.at[tid, 'workQueue']}")
            limit = limit if limit is not None else self.config["MAX_JOB_FAILURE_RATE_TO_PAUSE"]
            ended_n = int(fin[tid] + bad[tid])
            rate = bad[tid] / ended_n if ended_n else 0.0
            if limit is not None and ended_n and rate >= float(limit):
                self._task_move(pd.Index([tid]), "paused", f"WatchDog: failure rate {rate:.2f} of {ended_n} ended "
                                f"jobs >= MAX_JOB_FAILURE_RATE_TO_PAUSE {float(limit):g}")  # fmt: skip

    def _boost(self, tid: int, rem_jobs: int, done: float) -> None:
        """Priority 900 (task and live jobs) and, for a task of a global share's queue, the Express share."""
        t, j = self.tasks, self.jobs
        live = self.live[j["jediTaskID"][self.live] == tid]
        why = f"{done:.0%} of inputs done, {rem_jobs} jobs left"
        if t.at[tid, "currentPriority"] < BOOST_PRIORITY:
            t.at[tid, "currentPriority"] = BOOST_PRIORITY
            j.cols["currentPriority"][live] = BOOST_PRIORITY
            b, c, k, lab, _p = self.static[tid]
            self.static[tid] = (b, c, k, lab, BOOST_PRIORITY)
            self.task_causes.append((self.now, tid, "running", "running", f"WatchDog: priority -> 900 ({why})"))
        share = str(t.at[tid, "gshare"])
        if share != EXPRESS and t.at[tid, "workQueue"] == share and EXPRESS in self.si:
            t.at[tid, "gshare"] = t.at[tid, "workQueue"] = EXPRESS
            pos = self.task_rows(np.array([tid]))
            self.task_s[pos], self.task_w[pos] = self.si[EXPRESS], self.wi[EXPRESS]
            j.cols["gshare"][live] = self.si[EXPRESS]
            j.cols["workQueue"][live] = self.wi[EXPRESS]
            self.task_causes.append(
                (self.now, tid, "running", "running", f"WatchDog: share {share} -> Express ({why})")
            )

    def _throttle_paused(self) -> None:
        """Paused tasks' activated jobs are throttled (doActionToThrottleJobInPausedTasks)."""
        paused = self.tasks.index[(self.tasks["status"] == "paused").to_numpy()]
        if len(paused) == 0:
            return
        rows = self._live("activated")
        rows = rows[np.isin(self.jobs["jediTaskID"][rows], paused.to_numpy())]
        if len(rows):
            self.log.add(self.now, self.jobs["PandaID"][rows], "activated", "throttled", "task_paused")
            self._set(rows, "throttled")

    # ------------------------------------------------------------------ output

    def _sample(self) -> None:
        j, nq, ns = self.jobs, len(self.g.queues), len(self.g.shares)
        for name in ("activated", "running"):
            rows = self._live(name)
            self.series.queue.setdefault(name, []).append(np.bincount(j["computingSite"][rows], minlength=nq))
            self.series.share.setdefault(name, []).append(np.bincount(j["gshare"][rows], minlength=ns))
            self.series.work_queue.setdefault(name, []).append(
                np.bincount(j["workQueue"][rows], minlength=len(self.g.work_queues)))  # fmt: skip
            self.series.nucleus.setdefault(name, []).append(
                np.bincount(j["nucleus"][rows], minlength=len(self.nuclei) + 1))  # fmt: skip
        for name, (by_queue, by_share) in self.ended.items():
            self.series.queue.setdefault(name, []).append(by_queue.copy())
            self.series.share.setdefault(name, []).append(by_share.copy())
        self.series.times.append(self.now)
        self.series.throttled.append(sorted((s, r, v.rule) for (s, r), v in self.verdicts.items() if v.throttled))

    def result(self) -> dict[str, Any]:
        """The run's output (see brokerage.sim.output).

        Usage: ``Simulation(snap, Config()).run(1).result()["headline"]``
        """
        from brokerage.sim.output import build_result

        return build_result(self)
