"""The one job service on Dask: progress, result, failure, cancel (which stops the cluster's work), shared state
between server processes, admission with queue positions, expiry; and no fork machinery left in the app."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.services.admission import Limits
from app.services.jobs import JobFailed, Jobs, JobsBusy, JobState
from tests.app import jobfns

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A LocalCluster of two worker processes (one thread each), as the app's embedded cluster is."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as c:
        yield c


def _service(cluster: Any, **kw: Any) -> tuple[Jobs, Any]:
    from distributed import Client

    client = Client(cluster.scheduler_address, set_as_default=False)
    return Jobs(lambda: client, **kw), client


@pytest.fixture
def two(cluster: Any) -> Iterator[tuple[Jobs, Jobs]]:
    """Two job services with a client each: what two gunicorn workers are."""
    (a, ca), (b, cb) = _service(cluster), _service(cluster)
    yield a, b
    ca.close()
    cb.close()


def _id() -> str:
    return f"test:{uuid.uuid4().hex[:8]}"


def _until(check: Any, timeout: float = 20.0, step: float = 0.05) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        time.sleep(step)
    raise AssertionError("timed out")


def test_a_job_reports_progress_and_its_result_to_any_process(two: tuple[Jobs, Jobs], tmp_path: Path) -> None:
    """A job started by one server process shows its progress and result to another; asking again joins it."""
    a, b = two
    job, log = _id(), tmp_path / "log"
    assert a.start(job, jobfns.slow, 30, 0.05, str(log)).state == "running"
    seen = _until(lambda: (s := b.poll(job)).percent > 0 and s)
    assert seen.state == "running" and re.fullmatch(r"\d+ / 30", seen.label)
    assert b.start(job, jobfns.slow, 30, 0.05, str(log)).state == "running"  # joins, does not run it again
    done = b.wait(job, 20)
    assert (done.state, done.result, done.percent) == ("done", {"n": 30}, 100)
    assert a.start(job, jobfns.slow, 30, 0.05, str(log)).result == {"n": 30}
    assert log.read_text().count("start") == 1


def test_a_failed_job_says_why_and_can_start_again(two: tuple[Jobs, Jobs]) -> None:
    """A job that raises is 'failed' with the error's type and message; result() raises that error; starting it
    again runs it afresh."""
    a, b = two
    job = _id()
    a.start(job, jobfns.broken)
    state = b.wait(job, 20)
    assert state.state == "failed" and state.error == "ValueError: NQUEUED_SAT_CAP must be >= 0"
    with pytest.raises(ValueError, match="NQUEUED_SAT_CAP"):
        b.result(job)
    b.start(job, jobfns.slow, 2, 0.01)
    assert a.wait(job, 20).result == {"n": 2}


def test_cancel_stops_the_work_on_the_cluster(two: tuple[Jobs, Jobs], tmp_path: Path, snap: Any) -> None:
    """Cancelling a job (from another server process) cancels its own chunks on the cluster: no chunk runs or
    finishes afterwards, and polls say 'cancelled'."""
    from brokerage.runs import snapshot_future

    a, b = two
    job, marks = _id(), str(tmp_path / "marks")
    a.start(job, jobfns.fan_out, snapshot_future(a.client(), snap), marks, 400, 0.5)
    _until(lambda: jobfns.chunks_done(marks) >= 1)
    b.cancel(job)
    at_cancel = jobfns.chunks_done(marks)
    assert a.poll(job).state == "cancelled" and b.poll(job).finished
    client = a.client()
    _until(lambda: not any(client.processing().values()), timeout=10)
    time.sleep(1.0)  # a chunk already running when the job was cancelled ends (Python code cannot be interrupted)
    stopped = jobfns.chunks_done(marks)
    # the job notices at its next progress report (a chunk ending); meanwhile each worker may end one chunk and
    # start another: at most four more of the 16 chunks (400 items) end
    assert stopped <= at_cancel + 4 < 16
    time.sleep(1.5)
    assert jobfns.chunks_done(marks) == stopped and not any(client.processing().values())


def test_cancel_stops_a_jobs_long_parts(two: tuple[Jobs, Jobs], tmp_path: Path) -> None:
    """A job whose parts run for a long time each (simulations of 20 s here): Cancel stops the parts themselves at
    their next progress report, not only the job that waits for them."""
    a, b = two
    job, log = _id(), tmp_path / "parts"
    a.start(job, jobfns.with_parts, str(log))
    _until(lambda: b.poll(job).percent >= 2)
    b.cancel(job)
    t0 = time.monotonic()
    _until(lambda: log.read_text().count("end") == 2, timeout=10)
    assert time.monotonic() - t0 < 5 and a.poll(job).state == "cancelled"


def test_unknown_jobs_and_results(two: tuple[Jobs, Jobs]) -> None:
    """A job id never started polls as 'unknown'; asking for its result raises JobFailed."""
    a, _ = two
    assert a.poll("never:started").state == "unknown"
    with pytest.raises(JobFailed, match="no job"):
        a.result("never:started")


def test_wait_answers_a_quick_job_and_bounds_a_slow_one(two: tuple[Jobs, Jobs]) -> None:
    """wait() returns a job that finishes within it as done, and one that does not as running after about the wait
    (the request that starts a what-if answers quick runs without a poll)."""
    a, _ = two
    quick, slow = _id(), _id()
    a.start(quick, jobfns.slow, 1, 0.0)
    assert a.wait(quick, 10).result == {"n": 1}
    a.start(slow, jobfns.slow, 100, 0.05)
    t0 = time.perf_counter()
    state = a.wait(slow, 0.3)
    assert state.state == "running" and 0.25 < time.perf_counter() - t0 < 2.0
    a.cancel(slow)


def _overlaps(logs: list[Path]) -> tuple[int, int]:
    """(most jobs running at once over all LOGS, most at once within one log)."""
    spans = {}
    for log in logs:
        lines = [line.split() for line in log.read_text().splitlines()]
        starts = [float(t) for k, t in lines if k == "start"]
        ends = [float(t) for k, t in lines if k == "end"]
        spans[log] = list(zip(sorted(starts), sorted(ends), strict=True))

    def peak(intervals: list[tuple[float, float]]) -> int:
        events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
        now = best = 0
        for _, d in events:
            now += d
            best = max(best, now)
        return best

    return peak([i for v in spans.values() for i in v]), max(peak(v) for v in spans.values())


def test_admission_caps_jobs_in_total_and_per_client_and_shows_positions(cluster: Any, tmp_path: Path) -> None:
    """Six admitted jobs from three clients never run more than two at once nor two of one client; waiting ones
    show their place in the queue, and all finish."""
    jobs, client = _service(cluster, limits=Limits(total=2, per_client=1, max_queued=16))
    try:
        logs = [tmp_path / f"client{i}" for i in range(3)]
        ids = [_id() for _ in range(6)]
        for i, job in enumerate(ids):
            jobs.start(job, jobfns.slow, 8, 0.05, str(logs[i % 3]), admit=f"10.0.0.{i % 3}")
        labels: set[str] = set()
        end = time.monotonic() + 60
        while time.monotonic() < end and not all(jobs.poll(j).finished for j in ids):
            labels |= {s.label for s in (jobs.poll(j) for j in ids)}
            time.sleep(0.05)
        assert [jobs.poll(j).state for j in ids] == ["done"] * 6
        assert any(x.startswith("queued: ") and "ahead" in x for x in labels), labels
        assert any("your other long job runs first" in x for x in labels), labels
        total, per_client = _overlaps(logs)
        assert total == 2 and per_client == 1
    finally:
        client.close()


def test_a_full_queue_refuses_at_once(cluster: Any) -> None:
    """With the slot busy and the queue full, one more admitted job is refused with a message instead of waiting."""
    jobs, client = _service(cluster, limits=Limits(total=1, per_client=1, max_queued=1))
    busy, waiting = _id(), _id()
    try:
        jobs.start(busy, jobfns.slow, 200, 0.05, admit="c1")
        _until(lambda: jobs.poll(busy).percent > 0)
        jobs.start(waiting, jobfns.slow, 1, 0.0, admit="c2")
        _until(lambda: jobs.poll(waiting).label.startswith("queued"))
        with pytest.raises(JobsBusy, match="try again"):
            jobs.start(_id(), jobfns.slow, 1, 0.0, admit="c3")
        jobs.cancel(busy)
        assert jobs.wait(waiting, 20).state == "done"  # the slot of a cancelled job is free again
    finally:
        client.close()


def test_finished_jobs_expire(cluster: Any) -> None:
    """A finished job is dropped once its keep time is over; polls then answer 'unknown'."""
    # a keep time of 0 would let start's own pruning drop a job that finished before start returned
    jobs, client = _service(cluster, keep_s=1.0)
    try:
        job = _id()
        jobs.start(job, jobfns.slow, 1, 0.0)
        assert jobs.wait(job, 10).state == "done"
        time.sleep(1.1)
        assert jobs.prune() >= 1
        assert jobs.poll(job).state == "unknown"
    finally:
        client.close()


def test_job_state_is_finished_only_at_the_end() -> None:
    """Running needs more polls; done, failed, cancelled and unknown do not."""
    assert not JobState("running").finished
    assert all(JobState(s).finished for s in ("done", "failed", "cancelled", "unknown"))


def test_no_fork_machinery_in_the_app() -> None:
    """The app forks nothing by hand and has no fork repair: no register_at_fork, gc.freeze, DiskcacheManager, fcntl,
    Dash background callbacks or diskcache anywhere under app/ (gunicorn.conf.py included)."""
    banned = re.compile(r"register_at_fork|gc\.freeze|DiskcacheManager|CeleryManager|\bfcntl\b|background=True|"
                        r"\bdiskcache\b|os\.fork\b")  # fmt: skip
    found = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in [*(ROOT / "app").rglob("*.py"), ROOT / "gunicorn.conf.py"]
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if banned.search(line)
    ]
    assert found == []


def _as_trigger(prop_id: str, fn: Any, *args: Any) -> Any:
    """Call the callback FN as Dash does when PROP_ID fired."""
    from contextvars import copy_context

    from dash._callback_context import context_value
    from dash._utils import AttributeDict

    def run() -> Any:
        context_value.set(AttributeDict(triggered_inputs=[{"prop_id": prop_id, "value": 1}]))
        return fn(*args)

    return copy_context().run(run)


def test_a_failed_what_if_shows_its_error_on_the_page(app_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tuning page's whole-grid job that fails ends its polling with an inline error naming the error type and
    message, never a traceback."""
    from app import ids
    from app.callbacks.tuning import drive_grid_job
    from app.services import work

    monkeypatch.setattr(work, "grid_whatif", jobfns.broken_whatif)
    raw = {"NQUEUED_SAT_CAP": 311}
    out = _as_trigger(f"{ids.TUNE_GRID_TRIGGER}.data", drive_grid_job, raw, None, None, None)
    end = time.monotonic() + 30
    while out[1] is not None and time.monotonic() < end:  # out[1]: the job id while it runs
        time.sleep(0.1)
        out = _as_trigger(f"{ids.TUNE_GRID_POLL}.n_intervals", drive_grid_job, raw, 1, None, out[1])
    text = str(out[0].to_plotly_json())
    assert out[2] is True and "Whole-grid what-if failed" in text
    assert "ValueError: the grid could not be re-brokered: NQUEUED_SAT_CAP 311 broke it" in text


def test_one_client_cannot_take_every_job_slot(cluster: Any) -> None:
    """A client with 3 long jobs queued or running (Limits.max_per_client) has its 4th refused with JobsBusy and a
    Retry-After; another client's job is still taken and runs."""
    jobs, client = _service(cluster, limits=Limits(total=2, per_client=1, max_queued=16, max_per_client=3))
    mine = [_id() for _ in range(3)]
    try:
        for job in mine:
            jobs.start(job, jobfns.slow, 200, 0.05, admit="10.0.0.66")
        with pytest.raises(JobsBusy, match="you already have 3 long jobs") as err:
            jobs.start(_id(), jobfns.slow, 1, 0.0, admit="10.0.0.66")
        assert err.value.retry_after_s > 0
        other = _id()
        jobs.start(other, jobfns.slow, 1, 0.0, admit="10.0.0.77")
        assert jobs.wait(other, 30).state == "done"
    finally:
        for job in mine:
            jobs.cancel(job)
        client.close()
