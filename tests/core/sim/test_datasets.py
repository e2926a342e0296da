"""Dataset, file and event statuses of simulated tasks (seed 003): each dataset's counters add up, in any run."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brokerage.model.gdpconfig import Config
from brokerage.sim import jobgen
from brokerage.sim.commands import TaskCommand
from brokerage.sim.datasets import (
    EVENT_STATUSES,
    INPUT_FILE_STATUSES,
    OUTPUT_FILE_STATUSES,
    dataset_counts,
    input_status,
    output_status,
)
from brokerage.sim.engine import Simulation
from brokerage.sim.jobs import S
from tests.builders import counts, dataset, queue, sim_grid_snapshot, task
from tests.core.sim.conftest import small_sim


def _snap(memory_hungry: bool = False):  # type: ignore[no-untyped-def]
    """Three queues (C small in memory), three tasks of 20 inputs; task 2 is an event service task."""
    qs = [
        queue("A", "S1", jobseed="all"),
        queue("B", "S2"),
        queue("C", "S3", jobseed="all", maxrss=2000 if memory_hungry else 4000),
    ]
    tasks = [task(i, chunk_nevents=60, chunk_njobs=3, neventsperjob=20, cputime=20.0, currentpriority=400 + i, eventservice=i == 2,
                  ramcount=1500, ramunit="MB", nucleus="S1" if i == 1 else None) for i in (1, 2, 3)]  # fmt: skip
    ds = [dataset(i, i, nfiles=20, nevents=400, neventsused=0) for i in (1, 2, 3)]
    jc = counts("A", running=4, activated=2) + counts("B", running=3) + counts("C", running=2, defined=2)
    return sim_grid_snapshot(qs, tasks, datasets=ds, job_counts=jc)


ES_QUEUES = [queue("A", "S1", jobseed="all"), queue("B", "S2", jobseed="es")]


def test_dataset_statuses_follow_the_task() -> None:
    """Input: defined until fed, ready while processed, done/finished/failed at the end (failed for broken too);
    output: ready before its first job, running while jobs add files, prepared while finishing, done at the end."""
    assert [input_status(s) for s in ("assigning", "running", "done", "finished", "broken")] == [
        "defined", "ready", "done", "finished", "failed"]  # fmt: skip
    assert [output_status("ready", 0), output_status("running", 3), output_status("finishing", 3)] == [
        "ready", "running", "prepared"]  # fmt: skip
    assert (output_status("done", 3), output_status("aborted", 3)) == ("done", "failed")


def test_a_finished_task_has_every_file_finished_and_every_event_done() -> None:
    """One task of 10 inputs of 10 events with no failures: at the end its input dataset is done with 10 finished
    files, its output dataset done with 10 finished files, and as an event service task 100 events done."""
    sim = small_sim(queues=ES_QUEUES, tasks=[task(1, status="running", chunk_nevents=100, chunk_njobs=10, neventsperjob=10,
                                                  cputime=1.0, eventservice=True)],
                    job_counts=counts("A", running=20) + counts("B", running=20))  # fmt: skip
    sim.g.failure_rate[:] = 0.0
    sim.run(12)
    row = dataset_counts(sim).loc[1]
    assert (row["in_status"], row["in_finished"], row["out_status"], row["out_finished"]) == ("done", 10, "done", 10)
    assert (row["ev_nEvents"], row["ev_done"], row["ev_ready"]) == (100, 100, 0)


def test_events_of_a_running_job_are_running_and_of_a_queued_one_ready() -> None:
    """Event service: a unit's events follow the job holding it: running while it runs, ready while it queues."""
    sim = small_sim(queues=ES_QUEUES, tasks=[task(1, status="running", chunk_nevents=100, chunk_njobs=10, neventsperjob=10,
                                                  cputime=1.0, eventservice=True)],
                    job_counts=counts("A", running=20) + counts("B", running=20))  # fmt: skip
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    jobgen.tick(sim, sim.now)
    sim.live = np.concatenate([sim.live, *sim.new_rows]) if sim.new_rows else sim.live
    sim.jobs.cols["jobStatus"][:3] = S["running"]
    row = dataset_counts(sim).loc[1]
    assert (row["ev_running"], row["ev_ready"], row["out_running"], row["out_defined"]) == (30, 70, 3, 7)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 1000),
    hours=st.sampled_from([1.0, 3.0, 6.0]),
    failure=st.sampled_from([0.0, 0.3, 0.9]),
    memory_hungry=st.booleans(),
    cmds=st.lists(st.tuples(st.floats(0, 0.9), st.sampled_from([1, 2, 3]), st.sampled_from(
        ["kill", "finish", "pause", "resume", "retry", "reassign"])), max_size=3),
)  # fmt: skip
def test_files_per_dataset_jobs_per_task_and_events_always_add_up(
    seed: int, hours: float, failure: float, memory_hungry: bool, cmds: list[tuple[float, int, str]]
) -> None:
    """In any run (failures, memory kills and retries, task commands): per task the input files by status add up to
    nFiles and agree with the task's counters, the output files by status add up to the jobs made for it (finished
    ones to its finished jobs), and an event service task's events by status add up to nEvents."""
    sim = Simulation(_snap(memory_hungry), Config(), seed=seed)
    if memory_hungry:
        sim.true_ram_mb.update({1: 5000.0, 2: 5000.0})
    sim.g.failure_rate[:] = failure
    sim.run(hours, commands=[TaskCommand(f * hours * 3600, tid, c) for f, tid, c in cmds])
    d = dataset_counts(sim)
    t = sim.tasks
    assert (d[[f"in_{s}" for s in INPUT_FILE_STATUSES]].sum(axis=1) == d["in_nFiles"]).all()
    assert (d[[f"in_{s}" for s in INPUT_FILE_STATUSES]] >= 0).all().all()
    assert (d["in_finished"] == t["nFilesFinished"]).all() and (d["in_failed"] == t["nFilesFailed"]).all()
    assert (d[[f"out_{s}" for s in OUTPUT_FILE_STATUSES]].sum(axis=1) == d["out_nFiles"]).all()
    pos = sim.task_rows(t.index.to_numpy(np.int64))
    assert (d["out_nFiles"].to_numpy() == sim.jobs_made[pos]).all()
    assert (d["out_finished"].to_numpy() == sim.jobs_finished[pos]).all()
    assert (d[[f"ev_{s}" for s in EVENT_STATUSES]].sum(axis=1) == d["ev_nEvents"]).all()
    assert d.loc[2, "ev_nEvents"] > 0 and d.loc[1, "ev_nEvents"] == 0
    out = sim.result()  # every live job is in one share, one work queue and one nucleus (or none) at every sample
    for metric in ("activated", "running"):
        totals = [np.sum([v[metric] for v in out[g].values()], axis=0) for g in ("shares", "work_queues", "nuclei")]
        assert (totals[0] == totals[1]).all() and (totals[0] == totals[2]).all()


def test_a_replayed_job_takes_the_same_steps_as_in_the_full_run() -> None:
    """A run is a pure function of its inputs: replaying until job 40 is final gives the very steps the full run
    logged for it, stops early, and an id the run never made is refused naming the range."""
    import pytest

    from brokerage.sim.events import job_history
    from brokerage.sim.replay import UnknownJob, replay_job

    full = Simulation(_snap(True), Config(), seed=3).run(6)
    replay = replay_job(_snap(True), Config(), 3, 6, 40)
    assert replay["steps"] == job_history(full.log.frame(), 40) and replay["replayed_to_h"] < 6
    assert replay["job"]["queue"] == full.g.queues[int(full.jobs["computingSite"][39])] and replay["task"] in (1, 2, 3)
    with pytest.raises(UnknownJob, match="this run made jobs 1 to"):
        replay_job(_snap(True), Config(), 3, 0.1, 10**7)


def test_jobs_of_a_task_with_a_nucleus_are_counted_under_it() -> None:
    """Series per nucleus: task 1's jobs (nucleus S1) are counted under S1 (its scouts, brokered as scouts, wait at
    A, the nucleus' only queue); the others' under 'no nucleus'."""
    out = Simulation(_snap(), Config(), seed=1).run(3).result()
    s1 = out["nuclei"]["S1"]
    assert max(np.add(s1["running"], s1["activated"])) > 0 and "MC Simulation" in out["work_queues"]
