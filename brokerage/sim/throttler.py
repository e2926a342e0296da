"""JEDI's job throttler per work queue x resource type: how many jobs a generation cycle may add (§8)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from brokerage.model.gdpconfig import Config

N_BUNCH_MIN, N_BUNCH_MAX = 500, 600  # nJobsInBunchMin/Max, constants in JobThrottlerBase
QUEUE_BUNCHES = 4  # nBunch: NQUEUELIMIT defaults to four bunches
LACK_FRACTION = 0.9  # PASS with lackOfJobs below 90 % of the queue limit
BUNCH_TO_LIMIT_QUEUES = ("Heavy Ion", "Reprocessing default")  # bunch grows towards the queue limit (§8.6)
UNTHROTTLED_JOBS = 10**9  # a work queue the throttler leaves alone: no limit on the jobs of a cycle


@dataclass(frozen=True)
class ThrottleVerdict:
    """The throttler's answer for one work queue x resource type."""

    throttled: bool
    max_jobs: int
    rule: str  # "not throttled", "pass", "pass lack of jobs", "pass high priority", or the SKIP: a, c, e, g, h
    reason: str
    min_priority: float = 0.0  # the high-priority override's minPriority: only tasks at or above it get jobs


HP_NOT_RUN_LIMIT = 500  # highPrioQueued also when the top priorities tie and fewer than 500 such jobs wait


def high_prio_queued(waiting: float, in_panda: float, n_not_run_top: int, analysis: bool) -> bool:
    """highPrioQueued (§8.5): a production work queue whose best waiting task (priority WAITING) outranks every job
    in PanDA (IN_PANDA, highest among its jobs), or ties it with fewer than 500 of those jobs not running.

    Usage: ``high_prio_queued(900, 500, 0, False)``
    """
    return not analysis and (waiting > in_panda or (waiting == in_panda and n_not_run_top < HP_NOT_RUN_LIMIT))


def override(verdict: ThrottleVerdict, waiting: float) -> ThrottleVerdict:
    """A SKIP other than g (NRUNNINGCAP) turned into a PASS for tasks at priority WAITING and above (§8.8).

    Usage: ``override(throttle(cfg, wq, rt, 0, 5000, 0), 900.0).max_jobs``
    """
    if not verdict.throttled or verdict.rule == "g":
        return verdict
    return ThrottleVerdict(False, verdict.max_jobs, "pass high priority", f"{verdict.reason}; but a task at priority "
                           f"{waiting:g} outranks the jobs queued: minPriority {waiting:g}", waiting)  # fmt: skip


def _limit(config: Config, tag: str, share: str, rtype: str) -> int:
    """First non-zero of TAG_<share>_<rtype>, TAG_<share> (levels RT and GS of §8.3), else 0."""
    for key in (f"{tag}_{share}_{rtype}", f"{tag}_{share}"):
        value = int(config.get(key) or 0)
        if value:
            return value
    return 0


Limits = tuple[float, int, int, int]  # THROTTLE_THRESHOLD, NQUEUELIMIT, NRUNNINGCAP, NQUEUECAP (0: unset)


def limits_of(config: Config, share: str, rtype: str) -> Limits:
    """The throttler's keys for work queue SHARE x resource type RTYPE (read once per run: a Config never changes).

    Usage: ``limits_of(Config(), "MC Simulation", "SCORE")``
    """
    return (
        float(config["THROTTLE_THRESHOLD"]),
        _limit(config, "NQUEUELIMIT", share, rtype),
        _limit(config, "NRUNNINGCAP", share, rtype),
        _limit(config, "NQUEUECAP", share, rtype),
    )


def throttle(
    config: Config,
    share: str,
    rtype: str,
    n_running: int,
    n_not_run: int,
    n_define: int,
    limits: Limits | None = None,
    throttled: bool = True,
) -> ThrottleVerdict:
    """The job throttler for work queue SHARE x resource type RTYPE from its running, notRun and defined counts.

    A work queue with throttled False (its share's throttled='N') passes with no limit. The walltime test
    (totWalltime > 50e6) is taken as met; a SKIP keeps the max jobs a PASS would give (the high-priority override,
    ``override``, passes them), and the caller reads max_jobs only when not throttled.
    Usage: ``throttle(Config(), "MC Simulation", "SCORE", 1000, 2500, 0).throttled``
    """
    if not throttled:
        return ThrottleVerdict(
            False, UNTHROTTLED_JOBS, "not throttled", "work queue not throttled (throttled='N'): no limit"
        )
    threshold, queue_limit_key, running_cap, queue_cap = limits or limits_of(config, share, rtype)
    bunch = int(np.clip(int(n_running * threshold - n_not_run), N_BUNCH_MIN, N_BUNCH_MAX))
    queue_limit = queue_limit_key or QUEUE_BUNCHES * bunch
    queued = n_not_run + n_define
    if share in BUNCH_TO_LIMIT_QUEUES and queue_limit > queued:
        bunch = min(max(bunch, queue_limit - queued), N_BUNCH_MAX)
    max_jobs = queue_cap // 5 if queue_cap else bunch // 2
    if n_running == 0 and queued > queue_limit:
        return ThrottleVerdict(
            True, max_jobs, "a", f"no running and enough queued: {queued} > queue limit {queue_limit}"
        )
    if n_running and n_not_run + n_define > threshold * n_running and queued > queue_limit:
        return ThrottleVerdict(True, max_jobs, "c", f"queued/running {queued / n_running:.2f} > THROTTLE_THRESHOLD {threshold:g} "
                                     f"and {queued} queued > queue limit {queue_limit}")  # fmt: skip
    if n_define > queue_limit:
        return ThrottleVerdict(True, max_jobs, "e", f"too many defined: {n_define} > queue limit {queue_limit}")
    if running_cap and n_running > running_cap:
        return ThrottleVerdict(True, max_jobs, "g", f"{n_running} running > NRUNNINGCAP {running_cap}")
    if queue_cap and queued > queue_cap:
        return ThrottleVerdict(True, max_jobs, "h", f"{queued} queued > NQUEUECAP {queue_cap}")
    if queued < LACK_FRACTION * queue_limit or queued < n_running:
        max_jobs = max(max_jobs, queue_limit // 20)
        return ThrottleVerdict(False, max_jobs, "pass lack of jobs", f"{queued} queued < 0.9 x queue limit {queue_limit} "
                                                               f"or < {n_running} running: up to {max_jobs} jobs")  # fmt: skip
    return ThrottleVerdict(False, max_jobs, "pass", f"up to {max_jobs} jobs ({queued} queued, {n_running} running)")
