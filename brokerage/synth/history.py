"""Task status histories for demo grids, made by the simulator (brokerage.sim) rather than by a random walk.

A small lab grid (the demo generator's, its tasks rewound to ``defined`` with a few short jobs' worth of input each,
and a few task commands at random times) is simulated for LAB_HOURS. Every lab task's status changes form one
path. Each task of the grid then takes a lab path of its kind (analysis or production) that passes through its
current status, cut there; a status the lab never reached is joined to the path by the task machine's shortest
allowed route (``brokerage.sim.task_states``). The path's simulated times are shifted so that it ends when the
task's current status began (its ``modificationtime`` when that lies before the snapshot).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

import numpy as np
import pandas as pd

from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.sim.commands import TaskCommand
from brokerage.sim.engine import Simulation
from brokerage.sim.task_states import DESCRIPTIONS, INITIAL_STATUS, TASK_STATUSES, TRANSITIONS, TransitionError
from brokerage.synth.demo import demo_snapshot

LAB_QUEUES, LAB_TASKS, LAB_HOURS = 40, 60, 8.0  # the lab grid and how long it is simulated (a few seconds)
LAB_UNITS = (3, 40)  # input units (one job's input each) per lab task, drawn in this range
LAB_JOB_MINUTES = 40.0  # median walltime of a lab job (lognormal, sigma 0.5): tasks end within the lab's hours
LAB_MAX_BASEWALL_S = 600.0
LAB_COMMANDS = (("pause", 0.08), ("kill", 0.05), ("finish", 0.05), ("reassign", 0.05))  # (command, share of tasks)
LAB_LATE_COMMANDS = (("retry", 0.08), ("incexec", 0.04))  # in the lab's last hours, once tasks have ended
RESUME_AFTER_S = (1800.0, 7200.0)  # a paused lab task is resumed this long after (uniform)
REFINE_S = (10.0, 600.0)  # registered -> defined: TaskRefiner takes a new task within 10 min (uniform)
FALLBACK_DWELL_S = 600.0  # median time in a status the lab never left (lognormal, sigma 0.8)
MAX_ELAPSED_FRACTION = 0.6  # the current status began at most this share of the window before taken_at


@dataclass(frozen=True)
class LabPath:
    """One lab task's statuses from defined on, with the simulated second each began; user: an analysis task."""

    statuses: tuple[str, ...]
    times: np.ndarray
    user: bool


@dataclass(frozen=True)
class Lab:
    """The lab's paths, the index of which paths pass through each status, and the dwell times it saw per status."""

    paths: tuple[LabPath, ...]
    through: dict[tuple[bool, str], tuple[int, ...]]  # (user, status) -> paths passing through it
    dwell: dict[str, np.ndarray]  # status -> seconds spent in it before the next change
    end_s: float


def simulate_task_history(tasks: pd.DataFrame, taken_at: datetime, seed: int, days: int = 21) -> pd.DataFrame:
    """task_status_log rows (jeditaskid, status, modificationtime) for every task, deterministic from SEED.

    Each history starts at registered, takes only allowed transitions (the simulator's, joined to a status it never
    reached by the task machine's shortest route) and ends in the task's current ``status`` at or before TAKEN_AT
    (at the task's ``modificationtime`` when that lies in the past), within DAYS before TAKEN_AT unless the anchor
    itself is older.
    Usage: ``log = simulate_task_history(snap.tasks, snap.taken_at, seed=0)``
    """
    taken = pd.Timestamp(taken_at)
    taken = taken.tz_localize(UTC) if taken.tzinfo is None else taken.tz_convert(UTC)
    statuses = [str(s) for s in tasks["status"].tolist()]
    unknown = sorted({s for s in statuses if s not in DESCRIPTIONS})
    if unknown:
        raise TransitionError(
            f"tasks.status holds unknown task statuses {', '.join(repr(s) for s in unknown)}; "
            f"known statuses: {', '.join(TASK_STATUSES)}"
        )
    if len(tasks) == 0:
        return _log_frame(np.empty(0, np.int64), [], np.empty(0, np.int64))
    lab = lab_paths(int(seed), taken.to_pydatetime())
    rng = np.random.default_rng([int(seed), 2])
    users = (tasks["prodsourcelabel"] == "user").tolist() if "prodsourcelabel" in tasks else [False] * len(tasks)
    taken_s, window = taken.timestamp(), float(days) * 86400.0
    anchors = _anchors(tasks, taken_s)
    ids, flat, times = [], [], []
    for tid, status, user, anchor in zip(tasks["jeditaskid"].tolist(), statuses, users, anchors, strict=True):
        path, rel, stay = _task_path(lab, rng, status, bool(user))
        elapsed = min(rng.random() * stay, MAX_ELAPSED_FRACTION * window)
        last = anchor if not np.isnan(anchor) else taken_s - elapsed
        ids.extend([int(tid)] * len(path))
        flat.extend(path)
        times.append(_place(rel, last, taken_s - window))
    return _log_frame(np.asarray(ids, np.int64), flat, np.concatenate(times))


@lru_cache(maxsize=4)
def lab_paths(seed: int, taken_at: datetime) -> Lab:
    """The lab's task paths for SEED: its grid simulated for LAB_HOURS (kept: several grids are set up alike).

    Usage: ``lab_paths(0, snap.taken_at).paths[0].statuses``
    """
    snap, commands = _lab_grid(seed, taken_at)
    sim = Simulation(snap, Config(), seed=seed, new_tasks=False).run(LAB_HOURS, commands=commands)
    start = dict(zip(sim.g.tasks.index.tolist(), sim.g.tasks["status"].tolist(), strict=True))
    steps: dict[int, list[tuple[str, float]]] = {tid: [(status, 0.0)] for tid, status in start.items()}
    for t, tid, old, new, _why in sim.task_causes:
        if old != new:  # same-status entries are notes (priority, share, estimates)
            steps[tid].append((new, t))
    user = dict(zip(sim.g.tasks.index.tolist(), (sim.g.tasks["prodSourceLabel"] == "user").tolist(), strict=True))
    paths = tuple(
        LabPath(tuple(s for s, _ in seq), np.array([t for _, t in seq]), bool(user[tid])) for tid, seq in steps.items()
    )
    through: dict[tuple[bool, str], list[int]] = {}
    dwell: dict[str, list[float]] = {}
    for i, p in enumerate(paths):
        for s in set(p.statuses):
            through.setdefault((p.user, s), []).append(i)
        for s, a, b in zip(p.statuses, p.times, p.times[1:], strict=False):
            dwell.setdefault(s, []).append(float(b - a))
    return Lab(paths, {k: tuple(v) for k, v in through.items()}, {k: np.array(v) for k, v in dwell.items()},
               sim.now)  # fmt: skip


def _lab_grid(seed: int, taken_at: datetime) -> tuple[GridSnapshot, list[TaskCommand]]:
    """The demo generator's small grid with its tasks rewound to defined, a few short jobs' worth of input each,
    no jobs of its own, and the lab's task commands."""
    snap = demo_snapshot(seed=seed, queues=LAB_QUEUES, tasks=LAB_TASKS, taken_at=taken_at)
    rng = np.random.default_rng([seed, 3])
    t = snap.tables["tasks"].copy()
    n = len(t)
    per_job = (t["chunk_nevents"] / t["chunk_njobs"].clip(lower=1)).clip(lower=1)
    units = rng.integers(LAB_UNITS[0], LAB_UNITS[1] + 1, n)
    cores = t["corecount"].replace(0, 8).clip(lower=1)
    eff = (t["cpuefficiency"].fillna(90) / 100.0).clip(lower=0.05)
    t["basewalltime"] = t["basewalltime"].fillna(0).clip(upper=LAB_MAX_BASEWALL_S)
    wall = LAB_JOB_MINUTES * 60.0 * rng.lognormal(0.0, 0.5, n)
    power = float(snap.tables["queues"]["corepower"].fillna(10.0).median())
    t["cputime"] = ((wall - t["basewalltime"]).clip(lower=60.0) * power * cores * eff / per_job).round(3)
    t["status"], t["nucleus"] = "defined", None
    ds = snap.tables["datasets"].copy()
    master = ds["is_master"].astype(bool)
    events = dict(zip(t["jeditaskid"], (per_job * units).round(), strict=True))
    ds.loc[master, "nevents"] = ds.loc[master, "jeditaskid"].map(events).astype(ds["nevents"].dtype)
    ds.loc[master, "neventsused"] = 0
    lab = snap.replace(tasks=t, datasets=ds, job_counts=snap.tables["job_counts"].iloc[:0])
    return lab, _lab_commands(rng, t["jeditaskid"].tolist())


def _lab_commands(rng: np.random.Generator, tids: list[int]) -> list[TaskCommand]:
    """Task commands for some lab tasks at random times (a pause resumed later; retry and incexec late)."""
    end = LAB_HOURS * 3600.0
    out: list[TaskCommand] = []
    for tid in tids:
        draw = rng.random()
        for command, share in (*LAB_COMMANDS, *LAB_LATE_COMMANDS):
            if draw < share:
                late = (command, share) in LAB_LATE_COMMANDS
                at = float(rng.uniform(0.6, 0.95) if late else rng.uniform(0.05, 0.7)) * end
                out.append(TaskCommand(at, int(tid), command))
                if command == "pause":
                    out.append(TaskCommand(min(at + float(rng.uniform(*RESUME_AFTER_S)), end - 60.0), int(tid),
                                           "resume"))  # fmt: skip
                break
            draw -= share
    return out


def _task_path(lab: Lab, rng: np.random.Generator, status: str, user: bool) -> tuple[list[str], np.ndarray, float]:
    """A path from registered to STATUS for a task of USER's kind: a lab path cut at STATUS (or joined to it by the
    machine's shortest route), its times in seconds from its start, and how long the last status may have lasted."""
    pool = lab.through.get((user, status)) or lab.through.get((not user, status))
    if not pool:
        pool = [i for i, p in enumerate(lab.paths) if p.user == user] or list(range(len(lab.paths)))
    p = lab.paths[int(rng.choice(pool))]
    statuses = [INITIAL_STATUS, *p.statuses]  # TaskRefiner registered the task a little before it was defined
    times = [float(p.times[0] - rng.uniform(*REFINE_S)), *p.times.tolist()]
    if status in statuses:
        i = len(statuses) - 1 - statuses[::-1].index(status)
        nxt = times[i + 1] if i + 1 < len(times) else lab.end_s
        return statuses[: i + 1], np.array(times[: i + 1]), max(nxt - times[i], 1.0)
    i = _join_point(statuses, status)
    statuses, times = statuses[: i + 1], times[: i + 1]
    for s in _route(statuses[-1], status) or ():
        times.append(times[-1] + _dwell(lab, rng, statuses[-1]))
        statuses.append(s)
    return statuses, np.array(times), _dwell(lab, rng, status)


def _join_point(statuses: list[str], target: str) -> int:
    """The last status of STATUSES from which TARGET is fewest steps away (never a paused one: what follows a pause
    must be its resume)."""
    far = len(TASK_STATUSES) + 1
    dist = []
    for s in statuses:
        route = _route(s, target) if s != "paused" else None
        dist.append(far if route is None else len(route))
    best = min(dist)
    return max(i for i, d in enumerate(dist) if d == best)


@lru_cache(maxsize=1024)
def _route(start: str, target: str) -> tuple[str, ...] | None:
    """The statuses after START on a shortest allowed route to TARGET (breadth first over the task machine, never
    through paused), None when there is none.

    Usage: ``_route("running", "done") == ("prepared", "done")``
    """
    if start == target:
        return ()
    back: dict[str, str] = {start: start}
    todo = deque([start])
    while todo:
        s = todo.popleft()
        for nxt in sorted(TRANSITIONS[s]):
            if nxt in back or (nxt == "paused" and nxt != target):
                continue
            back[nxt] = s
            if nxt == target:
                route = [nxt]
                while back[route[-1]] != start:
                    route.append(back[route[-1]])
                return tuple(reversed(route))
            todo.append(nxt)
    return None


def _dwell(lab: Lab, rng: np.random.Generator, status: str) -> float:
    """Seconds in STATUS: one the lab saw, else a draw around FALLBACK_DWELL_S."""
    seen = lab.dwell.get(status)
    if seen is not None and len(seen):
        return max(float(rng.choice(seen)), 1.0)
    return float(FALLBACK_DWELL_S * rng.lognormal(0.0, 0.8))


def _anchors(tasks: pd.DataFrame, taken_s: float) -> list[float]:
    """Per task, when its current status began if the tasks table says so (modificationtime before the snapshot)."""
    if "modificationtime" not in tasks:
        return [float("nan")] * len(tasks)
    mod = pd.to_datetime(tasks["modificationtime"], utc=True)
    anchor = ((mod - pd.Timestamp(0, tz=UTC)) / pd.Timedelta(seconds=1)).to_numpy(dtype=float, na_value=np.nan)
    return np.where(~np.isnan(anchor) & (anchor <= taken_s), anchor, np.nan).tolist()


def _place(rel: np.ndarray, last: float, earliest: float) -> np.ndarray:
    """Epoch seconds for a path whose statuses began REL seconds from its start, the last one at LAST: whole
    seconds, strictly increasing (steps of one tick a second apart), squeezed to start after EARLIEST when LAST
    leaves room."""
    span = float(rel[-1] - rel[0])
    room = last - earliest
    scale = room * 0.98 / span if span > room >= 3600.0 else 1.0
    since = np.floor((rel - rel[0]) * scale).astype(np.int64)
    since = np.maximum.accumulate(since - np.arange(len(since))) + np.arange(len(since))
    return np.floor(last).astype(np.int64) - since[-1] + since


def _log_frame(ids: np.ndarray, statuses: list[str], epoch_seconds: np.ndarray) -> pd.DataFrame:
    times = pd.to_datetime(epoch_seconds, unit="s", utc=True).astype("datetime64[us, UTC]")
    return pd.DataFrame(
        {
            "jeditaskid": pd.Series(ids, dtype="int64"),
            "status": pd.Series(statuses, dtype="object"),
            "modificationtime": pd.Series(times),
        }
    )
