"""The job throttler (jedi-lifecycle.md §8), each case computed by hand from its counts."""

from __future__ import annotations

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.sim.jobgen import retry_counts
from brokerage.sim.throttler import throttle

SH, RT = "MC Simulation", "SCORE"


def test_no_running_and_more_queued_than_the_limit_is_skipped() -> None:
    """SKIP a: nRunning 0 and 2,500 queued > NQUEUELIMIT default 4 x 500 = 2,000."""
    v = throttle(Config(), SH, RT, 0, 2500, 0)
    assert v.throttled and v.rule == "a" and "2500 > queue limit 2000" in v.reason


def test_queued_over_running_above_the_threshold_is_skipped() -> None:
    """SKIP c: 2,500 queued / 1,000 running = 2.5 > THROTTLE_THRESHOLD 2 and 2,500 > limit 4 x clamp(-500) = 2,000."""
    v = throttle(Config(), SH, RT, 1000, 2500, 0)
    assert v.throttled and v.rule == "c" and "2.50 > THROTTLE_THRESHOLD 2" in v.reason
    assert not throttle(Config().with_overrides({"THROTTLE_THRESHOLD": 3.0}), SH, RT, 1000, 2500, 0).throttled


def test_lack_of_jobs_raises_the_bunch() -> None:
    """PASS lackOfJobs: 100 queued < 0.9 x 2,400 (bunch clamp(1,900) = 600): max(600 // 2, 2,400 // 20) = 300 jobs."""
    v = throttle(Config(), SH, RT, 1000, 100, 0)
    assert not v.throttled and v.rule == "pass lack of jobs" and v.max_jobs == 300


def test_plain_pass_gives_half_a_bunch() -> None:
    """PASS: 3,000 queued for 2,000 running (ratio 1.5 <= 2, not short of jobs) may add 600 // 2 = 300 jobs."""
    v = throttle(Config(), SH, RT, 2000, 3000, 0)
    assert not v.throttled and v.rule == "pass" and v.max_jobs == 300


def test_too_many_defined_is_skipped() -> None:
    """SKIP e: 2,500 defined > the queue limit 2,400 means brokerage is stuck."""
    v = throttle(Config(), SH, RT, 10_000, 0, 2500)
    assert v.throttled and v.rule == "e"


def test_caps_per_work_queue_and_resource_type() -> None:
    """NRUNNINGCAP_<share> 500 < 1,000 running skips (g); NQUEUECAP_<share>_<rtype> 1,000 < 1,200 queued skips
    (h); a cap of 5,000 sets the jobs per cycle to 5,000 // 5 = 1,000."""
    g = throttle(Config().with_overrides({f"NRUNNINGCAP_{SH}": 500}), SH, RT, 1000, 100, 0)
    assert g.throttled and g.rule == "g"
    h = throttle(Config().with_overrides({f"NQUEUECAP_{SH}_{RT}": 1000}), SH, RT, 5000, 1200, 0)
    assert h.throttled and h.rule == "h"
    ok = throttle(Config().with_overrides({f"NQUEUECAP_{SH}": 5000}), SH, RT, 5000, 4000, 0)
    assert not ok.throttled and ok.max_jobs == 1000


def test_a_work_queue_not_throttled_passes_without_limit() -> None:
    """Throttler step 1: a work queue whose share has throttled='N' passes with no limit, however full it is."""
    v = throttle(Config(), "Express", "SCORE", 0, 100_000, 100_000, throttled=False)
    assert not v.throttled and v.rule == "not throttled" and v.max_jobs >= 10**9


def test_reprocessing_default_bunch_grows_towards_the_queue_limit() -> None:
    """§8.6: for 'Reprocessing default' with NQUEUELIMIT 3000 and 1000 queued the bunch is min(max(500, 3000 - 1000),
    600) = 600, so a cycle may add 300 jobs; another work queue with the same counts keeps the bunch 500: 250 jobs
    (the lack-of-jobs floor 3000 // 20 = 150 is below both)."""
    cfg = Config().with_overrides({"NQUEUELIMIT": 3000})
    reprocessing = throttle(cfg, "Reprocessing default", "SCORE", 100, 1000, 0)
    plain = throttle(cfg, "MC Simulation", "SCORE", 100, 1000, 0)
    assert reprocessing.max_jobs == 300 and plain.max_jobs == 250


def test_high_priority_queued_rule() -> None:
    """highPrioQueued (PanDA's throttler): a production task waiting at a priority above every job in PanDA, or
    equal to it with fewer than 500 such jobs not running; never for analysis."""
    from brokerage.sim.throttler import high_prio_queued

    assert high_prio_queued(950, 900, 3000, False) and high_prio_queued(900, 900, 499, False)
    assert not high_prio_queued(900, 900, 500, False) and not high_prio_queued(800, 900, 0, False)
    assert not high_prio_queued(950, 900, 0, True)


def test_a_skipped_work_queue_passes_a_task_that_outranks_its_jobs() -> None:
    """The high-priority override: MC Simulation holds 3000 activated jobs (priority 500 or 900) against 10 running,
    so the throttler SKIPs (c); a task at 950 outranks them all and gets jobs (minPriority 950), the task at 500
    none; NRUNNINGCAP's SKIP (g) is never overridden; a task at 900 ties over 500 waiting jobs: no override."""
    from brokerage.model.gdpconfig import Config
    from brokerage.sim import brokering, jobgen
    from tests.builders import counts, dataset, task
    from tests.core.sim.conftest import small_sim

    def run(config: Config, top: int = 950):  # type: ignore[no-untyped-def]
        sim = small_sim(
            config,
            tasks=[task(1, status="running", currentpriority=top, chunk_nevents=100, chunk_njobs=10, neventsperjob=10, cputime=1.0),
                   task(2, status="running", currentpriority=500, chunk_nevents=100, chunk_njobs=10, neventsperjob=10, cputime=1.0)],
            datasets=[dataset(1, 1, nfiles=10, nevents=100), dataset(2, 2, nfiles=10, nevents=100)],
            job_counts=counts("A", running=10, activated=3000) + counts("B", running=10),
        )  # fmt: skip
        brokering.tick(sim, 0.0)  # JOB_STATS_HP, as of the brokers' refresh
        jobgen.tick(sim, 0.0)
        made = sim.jobs["jediTaskID"][: sim.jobs.n]
        return sim.verdicts[("MC Simulation", "SCORE")], int((made == 1).sum()), int((made == 2).sum())

    verdict, first, second = run(Config())
    assert verdict.rule == "pass high priority" and verdict.min_priority == 950 and first == 10 and second == 0
    verdict, first, second = run(Config().with_overrides({"NRUNNINGCAP": 5}))
    assert verdict.rule == "g" and first == second == 0
    verdict, first, second = run(Config(), top=900)  # ties the top jobs, over 500 of which wait: no override
    assert verdict.rule == "c" and first == second == 0


def test_retry_counts_are_the_inputs_back_for_a_retry() -> None:
    """JobGenerator's inputs available for a task include its units back to ready (the retry pool): task 42 has
    two, task 7 an empty pool and task 41 none, so the counts read 0, 2, 0 in the order asked."""
    assert retry_counts({42: [7, 8], 7: []}, np.array([41, 42, 7])).tolist() == [0, 2, 0]
