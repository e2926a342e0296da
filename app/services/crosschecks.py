"""PanDA 1.0.4's own brokers on one task of the current grid, for the task page: a job, its result cached."""

from __future__ import annotations

import threading
from typing import Any

from app.services.jobs import Jobs, JobState, Report
from app.state import AppState
from app.state.lru import Lru
from app.viewmodels import pandacheck as vm
from brokerage.crosscheck.panda import PandaMissing
from brokerage.crosscheck.single import crosscheck_task, panda_missing
from brokerage.model import views
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import PROFILE_KEY
from brokerage.model.snapshot import GridSnapshot

CACHE_SIZE = 512  # finished task crosschecks a server process keeps (a summarised result is a few KB)
JOB_KEEP_S = 3600  # a finished crosscheck job is kept this long on the cluster (another process may poll it)
PANDA_AT_ONCE = 2  # PanDA subprocesses one worker process runs at once; more tasks wait their turn
WAIT_STEP_S = 0.25  # how often a waiting check looks for a free PanDA slot (and notices a cancel)
JOB_PREFIX = "xcheck:"
WAITING = "waiting for a free PanDA process"

_panda_slots = threading.BoundedSemaphore(PANDA_AT_ONCE)

Key = tuple[str, int, str]  # (snapshot key, task id, config fingerprint)


def task_crosscheck(report: Report, snap: GridSnapshot, config: Config, task_id: int) -> dict[str, Any]:
    """Job function: the task's crosscheck (``brokerage.crosscheck.single``) as plain JSON, only its differing rows
    kept (``pandacheck.summarised``), with the stored config's own rule profile (``stored_profile``); at most
    PANDA_AT_ONCE PanDA subprocesses per worker process.

    Usage: (by Crosschecks.start) ``jobs.start(job_id, task_crosscheck, snap_future, config, 4242)``
    """
    if not _panda_slots.acquire(blocking=False):
        while not _panda_slots.acquire(timeout=WAIT_STEP_S):
            report(1, WAITING)  # raises Cancelled once the job was cancelled
    try:
        report(10, "comparing")
        check = crosscheck_task(snap, int(task_id), config).to_dict()
        return vm.summarised({**check, "stored_profile": config[PROFILE_KEY]})
    finally:
        _panda_slots.release()


class Crosschecks:
    """Starts, polls and caches the crosscheck of one task of the current grid under the stored gdpconfig; the
    finished results live in a bounded LRU keyed by (snapshot key, task id, config fingerprint).

    Usage: ``job_id, state = crosschecks.start(4242)``, later ``crosschecks.poll(job_id).result["identical"]``
    """

    def __init__(self, state: AppState, jobs: Jobs, size: int = CACHE_SIZE) -> None:
        self.state = state
        self.jobs = jobs
        self.results: Lru[dict[str, Any]] = Lru(size)

    def missing(self) -> str | None:
        """The sentence saying PanDA's source is not set up and how to get it, or None when it is."""
        return panda_missing()

    def key(self, task_id: int) -> Key:
        """The cache key of TASK_ID's crosscheck on the current grid and stored config."""
        snap_key, fingerprint = self.state.keys()
        return snap_key, int(task_id), fingerprint

    @staticmethod
    def job_id(key: Key) -> str:
        """The job id of a cache key: identical requests (any server process) share one job."""
        snap_key, task_id, fingerprint = key
        return f"{JOB_PREFIX}{snap_key}:{task_id}:{fingerprint}"

    @staticmethod
    def key_of(job_id: str) -> Key | None:
        """The cache key a job id names, or None for another kind of job."""
        if not job_id.startswith(JOB_PREFIX):
            return None
        snap_key, task_id, fingerprint = job_id[len(JOB_PREFIX) :].rsplit(":", 2)
        return snap_key, int(task_id), fingerprint

    def start(self, task_id: int) -> tuple[str, JobState]:
        """The cached result of TASK_ID's crosscheck (state done), or start (or join) its job. Raises PandaMissing
        (saying how to get PanDA) and UnknownIdError (an unknown task) before any job starts.

        Usage: ``job_id, state = crosschecks.start(4242)``
        """
        key = self.key(task_id)
        job_id = self.job_id(key)
        cached = self.results.peek(key)
        if cached is not None:
            return job_id, JobState("done", 100, "done", result=cached)
        if (why := self.missing()) is not None:
            raise PandaMissing(why)
        views.task_row(self.state.grid_cache(), int(task_id))  # an unknown task is refused here, before any job
        src = self.state.source()
        snap_future = self.jobs.snapshot(src.snap)
        state = self.jobs.start(job_id, task_crosscheck, snap_future, src.config, int(task_id), keep_s=JOB_KEEP_S)
        return job_id, self._keep(job_id, state)

    def poll(self, job_id: str) -> JobState:
        """The job's state; a finished result goes into the cache."""
        return self._keep(job_id, self.jobs.poll(job_id))

    def cancel(self, job_id: str) -> None:
        """Cancel the job (its PanDA subprocess runs to its end, its result is dropped)."""
        self.jobs.cancel(job_id)

    def _keep(self, job_id: str, state: JobState) -> JobState:
        key = self.key_of(job_id)
        if state.state == "done" and key is not None and isinstance(state.result, dict):
            self.results.put(key, state.result)
        return state
