"""Seed 003's retry rules, hand-computed: the memory increase, throttling on attemptNr, pending and exhausted clocks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.model.gdpconfig import Config
from brokerage.sim import retrymodule, task_agent
from brokerage.sim.propagate import end_jobs
from brokerage.sim.retry import increase_ram_seed
from brokerage.sim.state import Files
from tests.builders import counts, dataset, queue, task
from tests.core.sim.conftest import add_jobs, small_sim

H, D = 3600.0, 86400.0
CODE = Config().with_overrides({"RULES": "panda-1.0.4"})
NO_FILES = pd.DataFrame({"jediTaskID": [], "status": [], "failedAttempt": [], "attemptNr": []})


def test_memory_goes_to_the_next_step_above_max_of_maxpss_and_ramcount() -> None:
    """Seed 003: "The new value will be set to the next value in the list [1000,2000,3000,4000,6000,8000] above
    max(maxPSS, current ramCount)": maxPSS 2300 at ramCount 2000 -> 3000; maxPSS 1200 at 2000 -> 3000; maxPSS 4500
    at 2000 -> 6000; at 8000 nothing."""
    assert increase_ram_seed(2300, 2000, 2000, 1, 10).file_ram == 3000
    assert increase_ram_seed(1200, 2000, 1500, 1, 10).file_ram == 3000
    assert increase_ram_seed(4500, 2000, 2000, 1, 10).file_ram == 6000
    assert increase_ram_seed(9000, 8000, 2000, 1, 10).file_ram is None


def test_thirty_percent_of_jobs_failed_for_memory_raise_the_whole_task() -> None:
    """Seed 003: "When 30% of the jobs in a task have failed because of insufficient memory, the setting will be
    increased for the whole task": 2 of 10 jobs -> the inputs only; 3 of 10 -> the task's ramCount 2000 -> 3000."""
    assert increase_ram_seed(2300, 2000, 2000, 2, 10).task_ram is None
    v = increase_ram_seed(2300, 2000, 2000, 3, 10)
    assert v.task_ram == 3000 and v.file_ram is None


def _one_task_sim():  # type: ignore[no-untyped-def]
    sim = small_sim(
        queues=[queue("A", "S1", maxrss=2000)],
        tasks=[task(1, status="running", chunk_nevents=100, chunk_njobs=10, cputime=1.0, ramcount=2000,
                    ramunit="MB")],
        datasets=[dataset(1, 1, nfiles=10, nevents=100, neventsused=0)], job_counts=counts("A", running=5),
    )  # fmt: skip
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    return sim


def test_a_job_killed_for_memory_raises_its_inputs_from_its_maxpss() -> None:
    """In a run's retry module (seed profile): a job of a 2000 MB task that peaked at 3100 MB (pilot 1235) gives
    its input ramCount 4000 for the next attempt; with switch memory_retry_as_jedi the job's own ramCount 2000 is
    stepped (-> 3000) and maxPSS is not read."""
    for config, want in ((Config(), 4000.0), (CODE, 3000.0)):
        sim = _one_task_sim()
        sim.config = config
        sim.jobs_made[:] = 10
        fid = sim.files.add(1, 1, 3, 10**6)
        row = add_jobs(sim, status="holding", jediTaskID=1, fileID=fid[0], maxPSS=3100.0, ramCount=2000.0,
                       errorCode=1235, errorSource=1)  # fmt: skip
        retrymodule.on_failed(sim, row)
        assert sim.files.ramCount[fid[0]] == want, config


def test_throttled_when_the_largest_attemptnr_is_a_multiple_of_5() -> None:
    """Seed 003: "the task is throttled to generate jobs since the largest attemptNr in the task is a multiple of 5.
    The throttled period is 120 x int(max(attemptNr)/5)**2 minites": max attemptNr 4 -> no; 5 -> 120 min; 10 (once
    throttled) -> 480 min. The code's rule (average failedAttempt) would not throttle these closed-job attempts."""
    t = pd.DataFrame([{"status": "running", "oldStatus": "running", "modificationTime": 0.0, "stateChangeTime": 0.0,
                       "frozenTime": np.nan, "throttledTime": np.nan, "numThrottled": 0, "nFiles": 4, "nFilesUsed": 4,
                       "nFilesFinished": 0, "nFilesFailed": 0, "prodSourceLabel": "managed",
                       "currentPriority": 500.0}], index=pd.Index([7], name="jediTaskID"))  # fmt: skip
    files = pd.DataFrame({"jediTaskID": [7] * 3, "status": ["ready"] * 3, "failedAttempt": 0, "attemptNr": [1, 4, 2]})
    assert task_agent.step(t, files, pd.Series(dtype=int), 0.0, Config())[0].at[7, "status"] == "running"
    files["attemptNr"] = [1, 5, 2]
    out, ch = task_agent.step(t, files, pd.Series(dtype=int), 600.0, Config())
    assert out.at[7, "status"] == "throttled" and out.at[7, "throttledTime"] == 600.0 + 120 * 60
    assert "largest attemptNr 5" in ch["cause"].iloc[0]
    assert task_agent.step(t, files, pd.Series(dtype=int), 600.0, CODE)[0].at[7, "status"] == "running"
    back = task_agent.step(out, files, pd.Series(dtype=int), 600.0 + 121 * 60, Config())[0]
    assert back.at[7, "status"] == "running"  # released; 5 stays int(5/5) = 1 = numThrottled: not again
    files["attemptNr"] = [10, 5, 2]
    again = task_agent.step(back, files, pd.Series(dtype=int), 10 * H, Config())[0]
    assert again.at[7, "status"] == "throttled" and again.at[7, "throttledTime"] == 10 * H + 480 * 60


def test_closed_jobs_are_reattempts_that_count_towards_throttling() -> None:
    """Closed (reassigned) jobs raise the input's attemptNr (seed 003, "Job rebrokerage ... That is essentially
    reattempt"): an input closed 5 times (maxAttempt raised to 10 by a retry) throttles its task at the next
    WatchDog pass."""
    sim = _one_task_sim()
    sim.tasks.loc[1, "nFilesUsed"] = 1
    fid = sim.files.add(1, 1, 10, 10**6)
    for _ in range(5):
        end_jobs(sim, add_jobs(sim, jediTaskID=1, fileID=fid[0]), "closed")
    assert sim.files.attemptNr[fid[0]] == 5 and sim.files.status[fid[0]] == Files.READY
    from brokerage.sim import watchdog

    watchdog.tick(sim, 0.0)
    assert sim.tasks.at[1, "status"] == "throttled"


def _pending(label: str, prio: float) -> pd.DataFrame:
    return pd.DataFrame([{"status": "pending", "oldStatus": "running", "modificationTime": 0.0,
                          "stateChangeTime": 0.0, "frozenTime": 0.0, "throttledTime": np.nan, "numThrottled": -1,
                          "nFiles": 4, "nFilesUsed": 0, "nFilesFinished": 0, "nFilesFailed": 0,
                          "prodSourceLabel": label, "currentPriority": prio}],
                        index=pd.Index([7], name="jediTaskID"))  # fmt: skip


def test_analysis_pending_is_retried_after_20_minutes_production_after_an_hour() -> None:
    """Seed 000: analysis "If all queues are still skipped, the task is pending for 20 min"; production "If all
    queues are skipped, the task is pending for 1 hour" (even at priority 950, which the code retries after 10)."""

    def status(label: str, prio: float, minutes: float, config: Config) -> str:
        return str(task_agent.step(_pending(label, prio), NO_FILES, pd.Series(dtype=int), minutes * 60, config)[0]
                   .at[7, "status"])  # fmt: skip

    assert status("user", 500, 19, Config()) == "pending" and status("user", 500, 20, Config()) == "running"
    assert status("managed", 950, 59, Config()) == "pending" and status("managed", 950, 60, Config()) == "running"
    assert status("user", 500, 20, CODE) == "pending" and status("managed", 950, 10, CODE) == "running"


def test_an_exhausted_task_is_finished_after_10_days() -> None:
    """Seed 003: an exhausted task waits "for manual intervention or timeout of 10 days": still exhausted after 9.9
    days, finishing at 10; with switch exhausted_as_jedi after waitForExhausted 48 h."""
    t = _pending("managed", 500).assign(status="exhausted", oldStatus="prepared")

    def status(now: float, config: Config) -> str:
        return str(task_agent.step(t, NO_FILES, pd.Series(dtype=int), now, config)[0].at[7, "status"])

    assert status(9.9 * D, Config()) == "exhausted" and status(10 * D, Config()) == "finishing"
    assert status(47.9 * H, CODE) == "exhausted" and status(48 * H, CODE) == "finishing"


def test_a_production_task_with_failed_inputs_ends_exhausted_then_finished() -> None:
    """Seed 003, exhausted: "all reattempts were done but some inputs were still unsuccessful, and the task is
    configured to go to this state instead of finished": 3 of 4 inputs finished -> prepared -> exhausted; 10 days
    later finishing -> passed -> finished (PostProcessor)."""
    sim = _one_task_sim()
    sim.tasks.loc[1, ["nFiles", "nFilesUsed", "nFilesFinished", "nFilesFailed"]] = [4, 4, 3, 1]
    from brokerage.sim import postprocessor, watchdog

    watchdog.tick(sim, 0.0)
    assert sim.tasks.at[1, "status"] == "exhausted"
    sim.now = 10 * D
    watchdog.tick(sim, sim.now)
    postprocessor.tick(sim, sim.now)
    path = [to for _, tid, _, to, _ in sim.task_causes if tid == 1]
    assert path == ["prepared", "exhausted", "finishing", "passed", "finished"]
