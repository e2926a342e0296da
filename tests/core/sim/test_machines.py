"""The job and task state machines as data: every move the simulator makes is allowed, an illegal one is refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from brokerage.model.gdpconfig import Config
from brokerage.sim import machines, task_agent
from brokerage.sim.commands import COMMANDS, TaskCommand
from brokerage.sim.engine import Simulation
from brokerage.sim.jobs import STATUSES, S
from brokerage.sim.machines import IllegalMove
from brokerage.sim.task_states import TASK_STATUSES, is_allowed
from tests.builders import counts, dataset, queue, sim_grid_snapshot, task
from tests.core.sim.conftest import add_jobs, small_sim

START_STATUSES = ["ready", "running", "scouting", "defined", "assigning", "pending", "throttled", "exhausted", "paused",
                  "finished", "failed", "done", "aborted"]  # fmt: skip


def _grid(statuses: list[str], user: list[bool], nfiles: list[int]):  # type: ignore[no-untyped-def]
    """Three queues (one small, one analysis) and a task per status, each with a few short jobs' worth of input."""
    qs = [queue("A", "S1", maxrss=1500), queue("B", "S2"), queue("C", "S3", type="analysis")]
    tasks = [
        task(i + 1, status=s, chunk_nevents=4 * n, chunk_njobs=4, cputime=2.0, basewalltime=300,
             prodsourcelabel="user" if u else "managed", nucleus=None if s in ("defined", "assigning") else "S1")
        for i, (s, u, n) in enumerate(zip(statuses, user, nfiles, strict=True))
    ]  # fmt: skip
    ds = [dataset(i + 1, i + 1, nfiles=n, nevents=10 * n, neventsused=0) for i, n in enumerate(nfiles)]
    jc = counts("A", running=3, activated=2) + counts("B", running=4) + counts("C", running=2, defined=1)
    return sim_grid_snapshot(qs, tasks, datasets=ds, job_counts=jc)


def _job_move_allowed(old: str, new: str, rule: str) -> bool:
    if rule == "dispatch":
        return machines.job_path_allowed([old, *machines.DISPATCHED_VIA, new])
    if old == "-":  # generated (the path it took is checked when made), or a command's kill/close of any status
        return new == "activated" or rule == "command"
    return (old, new) in machines.JOB_PAIRS


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    hours=st.sampled_from([1.0, 2.0, 3.0]),
    failure=st.floats(0.0, 0.9),
    tasks=st.lists(st.tuples(st.sampled_from(START_STATUSES), st.booleans(), st.integers(1, 30)), min_size=1,
                   max_size=4),
    cmds=st.lists(st.tuples(st.floats(0, 0.95), st.integers(1, 4), st.sampled_from(COMMANDS)), max_size=6),
)  # fmt: skip
@example(seed=0, hours=1.0, failure=0.0, tasks=[("done", False, 5)], cmds=[(0.0, 1, "incexec")])  # ready -> prepared
@example(seed=1, hours=2.0, failure=0.5, tasks=[("pending", False, 9)], cmds=[(0.5, 1, "finish")])
def test_random_runs_make_only_allowed_transitions(
    seed: int, hours: float, failure: float, tasks: list[tuple[str, bool, int]], cmds: list[tuple[float, int, str]]
) -> None:
    """Random small runs (seeds, failure rates, task statuses, task commands at random times) never make a job or
    task transition the state machines refuse: the run raises no IllegalMove, and every job event and task
    status change it logged is an allowed pair, each task's changes following on from one another (a task arriving
    during the run starts registered)."""
    statuses, user, nfiles = (list(x) for x in zip(*tasks, strict=True))
    sim = Simulation(_grid(statuses, user, nfiles), Config(), seed=seed)
    sim.g.failure_rate[:] = failure
    todo = [TaskCommand(f * hours * 3600, tid, c) for f, tid, c in cmds if tid <= len(tasks)]
    sim.run(hours, commands=todo)
    ev = sim.log.frame()
    jobs = ev[ev["rule"] != "task"]
    moved = jobs[jobs["from"].astype(str).isin([*STATUSES, "-"]) & jobs["to"].astype(str).isin(STATUSES)]
    bad = [(a, b, r) for a, b, r in zip(moved["from"].astype(str), moved["to"].astype(str), moved["rule"].astype(str),
                                         strict=True) if not _job_move_allowed(a, b, r)]  # fmt: skip
    assert bad == []
    last = dict(zip(sim.g.tasks.index.tolist(), sim.g.tasks["status"].tolist(), strict=True))
    first_new = max(last) + 1
    for _t, tid, old, new, why in sim.task_causes:
        if tid >= first_new:  # a task that arrived during the run (TaskRefiner) enters registered
            last.setdefault(tid, "registered")
        if old == new and not is_allowed(old, new):
            continue  # a note (priority, share, estimates), not a status change
        assert is_allowed(old, new), (tid, old, new, why)
        assert old == last[tid], (tid, last[tid], old, new, why)
        last[tid] = new
    assert last == sim.tasks["status"].to_dict()


def test_every_job_status_is_on_the_machine_and_final_ones_are_dead_ends() -> None:
    """The job machine names every status of the job table; finished, failed, cancelled and closed lead nowhere; a
    job is born pending (or waiting) and reaches activated through defined."""
    assert set(STATUSES) <= set(machines.JOB_STATUSES)
    for final in ("finished", "failed", "cancelled", "closed"):
        assert machines.JOB_TRANSITIONS[final] == frozenset()
    assert machines.job_path_allowed([None, *machines.GENERATED_VIA, "activated"])
    assert machines.job_path_allowed(["activated", *machines.DISPATCHED_VIA, "running"])
    assert not machines.job_path_allowed([None, "running"])
    assert {b for a, b in machines.JOB_PAIRS if a is None} == {"pending", "waiting"}


@pytest.mark.parametrize(
    ("old", "new"),
    [("finished", "running"), ("running", "finished"), ("holding", "running"), ("activated", "holding"),
     ("closed", "activated"), ("defined", "running"), ("throttled", "running")],
)  # fmt: skip
def test_an_illegal_job_move_is_refused_naming_the_job(old: str, new: str) -> None:
    """state.move_jobs refuses a move the job machine does not allow: SimulationError names the PandaID and both
    statuses, and the job keeps its status."""
    sim = small_sim()
    rows = add_jobs(sim, status=old)
    pid = int(sim.jobs["PandaID"][rows][0])
    with pytest.raises(IllegalMove, match=f"job {pid}: {old} -> {new} is not an allowed job transition"):
        sim.move_jobs(rows, new)
    assert sim.jobs["jobStatus"][rows][0] == S[old]


def test_an_allowed_job_move_through_collapsed_steps_is_checked_hop_by_hop() -> None:
    """A dispatch (activated -> running via sent) is allowed; the same shortcut from throttled is refused."""
    sim = small_sim()
    ok, bad = add_jobs(sim, status="activated"), add_jobs(sim, status="throttled")
    sim.move_jobs(ok, "running", via=machines.DISPATCHED_VIA)
    assert sim.jobs["jobStatus"][ok][0] == S["running"]
    with pytest.raises(IllegalMove, match="throttled -> running is not an allowed job transition \\(via sent\\)"):
        sim.move_jobs(bad, "running", via=machines.DISPATCHED_VIA)


@pytest.mark.parametrize(
    ("old", "new"), [("done", "running"), ("running", "done"), ("ready", "scouted"), ("aborted", "toretry"),
                     ("broken", "ready"), ("assigning", "running")],
)  # fmt: skip
def test_an_illegal_task_move_is_refused_naming_the_task(old: str, new: str) -> None:
    """state.move_tasks refuses a move the task machine does not allow, naming the task, both statuses and the
    cause; nothing is logged and the task keeps its status."""
    sim = small_sim()
    sim.tasks.at[1, "status"] = old
    with pytest.raises(IllegalMove, match=f"task 1: {old} -> {new} is not an allowed task transition \\(why\\)"):
        sim.move_tasks(pd.Index([1]), new, "why")
    assert sim.tasks.at[1, "status"] == old and sim.task_causes == []


def test_a_task_ends_through_prepared() -> None:
    """The final-status rule takes a running task through prepared (the chart has no running -> done)."""
    t = pd.DataFrame([{"status": "running", "oldStatus": "running", "modificationTime": 0.0, "stateChangeTime": 0.0,
                       "frozenTime": np.nan, "throttledTime": np.nan, "numThrottled": 0, "nFiles": 4, "nFilesUsed": 4,
                       "nFilesFinished": 4, "nFilesFailed": 0, "prodSourceLabel": "managed",
                       "currentPriority": 500.0}], index=pd.Index([7], name="jediTaskID"))  # fmt: skip
    empty = pd.DataFrame({"jediTaskID": [], "status": [], "failedAttempt": [], "attemptNr": []})
    out, changes = task_agent.step(t, empty, pd.Series(dtype=int), 0.0, Config())
    assert list(zip(changes["from"], changes["to"], strict=True)) == [("running", "prepared"), ("prepared", "done")]
    assert out.at[7, "status"] == "done"


def test_every_task_status_is_known_to_the_machine() -> None:
    """The simulator's task statuses are the task machine's (one table, brokerage.sim.task_states)."""
    sim = small_sim()
    assert set(sim.tasks["status"]) <= set(TASK_STATUSES)


def test_resume_of_a_task_paused_in_the_snapshot_is_refused() -> None:
    """A task paused in the snapshot has no known status to resume to: resume is refused with the rule."""
    snap = sim_grid_snapshot([queue("A", "S1")], [task(1, status="paused", chunk_nevents=10, chunk_njobs=1)],
                             datasets=[dataset(1, 1, nfiles=5, nevents=50)], job_counts=counts("A", running=1))  # fmt: skip
    sim = Simulation(snap, Config(), seed=0).run(0.1, commands=[TaskCommand(0.0, 1, "resume")])
    assert sim.commands[0][3] == "refused" and "paused in" in sim.commands[0][4]
    assert sim.tasks.at[1, "status"] == "paused"
