"""WatchDog's progress-based actions (jedi-lifecycle.md §6.3): the near-completion boost and the failure-rate pause."""

from __future__ import annotations

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.sim import watchdog
from brokerage.sim.jobs import S
from tests.core.sim.conftest import add_jobs, small_sim, status_of


def _running_task(sim, n_files: int, finished: int, failed: int = 0) -> None:  # type: ignore[no-untyped-def]
    t = sim.tasks
    t.loc[1, ["status", "nFiles", "nFilesUsed", "nFilesFinished", "nFilesFailed"]] = [
        "running", n_files, finished + failed, finished, failed]  # fmt: skip


def _count_jobs(sim, made: int, finished: int, failed: int) -> None:  # type: ignore[no-untyped-def]
    """The per-task job counters the engine keeps as jobs are made and end (task 1 is the first row)."""
    sim.jobs_made[0], sim.jobs_finished[0], sim.jobs_failed[0] = made, finished, failed


def test_a_task_near_completion_goes_to_priority_900_and_express() -> None:
    """Boost: 96 of 100 inputs done (>= 95 %) with int(4 x 100 / 100) = 4 <= 100 jobs left: the task and its live
    jobs get priority 900 and the Express share (its work queue was its own share); a task at 90 % keeps both."""
    sim = small_sim()
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    _running_task(sim, 100, 96)
    add_jobs(sim, n=96, status="finished", jediTaskID=1)
    live = add_jobs(sim, n=4, status="activated", jediTaskID=1)
    _count_jobs(sim, 100, 96, 0)
    watchdog.progress_actions(sim, sim.now)
    assert sim.tasks.at[1, "currentPriority"] == 900 and sim.tasks.at[1, "gshare"] == "Express"
    assert (sim.jobs["currentPriority"][live] == 900).all()
    assert {sim.g.shares[s] for s in sim.jobs["gshare"][live]} == {"Express"}
    assert sim.tasks.at[1, "workQueue"] == "Express"

    other = small_sim()
    _running_task(other, 100, 90)
    watchdog.progress_actions(other, other.now)
    assert other.tasks.at[1, "currentPriority"] == 500 and other.tasks.at[1, "gshare"] == "MC Simulation"


def test_a_big_task_failing_at_the_pause_rate_is_paused_and_its_jobs_throttled() -> None:
    """Pause: 1,200 jobs (>= 1,000), int(4,900 x 1,200 / 5,000) = 1,176 jobs to come (>= 100) and 700 of 1,200
    ended jobs failed (0.58 >= MAX_JOB_FAILURE_RATE_TO_PAUSE 0.5): paused, and its activated jobs throttled;
    with the key unset nothing happens."""
    for limit, expected in ((0.5, "paused"), (None, "running")):
        cfg = Config().with_overrides({"MAX_JOB_FAILURE_RATE_TO_PAUSE": limit} if limit else {})
        sim = small_sim(config=cfg)
        sim.jobs.n = 0
        sim.live = sim.live[:0]
        _running_task(sim, 5000, 100)
        add_jobs(sim, n=700, status="failed", jediTaskID=1)
        add_jobs(sim, n=490, status="finished", jediTaskID=1)
        queued = add_jobs(sim, n=10, status="activated", jediTaskID=1)
        _count_jobs(sim, 1200, 490, 700)
        watchdog.progress_actions(sim, sim.now)
        watchdog.throttle_paused(sim, sim.now)
        assert sim.tasks.at[1, "status"] == expected
        want = "throttled" if expected == "paused" else "activated"
        assert status_of(sim, queued) == [want] * 10
    assert np.isin(sim.jobs["jobStatus"], [S["failed"], S["finished"], S["activated"]]).all()


def test_analysis_tasks_get_no_boost() -> None:
    """The boost is AtlasProdWatchDog's: a user task at 99 % keeps its priority and share."""
    sim = small_sim()
    sim.tasks.at[1, "prodSourceLabel"] = "user"
    _running_task(sim, 100, 99)
    watchdog.progress_actions(sim, sim.now)
    assert sim.tasks.at[1, "currentPriority"] == 500
