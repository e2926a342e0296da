"""What a simulated grid holds between two agent cycles: the job, file and task tables, the clock and the counters.

Agents (``brokerage.sim.jobgen``, ``pilots``, ``adder``, ``finisher``, ``timeouts``, ``retrymodule``,
``postprocessor``, ``watchdog``, ``commands``, ``taskbroker``, ``brokering``) each have ``tick(state, now)`` and
change the state only through its public fields and the shared moves below, which check every job and task
transition against the state machines (``brokerage.sim.machines``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from brokerage.model.cache import GridCache, derived_cache
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.views import carry_task_records
from brokerage.sim import arrivals, machines, retry
from brokerage.sim.ended_jobs import EndedGroups
from brokerage.sim.events import EventLog
from brokerage.sim.jobs import DEFINED_TABLE, FINAL, IS_FINAL, STATUSES, JobTable, S, status_mask
from brokerage.sim.setup import SimGrid, base_walltime, disk_rule, partitions, recorded_ages, sim_grid, task_table
from brokerage.sim.split import SIZE_COLUMNS, sizing_of
from brokerage.sim.status_index import StatusIndex
from brokerage.sim.throttler import Limits, ThrottleVerdict

TICK_S = 60.0  # the clock's step; JobGenerator (10 s in JEDI) and dispatch run every tick
BACKGROUND_WALL_H = 6.0  # median walltime of the jobs the snapshot already holds (their task is unknown)
MIN_WALL_S, MAX_WALL_S = 600.0, 48 * 3600.0
DEFAULT_RAM_MB = 2000.0  # a task without a memory estimate
# attempt counters fit 32 bits (maxFailure is at most 10**6 plus a few retries); the task id keeps 64
FILE_TYPES = {"status": np.int8, "ramCount": np.float64, "share": np.float64, "attemptNr": np.int32,
              "failedAttempt": np.int32, "maxAttempt": np.int32, "maxFailure": np.int32}  # fmt: skip
# the statuses whose rows the index keeps: those the agents read every cycle (live_rows)
TRACKED = [S[x] for x in ("assigned", "activated", "sent", "starting", "running", "holding", "transferring")]
TRACKED_MASK = status_mask(TRACKED)
# per task status change: time, jediTaskID, from, to, the sentence of its cause
TaskCause = tuple[float, int, str, str, str]


class Files:
    """Input units picked at least once (one job's input each), PanDA's per-file counters (§4.1), in growable
    columns: ``task``, ``attemptNr``, ``failedAttempt``, ``maxAttempt``, ``maxFailure``, ``status`` and ``ramCount``
    (MB, or MB per core; 0 until the retry module raises it for the next attempt) and ``share`` (its events as a
    fraction of the task's events per job: below 1 once a queue's limits shortened it, jobsize.py)."""

    READY, RUNNING, FINISHED, FAILED = 0, 1, 2, 3
    _COLUMNS = ("task", "attemptNr", "failedAttempt", "maxAttempt", "maxFailure", "status", "ramCount", "share")

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
                  "maxFailure": max_failure, "status": self.RUNNING, "ramCount": 0.0, "share": 1.0}  # fmt: skip
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


class SimState:
    """One run's tables and clock: SNAP moved forward under CONFIG, randomness from one generator seeded with SEED;
    NEW_TASKS: tasks arrive as the snapshot's history shows (brokerage.sim.arrivals).

    Usage: ``state = SimState(snap, Config(), seed=1); state.live_rows("running")``
    """

    def __init__(
        self, snap: GridSnapshot, config: Config, seed: int = 0, retry_rules: Sequence[retry.RetryRule] | None = None,
        error_classes: Sequence[retry.ErrorClass] | None = None, new_tasks: bool = True,
    ) -> None:  # fmt: skip
        self.snap, self.config, self.seed = snap, config, seed
        self.retry_rules = tuple(retry.DEFAULT_RULES if retry_rules is None else retry_rules)
        self.error_classes = tuple(retry.DEFAULT_CLASSES if error_classes is None else error_classes)
        self.retries: dict[tuple[str, int, str], int] = {}  # (error source, code, what the retry module did) -> jobs
        self.raised_ram: dict[int, dict[int, float]] = {}  # task -> its inputs the retry module gave more memory
        self.memory_failed: dict[int, int] = {}  # task -> its jobs that failed for memory (seed's 30 % rule)
        self.rng = np.random.default_rng(seed)
        self.g: SimGrid = sim_grid(snap, config)
        self.qi = {n: i for i, n in enumerate(self.g.queues)}
        self.si = {n: i for i, n in enumerate(self.g.shares)}
        self.wi = {n: i for i, n in enumerate(self.g.work_queues)}
        self.ri = {n: i for i, n in enumerate(self.g.rtypes)}
        self.evgen_simul_tasks = self.g.evgen_simul_tasks  # E6's tasks (copyArchive)
        self.tasks = self.g.tasks.copy()
        self.jobs = JobTable.empty(1 << 20)
        # jobs per status and (queue, share) or (work queue, resource type), and rows per status, kept by the moves
        self.jobs.index = self.index = StatusIndex(len(STATUSES), len(self.g.queues), len(self.g.shares),
                                                   len(self.g.work_queues), TRACKED, nvo=len(self.g.vos))  # fmt: skip
        self.files = Files()
        self.retry_pool: dict[int, list[int]] = {}  # task -> units back to ready, waiting for a new job
        self.log = EventLog()
        self.task_causes: list[TaskCause] = []
        self.dry_runs: list[tuple[float, str, str, int]] = []  # fast rebrokerage dry runs: time, queue, share, jobs
        self.commands: list[tuple[float, int, str, str, str]] = []  # task commands: time, task, command, outcome, why
        self.todo_commands: list[Any] = []  # task commands still to apply, by time (brokerage.sim.commands)
        self.series = Series()
        self.now = 0.0
        self.next_run: dict[str, float] = {}  # agent -> when it runs next
        # per queue, when a job last started there (SiteData.laststart; the pilots move it; seconds, run clock)
        self.laststart = -3600.0 * self.g.laststart_age_h
        self._brokerage_state(snap)
        self._task_state()
        self._truth(seed)
        # new tasks (NEW_TASKS False: none): from the snapshot and the seed, never the config
        self.arrival_plan = arrivals.plan(snap, seed, arrivals.PLAN_HOURS if new_tasks else 0.0)
        self.arrived = 0  # arrivals of the plan taken so far (brokerage.sim.refiner)
        nq, ns = len(self.g.queues), len(self.g.shares)
        # jobs that ended, counted as they end: per final status, per queue and per share
        self.ended = {
            name: (np.zeros(nq, np.int64), np.zeros(ns, np.int64)) for name in ("finished", "failed", "closed")
        }
        self._seed_jobs()
        self._to_final: list[np.ndarray] = []  # rows the moves made final since the last prune_live
        self.ended_groups = EndedGroups()  # the ended jobs per (task, queue, status, hour), for task_job_counts
        self.live = np.flatnonzero(~np.isin(self.jobs["jobStatus"], FINAL))  # rows not final, in PandaID order
        self.new_rows: list[np.ndarray] = []  # rows JobGenerator made this cycle, live from its end
        self.new_jobs: list[dict[str, np.ndarray | float]] = []  # their columns, appended at its end (jobgen.flush)
        self.new_n = 0  # how many rows new_jobs holds

    def _brokerage_state(self, snap: GridSnapshot) -> None:
        """The brokers' view (refreshed by brokerage.sim.brokering) and the decisions kept until the next refresh."""
        self.cache = GridCache(snap)
        self.base_cache = self.cache
        self.brokerage_snap = snap
        self.decisions: dict[int, Decision] = {}
        # per task (and chunk ramCount): candidate queues, weights, and the running and queued the brokers saw
        self.choices: dict[Any, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        # (running, queued) per (queue, share): at the brokers' last refresh, and now (kept by JobGenerator)
        self.ref_counts: tuple[np.ndarray, np.ndarray] | None = None
        self.live_counts: tuple[np.ndarray, np.ndarray] | None = None
        tasks = snap.tables["tasks"]  # what the snapshot says of each task's next jobs (the brokers read is_scout)
        self.snap_is_scout = dict(zip(tasks["jeditaskid"].astype(int), tasks["is_scout"].astype(bool), strict=True))
        self.verdicts: dict[tuple[str, str], ThrottleVerdict] = {}
        # JOB_STATS_HP (brokerage.sim.live_counts.hp_stats)
        self.hp_stats: dict[tuple[int, int], tuple[float, int]] = {}
        self.limits: dict[tuple[str, str], Limits] = {}
        # task -> its estimates changed during the run (scout-derived ramcount and cputime, the retry module's
        # ramcount), given to the brokers at their next refresh
        self.scouted: dict[int, dict[str, float]] = {}
        self.fresh: dict[int, dict[str, float]] = {}  # of those, the ones the brokers' snapshot does not hold yet

    def _task_state(self) -> None:
        """Per task: the fields JobGenerator reads, its aligned indices, nucleus and counters."""
        t = self.tasks
        # fields JobGenerator reads for every chunk that do not change during a run (plain values: no pandas lookup)
        self.static = {
            int(tid): (float(b), float(c), int(k), str(lab), float(p))
            for tid, b, c, k, lab, p in zip(t.index, t["basewalltime"], t["cpu_hs06s_per_job"], t["coreCount"],
                                            t["prodSourceLabel"], t["currentPriority"], strict=True)
        }  # fmt: skip
        self.sizing = sizing_of(t)  # what a job's size at a queue is computed from (jobsize.py)
        # task -> its one-file scout units not made yet (jobsize.take_tail), the share of its short unit not made yet
        self.scout_files: dict[int, int] = _set(t, "scoutFiles", int)
        self.unit_tail: dict[int, float] = _set(t, "unitTail", float)
        self.tasks = t = t.drop(columns=list(SIZE_COLUMNS))  # kept in sizing only: the table is copied each tick
        # per task row: aligned work queue, resource type and share indices (-1: unknown), chunk size
        self.task_w = t["workQueue"].map(self.wi).fillna(-1).to_numpy(np.int64).copy()
        self.task_r = t["resource_type"].map(self.ri).fillna(-1).to_numpy(np.int64)
        self.task_s = t["gshare"].map(self.si).fillna(-1).to_numpy(np.int64).copy()
        self.task_chunk = t["chunk_njobs"].to_numpy(np.int64)
        sites = self.snap.tables["sites"]
        self.nuclei = sorted(set(sites.loc[sites["role"] == "nucleus", "site_name"].astype(str))
                             | set(t["nucleus"].dropna().astype(str)))  # fmt: skip
        self.nucleus_code = {n: i + 1 for i, n in enumerate(self.nuclei)}  # 0: no nucleus
        self.task_nucleus = {  # task -> the code of its nucleus (0: none yet, or analysis)
            int(tid): self.nucleus_code.get(n, 0) if isinstance(n, str) else 0
            for tid, n in zip(t.index, t["nucleus"], strict=True)
        }
        self.task_ram = dict(zip(t.index.tolist(), t["ramCount"].astype(float).tolist(), strict=True))  # ramCount now
        self.any_cores = set(t.index[t["anyCores"].to_numpy(bool)].tolist())
        self.vo_of: dict[int, int] = {}  # task -> its VO's index in g.vos (brokering.vo_code fills it)
        self.per_core = set(t.index[t["ramPerCore"].to_numpy(bool)].tolist())
        self.scout_rows: dict[int, list[np.ndarray]] = {}  # task -> rows of its scout jobs
        # per task row, counted as jobs are made and end (the WatchDog's progress actions read them)
        self.task_ids = t.index.to_numpy(np.int64)
        self.task_order = np.argsort(self.task_ids, kind="stable")
        self.jobs_made = np.zeros(len(t), np.int64)
        self.jobs_finished = np.zeros(len(t), np.int64)
        self.jobs_failed = np.zeros(len(t), np.int64)

    def _truth(self, seed: int) -> None:
        """What scouts measure: each task's true memory per job (MB) and CPU factor against its estimate, from a
        generator of its own so the run's other draws do not depend on them."""
        t = self.tasks
        truth = np.random.default_rng([seed, 1])
        est_mb = np.where(t["ramPerCore"], t["ramCount"] * t["coreCount"], t["ramCount"]).astype(float)
        est_mb = np.where(est_mb > 0, est_mb, DEFAULT_RAM_MB)
        self.true_ram_mb = dict(
            zip(t.index.tolist(), (est_mb * truth.lognormal(0.1, 0.3, len(t))).tolist(), strict=True)
        )
        self.true_cpu = dict(zip(t.index.tolist(), truth.lognormal(0.0, 0.3, len(t)).tolist(), strict=True))

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
        real_created, real_mod = recorded_ages(self.snap, jc)  # the snapshot's job_ages; NaN: drawn
        created = -r.uniform(0, 12 * 3600, k)
        start = np.where(status == S["running"], -r.uniform(0, 1, k) * wall, np.nan)
        mod = np.where(np.isin(status, DEFINED_TABLE), -r.uniform(0, 6 * 3600, k), created)
        mod = np.where(status == S["transferring"], -r.uniform(0, 2 * 3600, k), mod)
        mod = np.where(status == S["sent"], -r.uniform(0, 3600, k), mod)  # a pilot got it within the last hour
        created, mod = (
            np.where(np.isnan(real_created), created, real_created),
            np.where(np.isnan(real_mod), mod, real_mod),
        )
        real = ~np.isnan(real_created) | ~np.isnan(real_mod)
        start = np.where(real, np.maximum(start, created), start)  # a recorded job starts after it was made
        mod = np.where(status == S["running"], start, np.where(real, np.maximum(mod, created), mod))
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
            vo=rep(jc["vo"].map({v: i for i, v in enumerate(self.g.vos)}).to_numpy(np.int64)),  # the count's VO
        )  # fmt: skip

    def add_tasks(self, tasks: pd.DataFrame, datasets: pd.DataFrame, replicas: pd.DataFrame) -> pd.Index:
        """New tasks (snapshot rows of tasks, datasets, dataset_replicas; ids above every known one) join the run:
        the snapshot the brokers read, the task table and every per-task index; their ids.

        Usage: ``ids = state.add_tasks(*arrivals.new_tables(state.snap, templates, 10**9, 10**9))``
        """
        cat = lambda name, new: pd.concat([self.snap.tables[name], new], ignore_index=True)  # noqa: E731
        tables = {"tasks": cat("tasks", tasks), "datasets": cat("datasets", datasets),
                  "dataset_replicas": cat("dataset_replicas", replicas)}  # fmt: skip
        self.snap = self.snap.replace(**tables)
        self.brokerage_snap = self.brokerage_snap.replace(**tables)
        prev, self.cache = self.cache, derived_cache(self.base_cache, self.brokerage_snap)
        carry_task_records(self.cache, prev)  # only the new tasks' records are built
        mini = self.snap.replace(tasks=tasks, datasets=datasets)
        rows = task_table(
            mini,
            self.g.work_queues[len(self.g.shares) :],
            base_walltime(self.config),
            partitions(self.config),
            disk_rule(self.config),
        )
        self.snap_is_scout.update(zip(tasks["jeditaskid"].astype(int), tasks["is_scout"].astype(bool), strict=True))
        self.tasks = pd.concat([self.tasks, rows.drop(columns=list(SIZE_COLUMNS))])
        self._index_tasks(rows)
        truth = np.random.default_rng([self.seed, 4, int(rows.index[0])])
        est = np.where(rows["ramPerCore"], rows["ramCount"] * rows["coreCount"], rows["ramCount"]).astype(float)
        est = np.where(est > 0, est, DEFAULT_RAM_MB)
        self.true_ram_mb.update(zip(rows.index.tolist(), (est * truth.lognormal(0.1, 0.3, len(rows))).tolist(),
                                    strict=True))  # fmt: skip
        self.true_cpu.update(zip(rows.index.tolist(), truth.lognormal(0.0, 0.3, len(rows)).tolist(), strict=True))
        return rows.index

    def _index_tasks(self, t: pd.DataFrame) -> None:
        """Append tasks T (rows of the simulator's task table, ids above every known one) to the per-task indices."""
        self.static.update({
            int(tid): (float(b), float(c), int(k), str(lab), float(p))
            for tid, b, c, k, lab, p in zip(t.index, t["basewalltime"], t["cpu_hs06s_per_job"], t["coreCount"],
                                            t["prodSourceLabel"], t["currentPriority"], strict=True)
        })  # fmt: skip
        self.sizing.update(sizing_of(t))
        self.scout_files.update(_set(t, "scoutFiles", int))
        self.unit_tail.update(_set(t, "unitTail", float))
        grow = lambda old, new: np.concatenate([old, np.asarray(new, old.dtype)])  # noqa: E731
        self.task_w = grow(self.task_w, t["workQueue"].map(self.wi).fillna(-1))
        self.task_r = grow(self.task_r, t["resource_type"].map(self.ri).fillna(-1))
        self.task_s = grow(self.task_s, t["gshare"].map(self.si).fillna(-1))
        self.task_chunk = grow(self.task_chunk, t["chunk_njobs"])
        self.task_nucleus.update({int(tid): 0 for tid in t.index})
        self.task_ram.update(zip(t.index.tolist(), t["ramCount"].astype(float).tolist(), strict=True))
        self.any_cores |= set(t.index[t["anyCores"].to_numpy(bool)].tolist())
        self.per_core |= set(t.index[t["ramPerCore"].to_numpy(bool)].tolist())
        self.task_ids = grow(self.task_ids, t.index)
        self.task_order = np.argsort(self.task_ids, kind="stable")
        for name in ("jobs_made", "jobs_finished", "jobs_failed"):
            setattr(self, name, grow(getattr(self, name), np.zeros(len(t))))

    # ------------------------------------------------------------------ clock and indices

    def due(self, agent: str, period: float) -> bool:
        """Whether AGENT runs this tick (first at the run's start, then every PERIOD).

        Usage: ``if state.due("adder", 240.0): adder.tick(state, state.now)``
        """
        if self.now + 1e-9 >= self.next_run.get(agent, 0.0):
            self.next_run[agent] = self.now + period
            return True
        return False

    @property
    def live(self) -> np.ndarray:
        """Rows of the jobs not final at the last ``prune_live`` and those made since, in PandaID order."""
        return self._live

    @live.setter
    def live(self, rows: np.ndarray) -> None:
        self._live = rows
        self._rescan = True  # rows set from outside the moves: the next prune reads their statuses

    def prune_live(self) -> None:
        """Drop the rows that became final from the index of live jobs (those the moves made final since the last
        prune, or, after the index was set from outside, every row whose status is final)."""
        gone, self._to_final = self._to_final, []
        if self._rescan:
            self._live = self._live[~IS_FINAL[self.jobs["jobStatus"][self._live]]]
            self._rescan = False
            return
        if not gone:
            return
        gone_rows = np.unique(np.concatenate(gone))
        live = self._live
        pos = np.searchsorted(live, gone_rows)
        ok = pos < len(live)
        ok[ok] = live[pos[ok]] == gone_rows[ok]
        keep = np.ones(len(live), bool)
        keep[pos[ok]] = False
        self._live = live[keep]

    def live_rows(self, *statuses: str) -> np.ndarray:
        """Rows of live jobs in one of STATUSES, in PandaID order.

        Usage: ``state.live_rows("activated", "throttled")``
        """
        st = self.jobs["jobStatus"]
        codes = [S[x] for x in statuses]
        if not TRACKED_MASK[codes].all():  # a status whose rows are not kept: read the live jobs' statuses
            wanted = np.zeros(len(S), bool)
            wanted[codes] = True
            return self.live[wanted[st[self.live]]]
        parts = [self.index.rows(c, st) for c in codes]  # a status's rows are the live ones (it is not final)
        return parts[0] if len(parts) == 1 else np.sort(np.concatenate(parts))

    def task_rows(self, tids: np.ndarray) -> np.ndarray:
        """Row positions in the task table of task ids TIDS (all known).

        Usage: ``state.jobs_made[state.task_rows(np.array([42]))]``
        """
        return self.task_order[np.searchsorted(self.task_ids, tids, sorter=self.task_order)]

    def add_live(self) -> None:
        """The rows made this cycle (``new_rows``) join the live index, after the older ones."""
        if self.new_rows:
            self._live = np.concatenate([self._live, *self.new_rows])  # activated: none is final
            self.new_rows = []

    # ------------------------------------------------------------------ moves (checked against the machines)

    def move_jobs(self, rows: np.ndarray, status: str, via: Sequence[str] = ()) -> None:
        """Jobs ROWS to STATUS now (through the statuses VIA, taken within this tick), checked against the job
        machine: SimulationError names the first job that may not move so.

        Usage: ``state.move_jobs(rows, "running", via=machines.DISPATCHED_VIA)``
        """
        c = self.jobs.cols
        old = c["jobStatus"][rows]
        machines.check_job_moves(old, status, c["PandaID"][rows], via)
        self.index.moved(rows, old, S[status], c["computingSite"][rows], c["gshare"][rows], c["workQueue"][rows],
                         c["resource_type"][rows], c["vo"][rows])  # fmt: skip
        c["jobStatus"][rows] = S[status]
        if IS_FINAL[S[status]]:
            self._to_final.append(rows)
            self.ended_groups.moved(rows)
        c["modificationTime"][rows] = self.now
        c["stateChangeTime"][rows] = self.now

    def set_share(self, rows: np.ndarray, share: int, work_queue: int) -> None:
        """Jobs ROWS to global share SHARE and aligned work queue WORK_QUEUE (indices), their counts with them.

        Usage: ``state.set_share(rows, state.si["Express"], state.wi["Express"])``
        """
        c = self.jobs.cols
        self.index.rekeyed(c["jobStatus"][rows], c["computingSite"][rows], (c["gshare"][rows], c["workQueue"][rows]),
                           (share, work_queue), c["resource_type"][rows], c["vo"][rows])  # fmt: skip
        c["gshare"][rows] = share
        c["workQueue"][rows] = work_queue

    def move_tasks(self, ids: pd.Index, new: str, why: str) -> None:
        """Tasks IDS to status NEW now, logged with the sentence WHY; checked against the task machine.

        Usage: ``state.move_tasks(pd.Index([42]), "ready", "TaskBroker: nucleus chosen")``
        """
        if len(ids) == 0:
            return
        t = self.tasks
        if len(ids) == 1:  # one task (JobGenerator's moves, nearly all of them): .at is ~100x cheaper than .loc
            tid = ids[0]
            old = np.array([t.at[tid, "status"]], dtype=object)
            machines.check_task_moves([(tid, old[0], new)], why)
            t.at[tid, "oldStatus"] = old[0]
            t.at[tid, "status"] = new
            t.at[tid, "stateChangeTime"] = self.now
            t.at[tid, "modificationTime"] = self.now
        else:
            old = t.loc[ids, "status"].to_numpy(object)
            machines.check_task_moves(zip(ids.tolist(), old.tolist(), [new] * len(ids), strict=True), why)
            t.loc[ids, "oldStatus"] = old
            t.loc[ids, "status"] = new
            t.loc[ids, "stateChangeTime"] = self.now
            t.loc[ids, "modificationTime"] = self.now
        self.log.add(self.now, ids.to_numpy(np.int64), old, new, "task")
        self.task_causes.extend((self.now, int(i), str(o), new, why) for i, o in zip(ids, old, strict=True))

    def note_task(self, tid: int, why: str) -> None:
        """A change to task TID that keeps its status (priority, share, estimates), kept with the status changes.

        Usage: ``state.note_task(42, "WatchDog: priority -> 900")``
        """
        status = str(self.tasks.at[tid, "status"])
        self.task_causes.append((self.now, tid, status, status, why))

    # ------------------------------------------------------------------ counters and estimates

    def count_files(self, tids: np.ndarray, column: str) -> None:
        """Add one to the task table's COLUMN per occurrence of a task in TIDS.

        Usage: ``state.count_files(np.array([42, 42]), "nFilesFinished")``
        """
        if len(tids):
            ids, n = np.unique(tids, return_counts=True)
            self.tasks.loc[ids, column] = self.tasks.loc[ids, column].to_numpy() + n

    def estimates_changed(self, tid: int, fields: dict[str, float]) -> None:
        """Task TID's estimates (ramcount, cputime) changed: the task table takes them, its next brokerage uses them
        at once, as JEDI reads the task each cycle, and the brokers' snapshot takes them at its next refresh.

        Usage: ``state.estimates_changed(42, {"ramcount": 3000.0})``
        """
        if "ramcount" in fields:
            self.tasks.at[tid, "ramCount"] = self.task_ram[tid] = float(fields["ramcount"])
        if "cputime" in fields:
            self.tasks.at[tid, "cpuTime"] = float(fields["cputime"])
        self.scouted.setdefault(tid, {}).update(fields)
        self.fresh.setdefault(tid, {}).update(fields)
        self.forget_brokerage(tid)

    def forget_brokerage(self, tid: int) -> None:
        """Drop task TID's kept brokerage (its decision and every chunk's choices): its next chunk is brokered anew.

        Usage: ``state.forget_brokerage(4242)``
        """
        self.decisions.pop(tid, None)
        for key in [k for k in self.choices if k == tid or (isinstance(k, tuple) and k[0] == tid)]:
            del self.choices[key]


def _set(t: pd.DataFrame, column: str, kind: type) -> dict[int, Any]:
    """Per task of the simulator's task table T whose COLUMN is set (above 0), its value as KIND: scoutFiles, the
    one-file scout units still to make (setup._one_file_scouts); unitTail, the share of its short last unit."""
    v = t[column].to_numpy(float)
    return dict(zip(t.index[v > 0].tolist(), (kind(x) for x in v[v > 0].tolist()), strict=True))
