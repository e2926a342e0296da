"""What the simulator reads from a snapshot: queues with slots and failure rates, the share tree, work queues, tasks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from brokerage.model.errors import SimulationError
from brokerage.model.profiles import rule
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.tables import AGE_CLOCKS, AGE_RANKS, DEFAULT_VO
from brokerage.model.workqueues import RESOURCE_FUNCTION, ShareTree, partition_of, share_tree, task_work_queues
from brokerage.sim.scouts import N_SCOUT_JOBS
from brokerage.sim.split import JEDI_DISK, SEED_DISK, DiskRule, events_per_job, fixed_size, sizes

SCOUTING_STARTS = (
    "registered",
    "defined",
    "assigning",
    "ready",
    "scouting",
)  # tasks that have not run past their scouts
PER_CORE_UNITS = ("MBPerCore", "MBPerCoreFixed")
FAILURE_PRIOR_JOBS = 20  # smoothing: a queue with no history fails like FAILURE_PRIOR of 20 jobs
FAILURE_PRIOR = 0.05
MAX_ATTEMPT = {"managed": 3, "user": 10}  # refiner defaults: production maxAttempt 3; analysis 10 ...
MAX_FAILURE = {"managed": 10**6, "user": 3}  # ... with maxFailure 3 (production: no failure limit)
DEFAULT_CPU_EFFICIENCY = 90  # seed 003: "cpuEfficiency defaults to 90%"
DEFAULT_BASE_WALLTIME_S = 600.0  # seed 003: baseWalltime "default 600s" (switch basewalltime_as_jedi: 0)
NO_PILOT_STATUSES = ("offline",)  # pilots stop: running jobs lose their heartbeat, nothing is dispatched
EVGEN_6H_EXEMPT_CLOUDS = ("US", "ND")  # seed 003: "6 hours for activated evgen/simul jobs at T1 except US and ND"


@dataclass(frozen=True)
class SimGrid:
    """Arrays indexed by queue, share and resource type, and the tasks' work, for one run."""

    queues: list[str]
    queue_site: np.ndarray
    queue_status: np.ndarray
    queue_is_analysis: np.ndarray
    slots: np.ndarray  # running jobs the queue's pilots can hold
    failure_rate: np.ndarray
    laststart_age_h: np.ndarray  # hours since the last pilot start, at the run's start
    maxtime_s: np.ndarray
    corepower: np.ndarray
    maxrss: np.ndarray  # MB per slot (0: no memory limit); the pilot kills a payload above twice it
    queue_cores: np.ndarray  # the queue's corecount (0: any)
    shares: list[str]  # every node of the share tree (jobs sit on leaves), then shares only the jobs name
    share_target: np.ndarray  # % of the grid each share is pledged (leaves sum to 100)
    tree: ShareTree
    work_queues: list[str]  # aligned work queues: one per share (its global-share queue), then the Resource ones
    wq_throttled: np.ndarray  # bool per aligned work queue
    rtypes: list[str]
    vos: list[str]  # the VOs of the tasks and job counts, atlas first (a job's vo column indexes it)
    tasks: pd.DataFrame  # one row per task, index jediTaskID, with the simulator's columns
    disable_reassign: np.ndarray  # bool per queue: its catchall holds disableReassign
    transtime_d: np.ndarray  # CRIC transtimehi, transtimelo per queue (days; NaN: unset), shape (queues, 2)
    evgen_6h_queue: np.ndarray  # bool per queue: seed 003's 6-hour evgen/simul rule applies (T2s, T1s but US, ND)
    evgen_simul_tasks: np.ndarray  # production tasks of processingType evgen or simul
    harvester_slots: np.ndarray  # bool per queue: it has a Harvester_Slots entry (queues.numslots set)
    maxwdir_mb: np.ndarray  # scratch disk per job, MB (0: no limit)
    direct_access: np.ndarray  # bool per queue: its jobs may read input directly from the local storage


class SimInputError(SimulationError, ValueError):
    """The snapshot lacks what the simulator needs; ``problems`` name each table or column and what is expected."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("the snapshot cannot be simulated: " + "; ".join(problems))
        self.problems = problems


def input_problems(snap: GridSnapshot) -> list[str]:
    """What the simulator needs and SNAP lacks: the work queues, the share tree's values, the queues' slots.

    Usage: ``assert not input_problems(demo_snapshot())``
    """
    problems = []
    if snap.tables["queues"].empty:
        problems.append("queues: no rows; the simulator needs at least one PanDA queue to run jobs at")
    if snap.tables["work_queues"].empty:
        problems.append("work_queues: no rows; the simulator needs JEDI's work queues (queue_type, queue_order, "
                        "criteria, queue_function) to group tasks for the job throttler")  # fmt: skip
    g = snap.tables["gshares"]
    missing = g.loc[g["value"].isna(), "gshare"].astype(str).tolist()
    if g.empty:
        problems.append("gshares: no rows; the simulator needs the global-share tree (gshare, parent, value)")
    elif missing:
        shown = ", ".join(missing[:6]) + (", …" if len(missing) > 6 else "")
        problems.append(f"gshares.value: missing for {len(missing)} of {len(g)} shares ({shown}); the share tree "
                        "needs every share's value to set its pledge")  # fmt: skip
    if snap.tables["queue_slots"].empty and not snap.tables["queues"].empty:
        problems.append("queue_slots: no rows; the simulator needs each queue's slots (panda_queue, nslots)")
    return problems


def _failure_rates(snap: GridSnapshot, queues: list[str]) -> np.ndarray:
    """Per queue: failed / (finished + failed) of its recent jobs, smoothed towards FAILURE_PRIOR."""
    t = snap.tables["task_job_counts"]
    by = t.pivot_table(index="panda_queue", columns="jobstatus", values="njobs", aggfunc="sum", fill_value=0)
    fin = by.get("finished", pd.Series(dtype=float)).reindex(queues, fill_value=0).to_numpy(float)
    fail = by.get("failed", pd.Series(dtype=float)).reindex(queues, fill_value=0).to_numpy(float)
    return (fail + FAILURE_PRIOR * FAILURE_PRIOR_JOBS) / (fin + fail + FAILURE_PRIOR_JOBS)


def _task_work(
    snap: GridSnapshot, base_walltime: float = DEFAULT_BASE_WALLTIME_S, disk: DiskRule = SEED_DISK
) -> pd.DataFrame:  # fmt: skip
    """Per task: events per job, input units (one job's input each) still to process, walltime per job, and the
    sizes a job at a queue is bounded by (split.sizes; fixedSize: its rule fixes the size)."""
    t = snap.tables["tasks"].set_index("jeditaskid")
    d = snap.tables["datasets"]
    master = d[d["is_master"].astype(bool)].groupby("jeditaskid")[["nevents", "neventsused", "nfiles"]].sum()
    left = (master["nevents"] - master["neventsused"]).clip(lower=0).reindex(t.index, fill_value=0)
    per_job = events_per_job(t, master, disk)  # the split rule's job size (seed 003)
    size = sizes(t, master)
    scout_files = _one_file_scouts(t, size["per_file"], left, per_job)
    rest = (left - scout_files * size["per_file"]).clip(lower=0) / per_job  # in units, after the one-file scouts
    units = (scout_files + np.ceil(rest)).astype(np.int64)
    tail = rest - np.floor(rest)  # the last unit holds only the events left: JEDI's last job of a task is short
    cores = t["corecount"].replace(0, 8).clip(lower=1)  # corecount 0 means "any": 8 as the resource types count it
    # seed 003: "cpuEfficiency can be set to 0 to disable scaling with nEvents. In this case wall = baseWalltime"
    eff = t["cpuefficiency"].fillna(DEFAULT_CPU_EFFICIENCY) / 100.0
    base = t["basewalltime"].fillna(0).astype(float)
    base = base.where(base > 0, base_walltime)  # unset (0): the seed's default 600 s
    cpu = t["cputime"].fillna(0) * per_job  # HS06 s per job; divided by the queue's corepower when dispatched
    out = pd.DataFrame({
        "status": t["status"], "oldStatus": t["status"], "prodSourceLabel": t["prodsourcelabel"],
        "vo": t["vo"].fillna(DEFAULT_VO).replace("", DEFAULT_VO) if "vo" in t else DEFAULT_VO,
        "gshare": t["gshare"], "resource_type": t["resource_type"], "currentPriority": t["currentpriority"],
        "taskPriority": t["taskpriority"], "nucleus": t["nucleus"], "coreCount": cores.astype(int),
        "cpu_hs06s_per_job": np.where(eff > 0, cpu / (cores * eff.where(eff > 0, 1.0)), 0.0), "basewalltime": base,
        "chunk_njobs": t["chunk_njobs"].clip(lower=1).astype(int), "nFiles": units,
        "anyCores": (t["corecount"] == 0).to_numpy(),  # its jobs take the cores of the queue they land at
        "nFilesUsed": 0, "nFilesFinished": 0, "nFilesFailed": 0, "modificationTime": -3600.0 * 6,
        "stateChangeTime": 0.0, "frozenTime": np.nan, "throttledTime": np.nan,
        "numThrottled": np.where(t["prodsourcelabel"] == "user", -1, 0),
        # scouts: a task not started yet scouts first, exposing N_SCOUT_JOBS inputs (§5.1)
        "useScout": t["status"].isin(SCOUTING_STARTS).to_numpy(),
        "nFilesToBeUsed": np.where(t["status"].isin(SCOUTING_STARTS), np.minimum(units, N_SCOUT_JOBS), units),
        "scoutFiles": scout_files, "unitTail": np.where(tail > 1e-9, tail, 0.0),
        "ramCount": t["ramcount"].fillna(0).astype(float), "ramPerCore": t["ramunit"].isin(PER_CORE_UNITS),
        "ramFixed": (t["ramunit"] == "MBPerCoreFixed").to_numpy(), "baseRamCount": t["baseramcount"].fillna(0),
        "cpuTime": t["cputime"].fillna(0).astype(float), "cpuEfficiency": t["cpuefficiency"].fillna(0).astype(float),
        "eventService": t["eventservice"].fillna(False).astype(bool).to_numpy(),
        "nEventsPerUnit": per_job.round().astype(np.int64).to_numpy(), "fixedSize": fixed_size(t),
    })  # fmt: skip
    out = out.join(size)
    out.index.name = "jediTaskID"
    return out


def _one_file_scouts(t: pd.DataFrame, per_file: pd.Series, left: pd.Series, per_job: pd.Series) -> np.ndarray:
    """Per task, the one-file units its scouts are made of when its units of PER_JOB events are fewer than its scouts:
    JobSplitter gives the scouts of a task without nFilesPerJob or nEventsPerJob one file each, N_SCOUT_JOBS of them
    (fewer when fewer files are left); a task with enough units takes each scout's file from its own unit. 0 for
    the others (PER_FILE: the master input's events per file, 0 unknown)."""
    files = np.ceil(left / per_file.where(per_file > 0)).fillna(0)
    k = np.minimum(files, N_SCOUT_JOBS)
    one_file = t["status"].isin(SCOUTING_STARTS) & ~fixed_size(t) & (per_file > 0) & (per_job > per_file)
    return np.where(one_file & (np.ceil(left / per_job) < k), k, 0).astype(np.int64)


def sim_grid(snap: GridSnapshot, config: Mapping[str, Any] | None = None) -> SimGrid:
    """The simulator's view of SNAP: slots from queue_slots (a queue without a row: its running jobs), failure
    rates from recent job outcomes, share targets from the share tree, tasks in their aligned work queues
    (docs/lifecycle.md lists every choice). SimInputError when the snapshot lacks a table it needs.

    Usage: ``g = sim_grid(demo_snapshot()); g.slots.sum()``
    """
    if problems := input_problems(snap):
        raise SimInputError(problems)
    q = snap.tables["queues"]
    queues = [str(x) for x in q["panda_queue"]]
    jc = snap.tables["job_counts"]
    running = jc[jc["jobstatus"] == "running"].groupby("panda_queue")["njobs"].sum().reindex(queues, fill_value=0)
    nslots = snap.tables["queue_slots"].set_index("panda_queue")["nslots"].reindex(queues)
    slots = nslots.fillna(running).to_numpy(np.int64)
    taken = pd.to_datetime(snap.taken_at)
    laststart = pd.to_datetime(q["laststart"], utc=True)
    age_h = ((taken - laststart).dt.total_seconds() / 3600.0).fillna(1e6).to_numpy(float)
    tree = share_tree(snap.tables["gshares"])
    extra = sorted((set(jc["gshare"]) | set(snap.tables["tasks"]["gshare"])) - set(tree.names))
    shares = tree.names + [str(x) for x in extra]
    target = np.concatenate([tree.target, np.zeros(len(extra))])
    wq = snap.tables["work_queues"]
    resource = wq[(wq["queue_function"] == RESOURCE_FUNCTION) & (wq["status"] == "active")]
    subs = set(partition_of(wq)) if partitions(config) else set()  # a sub queue is run with its partition
    resource_names = sorted(set(resource["queue_name"].astype(str)) - set(shares) - subs)
    wq_throttled = np.concatenate([tree.throttled, np.ones(len(extra) + len(resource_names), dtype=bool)])
    tasks = task_table(snap, resource_names, base_walltime(config), partitions(config), disk_rule(config))
    rtypes = sorted(set(jc["resource_type"]) | set(snap.tables["tasks"]["resource_type"]))
    return SimGrid(
        queues=queues, queue_site=q["atlas_site"].to_numpy(object), queue_status=q["status"].to_numpy(object),
        queue_is_analysis=(q["type"] == "analysis").to_numpy(bool),
        slots=slots, failure_rate=_failure_rates(snap, queues), laststart_age_h=age_h,
        maxtime_s=q["maxtime"].fillna(0).to_numpy(float), corepower=q["corepower"].fillna(10.0).to_numpy(float),
        maxrss=q["maxrss"].fillna(0).to_numpy(float), queue_cores=q["corecount"].fillna(0).to_numpy(float),
        shares=shares, share_target=target, tree=tree, work_queues=shares + resource_names,
        wq_throttled=wq_throttled, rtypes=rtypes, tasks=tasks, vos=_vos(snap),
        disable_reassign=q["catchall"].fillna("").astype(str).str.contains("disableReassign").to_numpy(bool),
        transtime_d=q[["transtimehi", "transtimelo"]].astype(float).to_numpy(),
        evgen_6h_queue=_evgen_6h_queues(snap), evgen_simul_tasks=_evgen_simul_tasks(snap),
        harvester_slots=q["numslots"].notna().to_numpy(bool), maxwdir_mb=q["maxwdir"].fillna(0).to_numpy(float),
        direct_access=q["direct_access_lan"].fillna(False).astype(bool).to_numpy(),
    )  # fmt: skip


AGE_KEYS = ["panda_queue", "gshare", "resource_type", "jobstatus", "vo"]  # a job group: job_counts' keys


def recorded_ages(snap: GridSnapshot, jc: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per job of the job_counts rows JC (each row's njobs in turn, as the simulator makes them), its creation and
    modification time in seconds from the snapshot (negative: before it), from SNAP's job_ages: a group's jobs
    spread from its oldest through its median to its newest time, the first job the oldest (a lone job: the
    median); NaN where the group has no recorded time (the simulator then draws it).

    Usage: ``created, modified = recorded_ages(snap, snap.tables["job_counts"])``
    """
    n = jc["njobs"].to_numpy(np.int64)
    ages = snap.tables["job_ages"].drop_duplicates(AGE_KEYS)
    if ages.empty or n.sum() == 0:
        nan = np.full(int(n.sum()), np.nan)
        return nan, nan.copy()
    rows = jc[AGE_KEYS].merge(ages, on=AGE_KEYS, how="left")
    rank = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    share = np.where(np.repeat(n, n) > 1, rank / np.maximum(np.repeat(n, n) - 1, 1), 0.5)
    taken = pd.Timestamp(snap.taken_at)
    out = []
    for clock in AGE_CLOCKS:
        o, m, w = (
            np.repeat(((pd.to_datetime(rows[f"{r}_{clock}"], utc=True) - taken).dt.total_seconds()).to_numpy(float), n)
            for r in AGE_RANKS
        )
        # a point not recorded takes its neighbours': no median -> halfway, no oldest or newest -> the median
        m = np.where(np.isnan(m), (o + w) / 2, m)
        o, w = np.where(np.isnan(o), m, o), np.where(np.isnan(w), m, w)
        m = np.where(np.isnan(m), np.where(np.isnan(o), w, o), m)
        o, w = np.where(np.isnan(o), m, o), np.where(np.isnan(w), m, w)
        t = np.where(share <= 0.5, o + (m - o) * share * 2, m + (w - m) * (share - 0.5) * 2)
        out.append(np.minimum(t, 0.0))  # a time after the snapshot was taken is now
    return out[0], out[1]


def _vos(snap: GridSnapshot) -> list[str]:
    """Every VO of SNAP's tasks and job counts, atlas first (a job's default vo code 0 is atlas)."""
    t, jc = snap.tables["tasks"], snap.tables["job_counts"]
    named = {*t.get("vo", pd.Series(dtype=object)).fillna(DEFAULT_VO), *jc.get("vo", pd.Series(dtype=object))}
    return [DEFAULT_VO, *sorted(str(v) for v in named - {DEFAULT_VO, ""})]


def base_walltime(config: Mapping[str, Any] | None) -> float:
    """An unset baseWalltime in seconds: the seed's 600 s, or 0 under the switch ``basewalltime_as_jedi``.

    Usage: ``base_walltime(None)  # 600.0``
    """
    return 0.0 if config is not None and rule(config, "basewalltime_as_jedi") else DEFAULT_BASE_WALLTIME_S


def disk_rule(config: Mapping[str, Any] | None) -> DiskRule:
    """How a job's disk is estimated: seed 003's nGBPerJob sentence, or JEDI's constants under ``jobsize_as_jedi``.

    Usage: ``disk_rule(None)  # SEED_DISK``
    """
    return JEDI_DISK if config is not None and rule(config, "jobsize_as_jedi") else SEED_DISK


def partitions(config: Mapping[str, Any] | None) -> bool:
    """Whether work queues' partitions count (seed 003), not under the switch ``work_queue_partitions_as_jedi``.

    Usage: ``partitions(None)  # True``
    """
    return config is None or not rule(config, "work_queue_partitions_as_jedi")


def task_table(
    snap: GridSnapshot,
    resource_names: list[str],
    base_walltime_s: float = DEFAULT_BASE_WALLTIME_S,
    with_partitions: bool = True,
    disk: DiskRule = SEED_DISK,
) -> pd.DataFrame:
    """The simulator's rows of SNAP's tasks (as sim_grid makes them), each in its aligned work queue.

    Usage: ``rows = task_table(snap, g.work_queues[len(g.shares):])``
    """
    tasks = _task_work(snap, base_walltime_s, disk)
    tasks["workQueue"] = _aligned(snap, resource_names, with_partitions)
    return tasks


def _aligned(snap: GridSnapshot, resource_names: list[str], with_partitions: bool) -> np.ndarray:
    """Per task its aligned work queue: its Resource work queue if its criteria pick one, else its global share.
    WITH_PARTITIONS, a task of a partition's sub queue is the partition's (seed 003: "JEDI works with the partition
    queue, e.g., tasks in the partition queue are submitted together regardless of sub queues")."""
    t, wq_table = snap.tables["tasks"], snap.tables["work_queues"]
    wq = task_work_queues(t, wq_table, with_partitions).to_numpy(object)
    if with_partitions and (head := partition_of(wq_table)):
        wq = np.array([head.get(w, w) for w in wq], dtype=object)
    return np.where(np.isin(wq, resource_names), wq, t["gshare"].to_numpy(object))


def _evgen_6h_queues(snap: GridSnapshot) -> np.ndarray:
    """Per queue: at a T2 (tier_level >= 2 of its site), or a T1 outside the US and ND clouds (seed 003)."""
    q, sites = snap.tables["queues"], snap.tables["sites"]
    tier = q["atlas_site"].map(sites.set_index("site_name")["tier_level"]).fillna(2).to_numpy(float)
    return (tier >= 2) | ~q["cloud"].fillna("").str.upper().isin(EVGEN_6H_EXEMPT_CLOUDS).to_numpy()


def _evgen_simul_tasks(snap: GridSnapshot) -> np.ndarray:
    t = snap.tables["tasks"]
    pick = t["processingtype"].isin(("evgen", "simul")) & (t["prodsourcelabel"] != "user")
    return np.sort(t.loc[pick, "jeditaskid"].to_numpy(np.int64))
