"""The simulator's own task rules (WatchDog and PostProcessor, minimal): pending, throttling, final status."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import rule

WAIT_FOR_PENDING_S = 3600.0  # waitForPending: a pending task is retried after 60 min ...
URGENT_PENDING_S = ((950, 600.0), (900, 1800.0))  # ... a production one at priority >= 950 after 10, >= 900 after 30
ANALYSIS_PENDING_S = 1200.0  # seed 000 (analysis brokerage): "the task is pending for 20 min"
WAIT_FOR_EXHAUSTED_S = 48 * 3600.0  # waitForExhausted: exhausted -> finishing after 48 h (switch exhausted_as_jedi)
EXHAUSTED_TIMEOUT_S = 10 * 86400.0  # seed 003: "wait for manual intervention or timeout of 10 days"
WAIT_FOR_THROTTLED_MIN = 120.0  # waitForThrottled: released after 120 x n^2 minutes
THROTTLE_EVERY = 5  # throttled when int(avg failedAttempt / 5) exceeds the throttle count
ACTIVE_STATUSES = ("ready", "running", "scouting")


def final_status(n_files: np.ndarray, finished: np.ndarray) -> np.ndarray:
    """getFinalTaskStatus (§6.2) per task: done when every input finished, failed when none did, else finished.

    Usage: ``final_status(np.array([10, 10, 10]), np.array([10, 0, 4]))  # done, failed, finished``
    """
    return np.where((finished >= n_files) & (n_files > 0), "done", np.where(finished == 0, "failed", "finished"))


Why = Callable[[], pd.Series]  # the sentences of a rule's moves, per task; built only when the rule moves a task


class _Moves:
    """The task table being changed at NOW and the changes made so far (jediTaskID, from, to, rule, cause)."""

    def __init__(self, tasks: pd.DataFrame, now: float) -> None:
        self.t, self.now = tasks, now
        self.rows: list[tuple[int, str, str, str, str]] = []

    def move(self, mask: pd.Series, new: str, rule: str, why: Why) -> None:
        t = self.t
        ids = t.index[mask.to_numpy()]
        if len(ids) == 0:
            return
        old = t.loc[ids, "status"].to_numpy(object)
        self.rows.extend(zip(ids.tolist(), old.tolist(), [new] * len(ids), [rule] * len(ids), why()[ids].tolist(),
                             strict=True))  # fmt: skip
        t.loc[ids, "oldStatus"] = np.where(new in ("pending", "throttled"), old, t.loc[ids, "oldStatus"])
        t.loc[ids, "status"] = new
        t.loc[ids, "modificationTime"] = self.now
        t.loc[ids, "stateChangeTime"] = self.now


def step(
    tasks: pd.DataFrame, files: pd.DataFrame, active_jobs: pd.Series, now: float, config: Config
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Task rules due at NOW; returns the new tasks and the changes (jediTaskID, from, to, rule, cause).

    TASKS has the simulator's task columns (status, oldStatus, modificationTime, frozenTime, throttledTime,
    numThrottled (-1: never throttled, analysis), nFiles, nFilesUsed, nFilesFinished, nFilesFailed, prodSourceLabel,
    currentPriority); FILES the
    picked input units (jediTaskID, status ready/running/finished/failed, failedAttempt); ACTIVE_JOBS the live jobs
    per task. Usage: ``tasks, changes = step(tasks, files, active, 3600.0, Config())``
    """
    m = _Moves(tasks.copy(), now)
    _pending(m, config)
    _exhausted(m, config)
    if rule(config, "throttle_as_jedi"):
        _throttling(m, files)
    else:
        _throttling_seed(m, files)
    _final(m, active_jobs)
    return m.t, pd.DataFrame(m.rows, columns=["jediTaskID", "from", "to", "rule", "cause"])


def _pending(m: _Moves, config: Config) -> None:
    """reactivatePendingTasks: exhausted after PENDING_TIMEOUT_<label> hours since frozenTime, else retried after
    waitForPending (sooner for urgent production tasks)."""
    t, now = m.t, m.now
    pending = t["status"] == "pending"
    if not pending.any():
        return
    frozen_h = (now - t["frozenTime"]) / 3600.0
    labels = t["prodSourceLabel"].fillna("managed").astype(str)
    limit_h = labels.map({x: float(config.get(f"PENDING_TIMEOUT_{x}")) for x in set(labels)})
    expired = pending & (frozen_h > limit_h)
    m.move(expired, "exhausted", "pending timeout",
           lambda: "timeout while in pending since " + frozen_h.round(2).astype(str) + " h ago > PENDING_TIMEOUT_"
           + labels + " " + limit_h.map("{:g}".format) + " h")  # fmt: skip
    wait = pd.Series(WAIT_FOR_PENDING_S, index=t.index)
    prod = labels != "user"
    if rule(config, "pending_as_jedi"):
        for priority, seconds in reversed(URGENT_PENDING_S):
            wait = wait.where(~(prod & (t["currentPriority"] >= priority)), seconds)
        how = "waitForPending; production at priority >= 950: 10 min, >= 900: 30 min"
    else:
        wait = wait.where(prod, ANALYSIS_PENDING_S)
        how = "seed: production 1 hour, analysis 20 min"
    retry = (t["status"] == "pending") & (now - t["modificationTime"] >= wait)
    back = t["oldStatus"].where(t["oldStatus"].isin(ACTIVE_STATUSES), "ready")
    for target in ("ready", "running", "scouting"):
        m.move(
            retry & (back == target),
            target,
            "pending retried",
            lambda: "pending for >= " + (wait / 60).map("{:.0f}".format) + f" min ({how}): retried",
        )


def _exhausted(m: _Moves, config: Config) -> None:
    """An exhausted task left alone is finished: after the seed's 10 days, or waitForExhausted (48 h,
    kickExhaustedTasks) with switch exhausted_as_jedi."""
    t = m.t
    code = rule(config, "exhausted_as_jedi")
    wait = WAIT_FOR_EXHAUSTED_S if code else EXHAUSTED_TIMEOUT_S
    kick = (t["status"] == "exhausted") & (m.now - t["modificationTime"] >= wait)
    if not kick.any():
        return
    name = "waitForExhausted" if code else "seed: timeout of 10 days"
    m.move(
        kick,
        "finishing",
        "exhausted timeout",
        lambda: pd.Series(f"exhausted for >= {wait / 3600:.0f} h ({name}): finished", index=t.index),
    )


def _throttling(m: _Moves, files: pd.DataFrame) -> None:
    """Release before throttling, as AtlasProdWatchDog does; throttle for many attempts: int(avg failedAttempt over
    ready/running master files / 5) > numThrottled."""
    t, now = m.t, m.now
    release = (t["status"] == "throttled") & (t["throttledTime"] < now)
    m.move(release, "running", "throttle released", lambda: pd.Series("throttledTime passed: released", index=t.index))
    if not ((t["status"] == "running") & (t["numThrottled"] >= 0)).any():
        return  # no task the rule could throttle
    live = files[files["status"].isin(["ready", "running"])]
    failed = live.groupby("jediTaskID")["failedAttempt"].sum().reindex(t.index, fill_value=0)
    unpicked = (t["nFiles"] - t["nFilesUsed"]).clip(lower=0)
    n_live = live.groupby("jediTaskID").size().reindex(t.index, fill_value=0) + unpicked
    avg = failed / n_live.where(n_live > 0, 1)
    due = (t["status"] == "running") & (t["numThrottled"] >= 0) & ((avg // THROTTLE_EVERY) > t["numThrottled"])
    n = t["numThrottled"] + 1
    t.loc[due, "throttledTime"] = now + WAIT_FOR_THROTTLED_MIN * 60.0 * n[due] ** 2
    t.loc[due, "numThrottled"] = n[due]
    m.move(due, "throttled", "many attempts",
           lambda: "reason=many_attempts " + avg.round(2).astype(str) + " > " + n.astype(int).astype(str)
           + "x5 until +" + (WAIT_FOR_THROTTLED_MIN * n**2).astype(int).astype(str) + " min")  # fmt: skip


def _throttling_seed(m: _Moves, files: pd.DataFrame) -> None:
    """Seed 003's throttled: "the task is throttled to generate jobs since the largest attemptNr in the task is a
    multiple of 5. The throttled period is 120 x int(max(attemptNr)/5)**2 minites" (production tasks; closed jobs
    are attempts too). Once per multiple of 5: numThrottled keeps the last int(max(attemptNr)/5) acted on."""
    t, now = m.t, m.now
    release = (t["status"] == "throttled") & (t["throttledTime"] < now)
    m.move(release, "running", "throttle released", lambda: pd.Series("throttledTime passed: released", index=t.index))
    if not ((t["status"] == "running") & (t["numThrottled"] >= 0)).any():
        return
    live = files[files["status"].isin(["ready", "running"])]
    top = live.groupby("jediTaskID")["attemptNr"].max().reindex(t.index, fill_value=0)
    n = top // THROTTLE_EVERY
    due = (t["status"] == "running") & (t["numThrottled"] >= 0) & (n > t["numThrottled"])
    t.loc[due, "throttledTime"] = now + WAIT_FOR_THROTTLED_MIN * 60.0 * n[due] ** 2
    t.loc[due, "numThrottled"] = n[due]
    m.move(
        due,
        "throttled",
        "many attempts",
        lambda: (
            "largest attemptNr "
            + top.astype(int).astype(str)
            + " is a multiple of 5: throttled for 120 x "
            + n.astype(int).astype(str)
            + "^2 = "
            + (WAIT_FOR_THROTTLED_MIN * n**2).astype(int).astype(str)
            + " min"
        ),
    )


def _final(m: _Moves, active_jobs: pd.Series) -> None:
    """Once every input unit is finished or failed and no job is left (§6.2): prepared, then the final status."""
    t = m.t
    active = active_jobs.reindex(t.index, fill_value=0)
    over = t["status"].isin(ACTIVE_STATUSES) & (t["nFiles"] > 0) & (active == 0) & (
        t["nFilesFinished"] + t["nFilesFailed"] >= t["nFiles"])  # fmt: skip
    if not over.any():
        return
    final = pd.Series(final_status(t["nFiles"].to_numpy(), t["nFilesFinished"].to_numpy()), index=t.index)
    counts = t["nFilesFinished"].astype(str) + " of " + t["nFiles"].astype(str) + " inputs finished"
    m.move(over, "prepared", "prepared", lambda: "every input processed: " + counts)
    m.move(over & (final == "done"), "done", "final status", lambda: counts)
    m.move(
        over & (final == "failed"), "failed", "final status", lambda: "no input was processed successfully: " + counts
    )
    # seed 003, exhausted: "For production tasks, all reattempts were done but some inputs were still unsuccessful,
    # and the task is configured to go to this state instead of finished" (JEDI's useExhausted pre-check, §6.2)
    prod = t["prodSourceLabel"].fillna("managed") != "user"
    m.move(over & (final == "finished") & prod, "exhausted", "final status",
           lambda: "exhausted instead of finished, some inputs unsuccessful: " + counts)  # fmt: skip
    m.move(over & (final == "finished") & ~prod, "finished", "final status", lambda: counts)
