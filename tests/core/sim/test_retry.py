"""The retry module and the memory increase on retry (jedi-lifecycle.md §4.3-§4.4), alone and inside a run."""

from __future__ import annotations

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.sim import brokering, jobgen, retry
from brokerage.sim.jobs import S
from brokerage.sim.retry import ErrorClass, RetryRule, error_class, increase_ram, preprocess_rules
from tests.builders import counts, dataset, queue, task
from tests.core.sim.conftest import small_sim


def test_rules_acted_on_are_the_first_increase_and_the_most_specific_limit() -> None:
    """One error keeps the first increase_memory rule that matches and one limit rule: the most specific (a diag
    regexp beats none), a tie going to the smallest maxAttempt with no_retry counting as 0."""
    rules = [
        RetryRule("pilot", 1235, "increase_memory"),
        RetryRule("pilot", 1235, "increase_memory", {"x": 1}),
        RetryRule("pilot", 1235, "limit_retry", {"maxAttempt": 5}),
        RetryRule("pilot", 1235, "limit_retry", {"maxAttempt": 4}, diag="memory"),
        RetryRule("pilot", 1235, "limit_retry", {"maxAttempt": 2}, diag="nomatch"),
    ]
    chosen = preprocess_rules(rules, "pilot", 1235, diag="exceeded memory")
    assert chosen == [rules[0], rules[3]]
    ties = [RetryRule("exe", 65, "limit_retry", {"maxAttempt": 3}), RetryRule("exe", 65, "no_retry")]
    assert preprocess_rules(ties, "exe", 65) == [ties[1]]
    assert preprocess_rules(rules, "exe", 1235) == []  # the source must match too


def test_filters_on_release_and_work_queue_must_all_match() -> None:
    """A rule with a release filter applies only to jobs of that release."""
    rule = RetryRule("exe", 65, "no_retry", release="Athena-24")
    assert preprocess_rules([rule], "exe", 65, release="Athena-24") == [rule]
    assert preprocess_rules([rule], "exe", 65, release="Athena-23") == []


def test_system_errors_are_classed_by_source_and_code() -> None:
    """ERROR_CLASSIFICATION: an active row of class 'system' matches its (source, code); inactive rows do not."""
    classes = [ErrorClass("pilot", 1099, "system"), ErrorClass("pilot", 1100, "system", active=False)]
    assert error_class(classes, "pilot", 1099) == "system"
    assert error_class(classes, "pilot", 1100) == "" and error_class(classes, "exe", 1099) == ""


def test_memory_ladder_takes_the_next_step_above_the_job() -> None:
    """Per job: a job that asked 2000 MB gets 3000 on its inputs, 2500 also 3000, 6000 gets 8000; 8000 is the top."""
    assert increase_ram(2000, 2000, np.array([]), 10).file_ram == 3000
    assert increase_ram(2500, 2000, np.array([]), 10).file_ram == 3000
    assert increase_ram(6000, 2000, np.array([]), 10).file_ram == 8000
    top = increase_ram(8000, 2000, np.array([]), 10)
    assert (top.file_ram, top.task_ram) == (None, None) and "8000" in top.why


def test_no_increase_when_the_task_already_asks_more_than_the_next_step() -> None:
    """A job at 2000 MB would go to 3000, but the task's ramCount is 4000 already: nothing changes."""
    v = increase_ram(2000, 4000, np.array([]), 10)
    assert (v.file_ram, v.task_ram) == (None, None)


def test_more_than_30_percent_of_inputs_above_the_task_raise_the_task() -> None:
    """4 of 10 inputs above the task's 2000 MB (40 % > 30 %), the largest at 4000: minimum = max(2000, 4000 - 1) =
    3999, so the task goes to the first step above max(2000, 3999): 4000; 3 of 10 (30 %) only raise the job's inputs;
    MBPerCoreFixed tasks never take the whole-task rule."""
    four = np.array([3000.0, 3000, 3000, 4000])
    assert increase_ram(2000, 2000, four, 10).task_ram == 4000
    three = increase_ram(2000, 2000, four[:3], 10)
    assert (three.task_ram, three.file_ram) == (None, 3000)
    assert increase_ram(2000, 2000, four, 10, fixed=True).file_ram == 3000


def test_min_ram_count_round_trips_through_compensation() -> None:
    """An 8-core MBPerCore job at 1000 MB/core with baseRamCount 500: minRamCount int(8500 x 0.9) = 7650, and
    decompensating gives back int(7650 / 0.9) - 500 = 8000 MB, 1000 per core."""
    assert retry.min_ram_count(1000, 500, 8, True) == 7650
    assert retry.job_ram(7650, 500, 8, True) == 1000


def _memory_grid(config: Config | None = None) -> object:
    """Queue A: maxrss 2000 MB (the pilot kills above 4000); B: maxrss 8000. One running task of 10 inputs asking
    1500 MB whose payloads really peak near 6000 MB."""
    sim = small_sim(
        config,
        queues=[queue("A", "S1", maxrss=2000), queue("B", "S2", maxrss=8000)],
        tasks=[task(1, status="running", chunk_nevents=100, chunk_njobs=10, neventsperjob=10, cputime=1.0, ramcount=1500,
                    ramunit="MB")],
        datasets=[dataset(1, 1, nfiles=10, nevents=100, neventsused=0)],
        job_counts=counts("A", running=20) + counts("B", running=20),
    )  # fmt: skip
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    sim.g.failure_rate[:] = 0.0
    sim.true_ram_mb[1] = 6000.0
    return sim


def test_memory_kills_are_retried_with_more_memory_until_the_brokerage_avoids_the_small_queue() -> None:
    """The pilot kills a payload above twice the queue's maxrss (PAYLOADEXCEEDMAXMEM, 1235) at A only; the retry
    module raises the input's ramCount up the ladder (seed 003: the next step above max(maxPSS about 6000, 1500) =
    8000; switch memory_retry_as_jedi: 1500 -> 2000 -> 3000), and from 3000 MB (2700 x 0.9 > A's maxrss) the memory
    check leaves only B, where every job finishes: the task ends done."""
    sim = _memory_grid()
    sim.run(24)
    j = sim.jobs
    at_a = j["computingSite"] == sim.qi["A"]
    assert at_a.any() and (j["jobStatus"][at_a] == S["failed"]).all() and (j["errorCode"][at_a] == 1235).all()
    assert (j["jobStatus"][~at_a] == S["finished"]).all()
    assert not (at_a & (j["ramCount"] >= 3000)).any()  # a raised chunk is brokered with its ramCount
    assert (j["ramCount"] > 1500).any()
    assert sim.tasks.at[1, "status"] == "done" and sim.tasks.at[1, "nFilesFinished"] == 10
    acted = {k: v for k, v in sim.retries.items() if k[1] == 1235}
    assert acted and all("increase_memory" in k[2] for k in acted) and sum(acted.values()) == at_a.sum()


def test_the_transformation_error_rule_limits_inputs_to_two_attempts() -> None:
    """exe 65 with limit_retry maxAttempt 2: an input whose jobs always fail with it is given up after 2 attempts
    (production's default would allow 3); stage-in failures (pilot 1099, class system) keep the default."""
    sim = _memory_grid()
    sim.true_ram_mb[1] = 100.0
    sim.g.failure_rate[:] = 1.0
    sim.retry_rules = (RetryRule("exe", 65, "limit_retry", {"maxAttempt": 2}),)
    sim.run(24)
    f = sim.files
    codes = sim.jobs["errorCode"][: sim.jobs.n]
    assert set(codes.tolist()) <= {retry.TRANSFORM_FAILED, retry.STAGEINFAILED}
    assert (f.status == f.FAILED).all() and f.n == 10
    assert set(f.attemptNr.tolist()) <= {2, 3} and (f.maxAttempt <= 3).all()
    assert (f.maxAttempt[f.attemptNr == 2] == 2).all()


def test_a_raised_task_ramcount_reaches_the_next_brokerage_at_once() -> None:
    """JEDI reads the task each cycle: once the task's ramCount is 3000 MB (2700 x 0.9 > A's maxrss 2000), its very
    next brokerage, before the brokers' snapshot is refreshed, leaves only B; at 1500 MB both queues were chosen."""
    sim = _memory_grid()
    before, _p = brokering.choices(sim, 1)
    assert sorted(sim.g.queues[i] for i in before) == ["A", "B"]
    sim.estimates_changed(1, {"ramcount": 3000.0})
    after, _p = brokering.choices(sim, 1)
    assert [sim.g.queues[i] for i in after] == ["B"]
    assert "-lowmemory" in str(brokering.decision(sim, 1).to_dict())


def test_a_task_asking_any_core_count_runs_with_the_queues_cores_and_memory() -> None:
    """corecount 0 ('any'), 1000 MB per core: at a 1-core queue a job has 1 core and peaks near 1000 MB, at an
    8-core queue 8 cores and near 8000 MB; its CPU part takes 8 times longer on 1 core."""
    sim = small_sim(
        queues=[queue("A", "S1", corecount=1, maxrss=4000, maxtime=10**6), queue("B", "S2", corecount=8, maxrss=32000)],
        tasks=[task(1, status="running", corecount=0, chunk_nevents=400, chunk_njobs=40, neventsperjob=10, cputime=20000.0,
                    ramcount=1000, ramunit="MBPerCore", basewalltime=0)],
        datasets=[dataset(1, 1, nfiles=40, nevents=400, neventsused=0)],
        job_counts=counts("A", running=40) + counts("B", running=40),
    )  # fmt: skip
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    sim.true_ram_mb[1] = 8000.0
    jobgen.tick(sim, sim.now)
    j = sim.jobs
    at_a = j["computingSite"][: j.n] == sim.qi["A"]
    assert at_a.any() and (~at_a).any()
    assert (j["coreCount"][: j.n][at_a] == 1).all() and (j["coreCount"][: j.n][~at_a] == 8).all()
    assert 600 < np.median(j["maxPSS"][: j.n][at_a]) < 1500 and 5000 < np.median(j["maxPSS"][: j.n][~at_a]) < 12000
    ratio = np.median(j["runSeconds"][: j.n][at_a]) / np.median(j["runSeconds"][: j.n][~at_a])
    assert 5 < ratio < 12


def test_cputime_from_a_job_killed_at_maxtime_is_hand_computed() -> None:
    """initialize_cpu_time_task: (86400 - 600) x 10 x 8 cores x 1.1 / 0.9 / 1000 events x 1.5 = 12584 HS06 s/event
    (an integer); below 10 it is kept as an integer of thousandths (3000 x 10 x 1.1 / 10000 x 1.5 = 4.95 computes as
    4.9499... in floating point, stored as 4949 mHS06 s, as PanDA's int() does); nothing when the task
    has a finished job, lacks baseWalltime, the queue lacks corecount, or the old value is larger."""
    assert retry.increase_cputime(False, 86400, 10, 8, 8, 600, 90, 1000, 5.0).cpu_time == 12584
    assert retry.increase_cputime(False, 3600, 10, 1, 1, 600, 100, 10000, 1.0).cpu_time == 4.949
    assert retry.increase_cputime(True, 86400, 10, 8, 8, 600, 90, 1000, 5.0).cpu_time is None
    assert retry.increase_cputime(False, 86400, 10, 8, 8, 0, 90, 1000, 5.0).cpu_time is None
    assert retry.increase_cputime(False, 86400, 10, 0, 8, 600, 90, 1000, 5.0).cpu_time is None
    kept = retry.increase_cputime(False, 86400, 10, 8, 8, 600, 90, 1000, 20000.0)
    assert kept.cpu_time is None and "above 12584" in kept.why


def test_jobs_killed_at_a_short_maxtime_raise_the_tasks_cputime_and_the_brokerage_moves_on() -> None:
    """Queue A ends payloads at 1 h (REACHEDMAXTIME 1213), B allows 48 h; the task's jobs really need about 8,000 s.
    The first kill at A, before any job finished, sets cpuTime = (3600 - 60) x 10 x 1 x 1.1 / 0.9 / 10 x 1.5 = 6490 (6489.99... stored as 6489);
    from then the walltime check (-shortwalltime) leaves only B, and every job at B finishes."""
    sim = small_sim(
        queues=[queue("A", "S1", maxtime=3600), queue("B", "S2", maxtime=172800)],
        tasks=[task(1, status="running", chunk_nevents=100, chunk_njobs=10, neventsperjob=10, cputime=90.0, basewalltime=60,
                    cpuefficiency=90, ramcount=1000, ramunit="MB")],
        datasets=[dataset(1, 1, nfiles=30, nevents=300, neventsused=0)],
        job_counts=counts("A", running=10) + counts("B", running=10),
    )  # fmt: skip
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    sim.g.failure_rate[:] = 0.0
    sim.true_cpu[1] = 80.0
    sim.run(24)
    j = sim.jobs
    at_a = j["computingSite"][: j.n] == sim.qi["A"]
    assert at_a.any() and (j["errorCode"][: j.n][at_a] == 1213).all()
    assert (j["jobStatus"][: j.n][~at_a] == S["finished"]).all()
    raised = [tm for tm, tid, _o, _n, why in sim.task_causes if "increase_cputime" in why]
    assert len(raised) == 1 and sim.tasks.at[1, "cpuTime"] == 6489
    assert not (at_a & (j["creationTime"][: j.n] > raised[0])).any()
