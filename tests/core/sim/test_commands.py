"""Task commands on a simulated grid (seed 003): each allowed by the task's status or refused with the rule."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from brokerage.cli.main import main
from brokerage.sim import commands, postprocessor
from brokerage.sim.commands import CommandRefused, TaskCommand, apply, parse_command
from brokerage.sim.propagate import end_jobs
from tests.core.sim.conftest import add_jobs, small_sim, status_of


def _sim(status: str = "running"):  # type: ignore[no-untyped-def]
    sim = small_sim()
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    sim.tasks.loc[1, ["status", "oldStatus"]] = [status, status]
    return sim


def _do(sim, command: str) -> str:  # type: ignore[no-untyped-def]
    return apply(sim, TaskCommand(0.0, 1, command))


def test_pause_throttles_activated_jobs_and_resume_brings_them_back() -> None:
    """pause (allowed in running): the task is paused and its activated jobs throttled; resume returns it to running
    and the throttled jobs to activated."""
    sim = _sim()
    rows = add_jobs(sim, n=3, jediTaskID=1)
    _do(sim, "pause")
    assert sim.tasks.at[1, "status"] == "paused" and status_of(sim, rows) == ["throttled"] * 3
    _do(sim, "resume")
    assert sim.tasks.at[1, "status"] == "running" and status_of(sim, rows) == ["activated"] * 3


def test_kill_cancels_every_live_job_and_aborts_the_task() -> None:
    """kill: aborting -> aborted, every job not yet final cancelled with code 9."""
    sim = _sim()
    rows = np.r_[add_jobs(sim, n=2, jediTaskID=1), add_jobs(sim, status="running", jediTaskID=1, startTime=0.0)]
    _do(sim, "kill")
    assert sim.tasks.at[1, "status"] == "aborted" and status_of(sim, rows) == ["cancelled"] * 3
    assert (sim.jobs["errorCode"][rows] == 9).all()


def test_finish_kills_queued_jobs_and_ends_when_running_ones_are_done() -> None:
    """finish: finishing; queued jobs cancelled (code 52) at the next post-processing, the running one left; once it
    ends the task passes to its final status: 3 of 10 inputs finished -> finished."""
    sim = _sim()
    sim.tasks.loc[1, ["nFiles", "nFilesUsed", "nFilesFinished"]] = [10, 5, 3]
    queued = add_jobs(sim, n=2, jediTaskID=1)
    running = add_jobs(sim, status="running", jediTaskID=1, startTime=0.0)
    _do(sim, "finish")
    postprocessor.tick(sim, sim.now)
    assert status_of(sim, np.r_[queued, running]) == ["cancelled", "cancelled", "running"]
    assert sim.tasks.at[1, "status"] == "finishing"
    sim.move_jobs(running, "holding")  # the payload ended, the Adder then finishes the job
    end_jobs(sim, running, "finished")
    postprocessor.tick(sim, sim.now)
    assert sim.tasks.at[1, "status"] == "finished"
    assert [to for _, tid, _, to, _ in sim.task_causes if tid == 1][-2:] == ["passed", "finished"]


def test_retry_gives_failed_inputs_five_more_attempts_and_readies_the_task() -> None:
    """retry from finished: units failed for good get maxAttempt + 5, go back to ready and to the task's retry pool;
    nFilesFailed drops by as many; the task goes toretry -> ready."""
    sim = _sim("finished")
    fid = sim.files.add(1, 2, 3, 10**6)
    sim.files.status[fid] = sim.files.FAILED
    sim.tasks.loc[1, ["nFilesUsed", "nFilesFailed"]] = [2, 2]
    _do(sim, "retry")
    assert sim.tasks.at[1, "status"] == "ready" and sim.tasks.at[1, "nFilesFailed"] == 0
    assert sim.files.maxAttempt[fid].tolist() == [8, 8] and sim.retry_pool[1] == fid.tolist()


@pytest.mark.parametrize(
    ("status", "command"),
    [("done", "retry"), ("running", "resume"), ("done", "kill"), ("failed", "pause"), ("broken", "finish"),
     ("running", "retry"), ("aborted", "reassign"), ("failed", "retry"), ("aborted", "retry")],
)  # fmt: skip
def test_a_command_the_status_does_not_allow_is_refused_with_the_rule(status: str, command: str) -> None:
    """A command outside its allowed statuses is refused, naming the status and what it is allowed from (seed 003:
    "Tasks can be retried if they are in finished or exhausted state": not from done, failed or aborted)."""
    sim = _sim(status)
    with pytest.raises(CommandRefused, match=f"{command} is not allowed in status {status}"):
        _do(sim, command)
    assert sim.tasks.at[1, "status"] == status


def test_incexec_re_refines_a_done_task() -> None:
    """incexec from done: toincexec -> rerefine -> defined (the ContentsFeeder then readies it)."""
    sim = _sim("done")
    _do(sim, "incexec")
    assert [to for _, tid, _, to, _ in sim.task_causes if tid == 1] == ["toincexec", "rerefine", "defined"]


def test_command_specs_and_the_cli(tmp_path: Path) -> None:
    """--task-command HOURSh:TASK:COMMAND: a malformed one, an unknown command or task, or a time past the run exit 2;
    a valid one is applied at its time and listed in the run's output."""
    from tests.core.sim.test_engine import _snap

    assert parse_command("1.5h:7:pause") == TaskCommand(5400.0, 7, "pause")
    path = tmp_path / "g.json"
    _snap().to_json(path)
    base = ["simulate", "--snapshot", str(path), "--hours", "2", "--quiet"]
    for spec, words in (("x", "is not HOURSh:TASK:COMMAND"), ("1h:1:explode", "'explode' is not a task command"),
                        ("1h:99:pause", "task 99 is not a task of the grid"), ("3h:1:pause", "3h is not within")):  # fmt: skip
        r = CliRunner().invoke(main, [*base, "--task-command", spec])
        assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output, r.output
    out = tmp_path / "run.json"
    r = CliRunner().invoke(main, [*base, "--task-command", "1h:1:pause", "--out", str(out)])
    assert r.exit_code == 0 and "task command at 1 h: pause 1 applied" in r.output, r.output
    doc = json.loads(out.read_text())
    assert doc["commands"][0]["outcome"] == "applied" and "pause" in commands.COMMANDS
