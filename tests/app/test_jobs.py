"""Background jobs on server threads: progress, shared identical jobs, cancel, failure, busy, stale states."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from app.services import jobs as jobs_module
from app.services.jobs import Jobs, JobsBusy, JobState


def _wait(jobs: Jobs, job_id: str, timeout: float = 10.0) -> JobState:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        state = jobs.poll(job_id)
        if state.finished:
            return state
        time.sleep(0.01)
    raise AssertionError(f"job {job_id} did not finish: {jobs.poll(job_id)}")


def test_a_job_reports_progress_then_its_result(tmp_path: Path) -> None:
    """A running job shows its last progress report; once done, its result."""
    jobs = Jobs(tmp_path)
    gate = threading.Event()

    def work(report):
        report(40, "2 / 5")
        gate.wait(5)
        return {"answer": 42}

    assert jobs.start("a", work).state == "running"
    for _ in range(500):
        if jobs.poll("a").label == "2 / 5":
            break
        time.sleep(0.01)
    assert (jobs.poll("a").state, jobs.poll("a").percent) == ("running", 40)
    gate.set()
    state = _wait(jobs, "a")
    assert (state.state, state.result) == ("done", {"answer": 42})


def test_identical_starts_share_one_job(tmp_path: Path) -> None:
    """Starting an id that is running or done returns its state; the work runs once."""
    jobs = Jobs(tmp_path)
    calls = []
    gate = threading.Event()

    def work(report):
        calls.append(1)
        gate.wait(5)
        return "x"

    jobs.start("same", work)
    assert jobs.start("same", work).state == "running"
    gate.set()
    _wait(jobs, "same")
    assert jobs.start("same", work).result == "x"
    assert len(calls) == 1


def test_a_second_process_sees_the_state(tmp_path: Path) -> None:
    """Any server worker reads a job's state: a second Jobs on the same folder polls the first one's job."""
    Jobs(tmp_path).start("shared", lambda report: "done elsewhere")
    other = Jobs(tmp_path)
    assert _wait(other, "shared").result == "done elsewhere"


def test_cancel_stops_the_job_at_its_next_report(tmp_path: Path) -> None:
    """A cancelled job stops at its next progress report and never stores a result."""
    jobs = Jobs(tmp_path)
    reached = []

    def work(report):
        for i in range(1000):
            report(i // 10, f"{i}")
            reached.append(i)
            time.sleep(0.002)
        return "finished"

    jobs.start("c", work)
    time.sleep(0.05)
    jobs.cancel("c")
    state = _wait(jobs, "c")
    assert state.state == "cancelled" and state.result is None
    assert len(reached) < 1000


def test_a_failed_job_says_why_and_can_start_again(tmp_path: Path) -> None:
    """A job that raises is 'failed' with the error's type and message; starting it again runs it afresh."""
    jobs = Jobs(tmp_path)

    def broken(report):
        raise ValueError("NQUEUED_SAT_CAP must be >= 0")

    jobs.start("f", broken)
    state = _wait(jobs, "f")
    assert state.state == "failed"
    assert state.error == "ValueError: NQUEUED_SAT_CAP must be >= 0"
    jobs.start("f", lambda report: "ok now")
    assert _wait(jobs, "f").result == "ok now"


def test_unknown_and_busy(tmp_path: Path) -> None:
    """An id never started polls as 'unknown'; beyond max_threads running jobs a start is refused."""
    jobs = Jobs(tmp_path, max_threads=1)
    assert jobs.poll("nope").state == "unknown"
    gate = threading.Event()
    jobs.start("one", lambda report: gate.wait(5))
    with pytest.raises(JobsBusy, match="1 background jobs"):
        jobs.start("two", lambda report: None)
    gate.set()
    _wait(jobs, "one")


def test_a_running_state_nobody_updates_is_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 'running' state not updated for STALE_S belongs to a dead process and polls as failed."""
    jobs = Jobs(tmp_path)
    jobs._write("dead", JobState("running", 10, "1 / 9", updated=time.time() - jobs_module.STALE_S - 1))
    state = jobs.poll("dead")
    assert state.state == "failed" and "stopped reporting" in state.error


def test_wait_answers_a_quick_job_and_bounds_a_slow_one(tmp_path: Path) -> None:
    """Jobs.wait returns a job that finishes within the wait as done, and one that does not as running, after about
    the wait (the request that starts the grid job answers quick runs without a poll)."""
    jobs = Jobs(tmp_path)
    jobs.start("quick", lambda report: 7)
    assert jobs.wait("quick", 5.0).result == 7
    release = threading.Event()
    jobs.start("slow", lambda report: release.wait(10) and 1)
    t0 = time.perf_counter()
    state = jobs.wait("slow", 0.2)
    assert state.state == "running" and 0.15 < time.perf_counter() - t0 < 2.0
    release.set()
    assert jobs.wait("slow", 5.0).state == "done"
