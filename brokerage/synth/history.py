"""Plausible task status histories for demo grids, walking only allowed JEDI transitions."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np
import pandas as pd

from brokerage.sim.task_states import DESCRIPTIONS, PAUSABLE, PENDABLE, TASK_STATUSES, TransitionError

# Time spent in a status before the next change: (median minutes, lognormal sigma).
DWELL_MINUTES: dict[str, tuple[float, float]] = {
    "registered": (3, 0.8),
    "topreprocess": (10, 0.8),
    "preprocessing": (40, 0.7),
    "defined": (8, 0.8),
    "staging": (600, 0.8),
    "staged": (10, 0.8),
    "assigning": (40, 1.2),  # minutes to hours: re-brokered every 30 min when no nucleus fits
    "ready": (20, 1.0),
    "pending": (120, 1.0),
    "scouting": (240, 0.6),
    "scouted": (10, 0.7),
    "running": (1800, 0.8),  # hours to days
    "throttled": (120, 0.5),  # 120 x int(attemptNr / 5)^2 minutes, mostly the first step
    "paused": (600, 1.0),
    "prepared": (15, 0.6),
    "done": (1440, 1.0),
    "finished": (1440, 1.0),
    "failed": (1440, 1.0),
    "exhausted": (2880, 0.8),
    "toretry": (5, 0.6),
    "toincexec": (5, 0.6),
    "rerefine": (15, 0.6),
    "finishing": (30, 0.7),
    "passed": (10, 0.6),
    "aborting": (20, 0.7),
    "toabort": (10, 0.6),
    "aborted": (1440, 1.0),
    "tobroken": (10, 0.6),
    "broken": (1440, 1.0),
    "toreassign": (5, 0.6),
    "reassigning": (20, 0.7),
}

# Chances of the optional stretches of a task's life.
P_PREPROCESS = 0.03
P_STAGING = 0.05
P_ASSIGNING = 0.85  # production tasks that go through task brokerage (analysis tasks never do)
P_SCOUTS = 0.75
P_RETRY = 0.15
P_PENDING_DETOUR = 0.06
P_THROTTLE = 0.12
P_PAUSE = 0.01
P_REBROKER = 0.10
MAX_ELAPSED_FRACTION = 0.6  # the current status began at most this share of the window before taken_at

Rand = Callable[[], float]


def _pick(rnd: Rand, weighted: list[tuple[str, float]]) -> str:
    total = sum(w for _, w in weighted)
    x = rnd() * total
    for item, w in weighted:
        x -= w
        if x < 0:
            return item
    return weighted[-1][0]


def _main_line(rnd: Rand, is_user: bool, need: str | None) -> list[str]:
    """registered -> ... -> running -> prepared, with the optional stretches drawn (or forced by NEED)."""
    line = ["registered"]
    if need in ("topreprocess", "preprocessing") or rnd() < P_PREPROCESS:
        line += ["topreprocess", "preprocessing", "registered"]
    line.append("defined")
    if need in ("staging", "staged") or rnd() < P_STAGING:
        line += ["staging", "staged"]
    if need == "assigning" or (not is_user and rnd() < P_ASSIGNING):
        line.append("assigning")
    line.append("ready")
    if need in ("scouting", "scouted") or rnd() < P_SCOUTS:
        line += ["scouting", "scouted"]
    line += ["running", "prepared"]
    return line


def _upto(line: list[str], status: str) -> list[str]:
    """LINE cut after the last occurrence of STATUS."""
    return line[: len(line) - line[::-1].index(status)]


def _cut(rnd: Rand, line: list[str], weighted: list[tuple[str, float]]) -> list[str]:
    return _upto(line, _pick(rnd, [(s, w) for s, w in weighted if s in line]))


def _finish_processing(rnd: Rand, line: list[str], final: str) -> list[str]:
    """Run to prepared, maybe go round the retry loop a few times, then end in FINAL."""
    path = _upto(line, "prepared")
    while rnd() < P_RETRY:
        path += [_pick(rnd, [("finished", 2), ("failed", 1)]), "toretry", "ready", "running", "prepared"]
    return [*path, final]


def _exhausted(rnd: Rand, is_user: bool) -> list[str]:
    how = _pick(rnd, [("prepared", 0.55), ("scouting", 0.25), ("pending", 0.2)])
    line = _main_line(rnd, is_user, "scouting" if how == "scouting" else None)
    if how == "pending":
        return [*_cut(rnd, line, [("defined", 1), ("ready", 2), ("running", 1)]), "pending", "exhausted"]
    return [*_upto(line, how), "exhausted"]


def _route(target: str, rnd: Rand, is_user: bool) -> list[str]:
    """A status path from registered to TARGET that follows the main line of a task's life."""
    line = _main_line(rnd, is_user, target)
    if target in line:
        return _upto(line, target) if target != "registered" else line[:1]
    if target in ("done", "finished", "failed"):
        return _finish_processing(rnd, line, target)
    if target == "exhausted":
        return _exhausted(rnd, is_user)
    if target in ("finishing", "passed"):
        how = _pick(rnd, [("running", 0.6), ("exhausted", 0.25), ("pending", 0.15)])
        if how == "exhausted":
            path = _exhausted(rnd, is_user)
        elif how == "pending":
            path = [*_cut(rnd, line, [("defined", 1), ("ready", 2), ("running", 2)]), "pending"]
        else:
            path = _upto(line, "running")
        return [*path, "finishing"] + (["passed"] if target == "passed" else [])
    if target in ("aborting", "toabort", "aborted"):
        where = [(s, 1.0) for s in ("registered", "defined", "assigning", "ready", "scouting", "running")]
        path = [*_cut(rnd, line, where), "aborting"]
        if target == "toabort" or (target == "aborted" and rnd() < 0.5):
            path.append("toabort")
        return path + (["aborted"] if target == "aborted" else [])
    if target in ("tobroken", "broken"):
        where = [("registered", 0.35), ("defined", 0.25), ("ready", 0.1), ("scouting", 0.15), ("running", 0.1)]
        path = [*_cut(rnd, line, where), "tobroken"]
        return path + (["broken"] if target == "broken" else [])
    if target == "pending":
        where = [("registered", 0.05), ("defined", 0.2), ("ready", 0.35), ("scouting", 0.15), ("running", 0.25)]
        return [*_cut(rnd, line, where), "pending"]
    if target == "throttled":
        return [*_upto(line, "running"), "throttled"]
    if target == "paused":
        return [*_cut(rnd, line, [(s, 1.0) for s in line if s in PAUSABLE]), "paused"]
    if target in ("toretry", "toincexec", "rerefine"):
        finals = [("finished", 2), ("failed", 1)] + ([("done", 3)] if target != "toretry" else [])
        path = _finish_processing(rnd, line, _pick(rnd, finals))
        if target == "toretry":
            return [*path, "toretry"]
        return [*path, "toincexec"] + (["rerefine"] if target == "rerefine" else [])
    if target in ("toreassign", "reassigning"):
        where = [("defined", 1), ("assigning", 1), ("ready", 2), ("scouting", 1), ("running", 2)]
        path = [*_cut(rnd, line, where), "toreassign"]
        return path + (["reassigning"] if target == "reassigning" else [])
    raise AssertionError(f"no route to {target!r}")  # every TASK_STATUSES entry is handled above


def _with_detours(path: list[str], rnd: Rand) -> list[str]:
    """Insert holds that return where they left: pending, throttled, pause/resume and re-brokerage."""
    out: list[str] = []
    for i, status in enumerate(path):
        out.append(status)
        nxt = path[i + 1] if i + 1 < len(path) else None
        if status == "running":
            while nxt != "throttled" and rnd() < P_THROTTLE:
                out += ["throttled", "running"]
        if status in PENDABLE and nxt != "pending" and rnd() < P_PENDING_DETOUR:
            out += ["pending", status]
        if status == "assigning" and rnd() < P_REBROKER:
            out.append("assigning")
        if status in PAUSABLE and nxt != "paused" and rnd() < P_PAUSE:
            out += ["paused", status]
    return out


def status_path(target: str, rng: random.Random, is_user: bool = False) -> list[str]:
    """One random allowed status sequence from registered to TARGET (detours included).

    Usage: ``status_path("done", random.Random(1))[-1] == "done"``
    """
    if target not in DESCRIPTIONS:
        raise TransitionError(f"unknown task status {target!r}; known statuses: {', '.join(TASK_STATUSES)}")
    return _with_detours(_route(target, rng.random, is_user), rng.random)


def simulate_task_history(tasks: pd.DataFrame, taken_at: datetime, seed: int, days: int = 21) -> pd.DataFrame:
    """task_status_log rows (jeditaskid, status, modificationtime) for every task, deterministic from SEED.

    Each history starts at registered, takes only allowed transitions with realistic dwell times and ends in the
    task's current ``status`` at or before TAKEN_AT (at the task's ``modificationtime`` when that lies in the past),
    starting within DAYS before TAKEN_AT unless the anchor itself is older.
    Usage: ``log = simulate_task_history(snap.tasks, snap.taken_at, seed=0)``
    """
    taken = pd.Timestamp(taken_at)
    taken = taken.tz_localize(UTC) if taken.tzinfo is None else taken.tz_convert(UTC)
    ids = tasks["jeditaskid"].to_numpy(dtype=np.int64)
    statuses = tasks["status"].tolist()
    unknown = sorted({str(s) for s in statuses if s not in DESCRIPTIONS})
    if unknown:
        raise TransitionError(
            f"tasks.status holds unknown task statuses {', '.join(repr(s) for s in unknown)}; "
            f"known statuses: {', '.join(TASK_STATUSES)}"
        )
    labels = tasks["prodsourcelabel"].tolist() if "prodsourcelabel" in tasks else ["managed"] * len(tasks)
    rng = random.Random(seed)
    paths = [status_path(s, rng, is_user=(lab == "user")) for s, lab in zip(statuses, labels, strict=True)]
    lengths = np.fromiter((len(p) for p in paths), dtype=np.int64, count=len(paths))
    flat = [s for p in paths for s in p]
    n_tasks, n_rows = len(paths), len(flat)
    if n_rows == 0:
        return _log_frame(np.empty(0, np.int64), [], np.empty(0, np.int64))

    nprng = np.random.default_rng(seed)
    code = {s: i for i, s in enumerate(TASK_STATUSES)}
    mu = np.log(np.array([DWELL_MINUTES[s][0] * 60.0 for s in TASK_STATUSES]))
    sigma = np.array([DWELL_MINUTES[s][1] for s in TASK_STATUSES])
    codes = np.fromiter((code[s] for s in flat), dtype=np.int64, count=n_rows)
    dwell = nprng.lognormal(mu[codes], sigma[codes])  # seconds

    ends = np.cumsum(lengths)
    starts = ends - lengths
    last = ends - 1
    window = float(days) * 86400.0
    taken_s = taken.timestamp()
    # when the current status began: the task's modificationtime if it is in the past, else a draw
    elapsed = np.minimum(nprng.random(n_tasks) * dwell[last], MAX_ELAPSED_FRACTION * window)
    last_time = taken_s - elapsed
    if "modificationtime" in tasks:
        mod = pd.to_datetime(tasks["modificationtime"], utc=True)
        anchor = ((mod - pd.Timestamp(0, tz=UTC)) / pd.Timedelta(seconds=1)).to_numpy(dtype=float, na_value=np.nan)
        use = ~np.isnan(anchor) & (anchor <= taken_s)
        last_time = np.where(use, anchor, last_time)

    dwell[last] = 0.0
    total = np.add.reduceat(dwell, starts)
    room = last_time - (taken_s - window)
    room = np.where(room < 3600.0, window, room)  # anchors older than the window keep a full window of history
    fit = nprng.uniform(0.5, 0.98, n_tasks) * room
    scale = np.where(total > fit, fit / np.maximum(total, 1.0), 1.0)
    seconds = np.maximum(np.rint(dwell * np.repeat(scale, lengths)), 1.0).astype(np.int64)
    seconds[last] = 0
    running_total = np.cumsum(seconds)
    since_first = running_total - np.repeat(running_total[starts] - seconds[starts], lengths) - seconds
    first = np.floor(last_time).astype(np.int64) - since_first[last]  # the last entry sits at last_time
    times = np.repeat(first, lengths) + since_first
    return _log_frame(np.repeat(ids, lengths), flat, times)


def _log_frame(ids: np.ndarray, statuses: list[str], epoch_seconds: np.ndarray) -> pd.DataFrame:
    times = pd.to_datetime(epoch_seconds, unit="s", utc=True).astype("datetime64[us, UTC]")
    return pd.DataFrame(
        {
            "jeditaskid": pd.Series(ids, dtype="int64"),
            "status": pd.Series(statuses, dtype="object"),
            "modificationtime": pd.Series(times),
        }
    )
