"""Scouts (jedi-lifecycle.md §5): scout jobs first, then the task's estimates from them and the exhausted checks."""

from __future__ import annotations

import numpy as np
import pytest

from brokerage.model.gdpconfig import Config
from brokerage.sim import jobgen
from brokerage.sim.scouts import N_SCOUT_JOBS, assess, scout_priority
from tests.builders import counts, dataset, task
from tests.core.sim.conftest import small_sim

CODE = Config().with_overrides({"RULES": "panda-1.0.4"})


def test_scout_estimates_are_p75_plus_10_percent_and_p95_times_1_5() -> None:
    """Switch scout_assess_as_jedi: ramCount = P75 of the scouts' maxPSS x 1.1 (P75 of 1000..4000 MB is 3250: 3575
    MB); cpuTime = P95 of their HS06 s per event x 1.5 (P95 of 10, 20, 30, 40 is 38.5: 57.75); no check with 20 jobs
    or fewer to come. The seed's ramCount is the largest maxPSS: 4000."""
    v = assess(CODE, np.array([1000.0, 2000, 3000, 4000]), np.array([10.0, 20, 30, 40]), np.full(4, 3600.0),
               1, False, 2000, 10.0, 20)  # fmt: skip
    assert (v.ram_count, v.cpu_time, v.check) == (3575, pytest.approx(57.75), "")
    seed = assess(Config(), np.array([1000.0, 2000, 3000, 4000]), np.array([10.0, 20, 30, 40]), np.full(4, 3600.0),
                  1, False, 2000, 10.0, 20)  # fmt: skip
    assert (seed.ram_count, seed.cpu_time) == (4000, pytest.approx(57.75))


def test_scouts_needing_more_than_4_gb_exhaust_a_task_that_asked_less() -> None:
    """RAM check: an 8-core MBPerCore task asked 400 MB/core (3200 MB); scouts at 600 MB/core give 600 x 8 = 4800 MB
    (seed: the largest maxPSS per core) > 4000 MB > 3200 MB: exhausted with reason=scout_ramCount (only when more
    than 20 jobs are to come)."""
    pss = np.full(5, 4800.0)
    v = assess(Config(), pss, np.full(5, 10.0), np.full(5, 3600.0), 8, True, 400, 10.0, 500)
    assert v.ram_count == 600 and v.check == "scout_ramCount" and "4800 MB > 4000 MB (was 3200 MB)" in v.reason
    assert assess(Config(), pss, np.full(5, 10.0), np.full(5, 3600.0), 8, True, 400, 10.0, 20).check == ""


def test_scouts_far_slower_than_estimated_with_day_long_jobs_exhaust_the_task() -> None:
    """Wrong cpuTime: scouts at 30 HS06 s/event give 45 > 2 x 10 estimated, and a job ran 25 h > 24 h: exhausted
    (scout_cpuTime); the same scouts with 10 h jobs only replace the estimate."""
    cpu = np.full(3, 30.0)
    assert assess(Config(), np.full(3, 1000.0), cpu, np.array([3600.0, 7200, 25 * 3600]), 1, False, 2000, 10.0,
                  100).check == "scout_cpuTime"  # fmt: skip
    assert assess(Config(), np.full(3, 1000.0), cpu, np.full(3, 36000.0), 1, False, 2000, 10.0, 100).check == ""


def test_scout_jobs_come_first_at_priority_901_then_the_task_runs_on_their_estimates() -> None:
    """A ready task with 50 inputs generates 10 scout jobs (priority max(901, 500 + 1) = 901) and goes to scouting;
    once they are done it is scouted -> running with ramCount from the scouts, and the rest is generated."""
    sim = small_sim(tasks=[task(1, chunk_nevents=100, chunk_njobs=10, neventsperjob=10, cputime=1.0, ramcount=2000, ramunit="MB")],
                    datasets=[dataset(1, 1, nfiles=50, nevents=500, neventsused=0)],
                    job_counts=counts("A", running=20) + counts("B", running=20))  # fmt: skip
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    sim.g.failure_rate[:] = 0.0
    sim.now = 0.0
    jobgen.tick(sim, sim.now)
    j = sim.jobs
    assert j.n == N_SCOUT_JOBS and j["isScout"].all() and (j["currentPriority"] == scout_priority(500)).all()
    assert scout_priority(950) == 951 and sim.tasks.at[1, "status"] == "scouting"
    sim.run(6)
    changes = [(f, to) for _, tid, f, to, _ in sim.task_causes if tid == 1]
    assert ("scouting", "scouted") in changes and ("scouted", "running") in changes
    assert sim.tasks.at[1, "ramCount"] != 2000 and 1 in sim.scouted
    assert (~sim.jobs["isScout"]).sum() > 0 and sim.tasks.at[1, "nFilesToBeUsed"] == 50


def test_a_task_whose_scouts_all_fail_is_broken() -> None:
    """No scout job succeeded: scouting -> tobroken -> broken once the 10 exposed inputs have failed for good."""
    sim = small_sim(tasks=[task(1, chunk_nevents=100, chunk_njobs=10, neventsperjob=10, cputime=1.0)],
                    datasets=[dataset(1, 1, nfiles=50, nevents=500, neventsused=0)],
                    job_counts=counts("A", running=20) + counts("B", running=20))  # fmt: skip
    sim.g.failure_rate[:] = 1.0
    sim.run(12)
    changes = [(f, to) for _, tid, f, to, _ in sim.task_causes if tid == 1]
    assert changes[-2:] == [("scouting", "tobroken"), ("tobroken", "broken")]
    assert sim.tasks.at[1, "nFilesFailed"] == N_SCOUT_JOBS
