"""Background jobs on threads of the server process, their state in a disk cache every server worker can read."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import diskcache

from app.state.lru import after_fork_in_child

log = logging.getLogger(__name__)

STATE_TTL_S = 3600  # a finished job's result is kept this long for late polls (and repeated edits)
MAX_THREADS = 4  # jobs running at once in one process; Admission decides which whole-grid run goes first
STALE_S = 600  # a "running" state not updated for this long belongs to a process that died

Report = Callable[[int, str], None]  # (percent, label); raises Cancelled once the job has been cancelled


@dataclass(frozen=True)
class JobState:
    """Where a job is: running (with its progress), done (with its result), failed, cancelled or unknown.

    Usage: ``state = jobs.poll(job_id); state.percent, state.label``
    """

    state: str
    percent: int = 0
    label: str = ""
    result: Any = None
    error: str = ""
    updated: float = 0.0

    @property
    def finished(self) -> bool:
        """No more polls are needed."""
        return self.state in ("done", "failed", "cancelled", "unknown")


class JobsBusy(RuntimeError):
    """This process already runs MAX_THREADS jobs."""


class Jobs:
    """Runs work on a thread of this process and keeps its progress and result under its id in a shared disk cache.

    A poll, a cancel or a second start of the same id can arrive at any server worker: they all read the disk
    cache. Starting an id that is running or done returns its state instead of running it again, so identical
    requests share one job. Unlike Dash's background callbacks, nothing is forked: the work uses this process's
    warm caches and its Dask client.
    Usage: ``jobs.start("grid:abc", lambda report: work(report)); jobs.poll("grid:abc").state``
    """

    def __init__(self, folder: Path, ttl_s: float = STATE_TTL_S, max_threads: int = MAX_THREADS) -> None:
        self.folder = folder
        self.ttl_s = ttl_s
        self.max_threads = max(1, max_threads)
        self._disk: diskcache.Cache | None = None
        self._lock = threading.Lock()
        self._threads: dict[str, threading.Thread] = {}
        after_fork_in_child(self._reset_in_child)

    def _reset_in_child(self) -> None:
        # a forked child (another background mechanism) owns none of the parent's threads, lock or handle
        self._lock = threading.Lock()
        self._threads = {}
        self._disk = None

    def disk(self) -> diskcache.Cache:
        """The shared store of job states (opened on first use)."""
        if self._disk is None:
            self._disk = diskcache.Cache(str(self.folder), size_limit=256 * 2**20)
        return self._disk

    def _write(self, job_id: str, state: JobState) -> None:
        self.disk().set(("job", job_id), state, expire=self.ttl_s)

    def poll(self, job_id: str) -> JobState:
        """The job's state; "unknown" for an id never started (or expired), "failed" for one whose process died."""
        state = self.disk().get(("job", job_id))
        if not isinstance(state, JobState):
            return JobState("unknown", error=f"no job {job_id!r} (it may have expired)")
        if state.state == "running" and time.time() - state.updated > STALE_S:
            return JobState("failed", error=f"the job stopped reporting {STALE_S // 60} minutes ago")
        return state

    def wait(self, job_id: str, timeout_s: float) -> JobState:
        """The job's state once it finishes or TIMEOUT_S passes, whichever is first (a job of another process is
        only polled). A short wait on the request that starts a job answers quick jobs without a poll round trip.

        Usage: ``state = jobs.wait(job_id, 0.8)``
        """
        thread = self._threads.get(job_id)
        if thread is not None and timeout_s > 0:
            thread.join(timeout_s)
        return self.poll(job_id)

    def cancel(self, job_id: str) -> None:
        """Ask the job to stop at its next progress report (any process may ask)."""
        self.disk().set(("cancel", job_id), True, expire=self.ttl_s)
        state = self.poll(job_id)
        if state.state == "running":
            self._write(job_id, JobState("cancelled", state.percent, "cancelled", updated=time.time()))

    def start(self, job_id: str, work: Callable[[Report], Any], restart_failed: bool = True) -> JobState:
        """Run WORK(report) on a thread unless JOB_ID is already running or done; return the job's state.

        A cancelled job is started afresh, a failed one too unless RESTART_FAILED is False (a job whose failure
        would repeat: asking again answers the failure). Raises JobsBusy when this process runs MAX_THREADS jobs.
        """
        with self._lock:
            state = self.poll(job_id)
            if state.state in ("running", "done") or (state.state == "failed" and not restart_failed):
                return state
            alive = {k: t for k, t in self._threads.items() if t.is_alive()}
            self._threads = alive
            if len(alive) >= self.max_threads:
                raise JobsBusy(f"{len(alive)} background jobs are running in this server process; try again shortly")
            self.disk().delete(("cancel", job_id))
            state = JobState("running", 0, "starting", updated=time.time())
            self._write(job_id, state)
            thread = threading.Thread(target=self._run, args=(job_id, work), name=f"job-{job_id}", daemon=True)
            self._threads[job_id] = thread
        thread.start()
        return state

    def _run(self, job_id: str, work: Callable[[Report], Any]) -> None:
        from brokerage.runs import Cancelled  # imports dask: only once a job runs

        def report(percent: int, label: str) -> None:
            if self.disk().get(("cancel", job_id)):
                raise Cancelled(f"job {job_id} cancelled")
            self._write(job_id, JobState("running", int(percent), label, updated=time.time()))

        try:
            result = work(report)
        except Cancelled:
            self._write(job_id, JobState("cancelled", 0, "cancelled", updated=time.time()))
            return
        except Exception as exc:
            log.exception("background job %s failed", job_id)
            self._write(job_id, JobState("failed", error=f"{type(exc).__name__}: {exc}", updated=time.time()))
            return
        if self.disk().get(("cancel", job_id)):
            return  # cancelled after its last report: the operator asked to drop it
        self._write(job_id, JobState("done", 100, "done", result=result, updated=time.time()))
