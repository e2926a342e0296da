"""Scouts brokered as scouts (seed 000) and assessed once the first 5 are finished (seed 003), hand-computed."""

from __future__ import annotations

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.sim import jobgen, machines, postprocessor
from brokerage.sim.engine import Simulation
from brokerage.sim.propagate import end_jobs
from brokerage.sim.scouts import N_SCOUT_JOBS, assess
from tests.builders import counts, dataset, queue, sim_grid_snapshot, site, task

OLD = "2026-11-20T06:00:00Z"  # six hours before the snapshot: an inactive queue when jobs wait there
CODE = Config().with_overrides({"RULES": "panda-1.0.4"})


def _scout_grid(config: Config | None = None) -> Simulation:
    """Nucleus N with N1 (maxtime 48 h), N12 (maxtime 12 h) and NI (no start for 6 h, 5 jobs activated);
    satellite S with S1. One ready task (nucleus N, 50 inputs) that has not scouted."""
    qs = [queue("N1", "N"), queue("N12", "N", maxtime=43200), queue("NI", "N", laststart=OLD), queue("S1", "S")]
    jc = counts("N1", running=20) + counts("N12", running=20) + counts("NI", running=20, activated=5)
    jc += counts("S1", running=200)
    snap = sim_grid_snapshot(
        qs, [task(1, nucleus="N", chunk_nevents=100, chunk_njobs=10, neventsperjob=10, cputime=1.0, ramunit="MB")],
        sites=[site("N"), site("S", "satellite")], datasets=[dataset(1, 1, nfiles=50, nevents=500, neventsused=0)],
        job_counts=jc,
    )  # fmt: skip
    sim = Simulation(snap, config or Config(), seed=0)
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    sim.g.failure_rate[:] = 0.0
    return sim


def test_scouts_go_only_to_active_nucleus_queues_with_a_day_of_maxtime() -> None:
    """Seed 000 (production job brokerage): "If priority>800 or scout job: remove inactive queues", priority >= 800
    or scouts only at the nucleus, and scouts need maxtime >= 24 h: of N1, N12 (12 h), NI (inactive) and the
    satellite's S1 the 10 scouts all land at N1; once the task runs, its jobs may go to S1 as well."""
    sim = _scout_grid()
    jobgen.tick(sim, 0.0)
    j = sim.jobs
    assert j.n == N_SCOUT_JOBS and j["isScout"].all()
    assert {sim.g.queues[q] for q in j["computingSite"][: j.n]} == {"N1"}
    sim.run(12)
    later = ~j["isScout"][: j.n]
    assert later.any() and "S1" in {sim.g.queues[q] for q in j["computingSite"][: j.n][later]}


def _finish(sim: Simulation, rows: np.ndarray) -> None:
    sim.move_jobs(rows, "running", via=machines.DISPATCHED_VIA)
    sim.jobs.cols["startTime"][rows] = sim.now
    sim.move_jobs(rows, "holding")
    end_jobs(sim, rows, "finished")


def test_the_task_is_assessed_once_the_first_5_scouts_are_finished() -> None:
    """Seed 003: "Once the first 5 jobs are finished, the task ramcount is set to (max(maxpss)-baseramcount)/
    corecount": 4 finished scouts leave the task scouting; the 5th makes it scouted -> running with ramCount the
    largest maxPSS of the five (MB task). With switch scout_assess_as_jedi a managed task waits for half of its
    scouts (5 of 10 here) as well, but its ramCount is P75 x 1.1."""
    for config in (Config(), CODE):
        sim = _scout_grid()
        jobgen.tick(sim, 0.0)
        sim.add_live()
        sim.config = config  # PostProcessor's rule (the code profile's brokers need a fuller grid)
        rows = np.arange(N_SCOUT_JOBS)
        sim.jobs.cols["maxPSS"][rows] = [1000.0, 1500, 1200, 1800, 1600, 9000, 9000, 9000, 9000, 9000]
        _finish(sim, rows[:4])
        postprocessor.tick(sim, 0.0)
        assert sim.tasks.at[1, "status"] == "scouting"
        _finish(sim, rows[4:5])
        postprocessor.tick(sim, 0.0)
        assert sim.tasks.at[1, "status"] == "running"
        five = np.array([1000.0, 1500, 1200, 1800, 1600])
        want = 1800 if config is not CODE else int(np.percentile(five, 75) * 1.1)
        assert sim.tasks.at[1, "ramCount"] == want


def test_seed_ramcount_per_core_removes_baseramcount() -> None:
    """Seed 003 (MBPerCore): "(max(maxpss)-baseramcount)/corecount": maxPSS up to 9000 MB, baseRamCount 1000, 8
    cores -> 1000 MB per core."""
    pss = np.array([5000.0, 9000.0, 7000.0])
    v = assess(Config(), pss, np.ones(3), np.full(3, 3600.0), 8, True, 500, 1.0, 0, base_ram=1000.0)
    assert v.ram_count == 1000
    assert (
        assess(CODE, pss, np.ones(3), np.full(3, 3600.0), 8, True, 500, 1.0, 0).ram_count == 1100
    )  # P75 of 625, 875, 1125 MB per core = 1000, x 1.1


def test_a_task_without_a_split_rule_scouts_with_ten_one_file_jobs() -> None:
    """JobSplitter gives the scouts of a task without nFilesPerJob or nEventsPerJob one file each, 10 of them: a
    task with 50 files of 10 events and no split rule (units of 200 files, JobSplitter's maxNumFiles) is 10 one-file
    scout units and one unit of the 40 files left; its 10 scouts each read 10 events, the rest waits for the
    scouts' end and then runs as one job."""
    sim = Simulation(
        sim_grid_snapshot(
            [queue("N1", "N")], [task(1, nucleus="N", chunk_nevents=100, chunk_njobs=10, cputime=1.0)],
            sites=[site("N")], datasets=[dataset(1, 1, nfiles=50, nevents=500, neventsused=0)],
            job_counts=counts("N1", running=20),
        ),
        Config(), seed=0,
    )  # fmt: skip
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    sim.g.failure_rate[:] = 0.0
    t = sim.tasks
    assert (t.at[1, "nEventsPerUnit"], t.at[1, "nFiles"], t.at[1, "nFilesToBeUsed"]) == (2000, 11, 10)
    jobgen.tick(sim, 0.0)
    j = sim.jobs
    assert j.n == N_SCOUT_JOBS and j["isScout"][: j.n].all()
    assert (sim.files.share[j["fileID"][: j.n]] * 2000).tolist() == [10.0] * 10
    sim.run(6)
    later = np.flatnonzero(~j["isScout"][: j.n])
    assert len(later) == 1 and sim.files.share[j["fileID"][later]] * 2000 == [400.0]
    assert sim.tasks.at[1, "status"] in ("running", "done")
