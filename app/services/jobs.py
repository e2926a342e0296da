"""The one job service: long work runs as a job on the Dask cluster; its state lives on the scheduler, so any server
process (gunicorn worker) starts, polls, cancels and reads it.

A job is a plain importable function ``fn(report, *args)`` submitted to the cluster under a fresh Dask key. On the
worker it leaves the worker's thread pool (``secede``: it mostly waits on its own chunks), waits for admission if it
asks for it, and reports ``(percent, label)``. Its state is kept in the scheduler's metadata under its key, which the
scheduler drops with the task; the job's future is published as the dataset ``brokerage-job:<job id>``, so a poll on
another server process finds it, and identical requests (same job id) share one job and its result.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.services.admission import JobsBusy, Limits, admitted, client_digest, client_jobs, waiting
from app.state.lru import Lru

log = logging.getLogger(__name__)

Report = Callable[[int, str], None]  # (percent, label); raises Cancelled once the job has been cancelled

DATASET = "brokerage-job:"  # + job id: the job's current future (or a "cancelled" tombstone), on the scheduler
KEY = "brokerage-job-"  # + uuid: a job attempt's Dask key; its state is the scheduler's metadata under that key
KEEP_S = 3600  # a finished job (and its result) is kept this long for late polls and repeated requests ...
MAX_KEPT = 64  # ... and at most this many finished jobs of the kinds that may be evicted early
TOMBSTONE_S = 600  # a cancelled job answers "cancelled" this long
PRUNE_EVERY_S = 30  # a server process looks for expired jobs at most this often (when it starts one)
STALE_S = 120  # a running job whose state has not moved for this long is checked against its Dask task
REPORT_EVERY_S = 0.2  # a job writes its progress to the scheduler at most this often
RESULT_TIMEOUT_S = 60  # fetching a finished job's result
WAIT_STEP_S = 0.02  # how often wait() looks at the job's future
PARTS_POLL_S = 0.25  # how often a job reads the progress of its parts
HELD = 128  # job futures a process keeps referenced (see Jobs._dataset)


@dataclass(frozen=True)
class JobState:
    """Where a job is: running (queued or working, with its progress), done (with its result), failed, cancelled or
    unknown.

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


class JobFailed(RuntimeError):
    """A job ended without a result (failed, cancelled or unknown); the message says why."""


# ---------------------------------------------------------------- the cluster jobs go to

_own: dict[str, Any] = {}
_own_lock = threading.Lock()
JOB_THREADS = 8  # job threads of the one-worker cluster used with BROKERAGE_DASK_WORKERS=0


def cluster_client() -> Any:
    """The client jobs go to: the process's run engine (DASK_SCHEDULER_ADDRESS, or the embedded cluster of worker
    processes); with BROKERAGE_DASK_WORKERS=0 (whole-grid runs in-process) a cluster of one worker process that
    runs the jobs, each of them in-process there.

    Usage: ``Jobs(cluster_client)``
    """
    from brokerage import runs

    if runs.scheduler_address() is not None or runs.local_workers() > 0:
        return runs.get_client()
    with _own_lock:
        client = _own.get("client")
        if client is None or client.status in ("closing", "closed"):
            from distributed import Client, LocalCluster

            # a process, not threads of this one: a client and a worker in one process mix up their futures
            cluster = LocalCluster(
                n_workers=1,
                threads_per_worker=JOB_THREADS,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                security=True,  # TLS under generated credentials: private to this process, as runs' embedded cluster
            )
            client = Client(cluster, set_as_default=False)
            _own.update(client=client, cluster=cluster)
        return client


def _close_threads() -> None:
    client, cluster = _own.pop("client", None), _own.pop("cluster", None)
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()


atexit.register(_close_threads)


# ---------------------------------------------------------------- the service


class Jobs:
    """Starts, polls, cancels and reads jobs on the cluster; every server process sees the same jobs.

    Usage: ``jobs.start("grid:abc", work.grid_whatif, snap_future, stored, config); jobs.poll("grid:abc").state``
    """

    def __init__(
        self,
        client: Callable[[], Any] = cluster_client,
        limits: Limits | None = None,
        keep_s: float = KEEP_S,
        max_kept: int = MAX_KEPT,
    ) -> None:
        self._client_fn = client
        self.limits = limits or Limits()
        self.keep_s, self.max_kept = keep_s, max_kept
        self._client: Any = None
        self._lock = threading.Lock()
        self._start_lock: Any = None
        self._pruned = 0.0
        self._held: Lru[Any] = Lru(HELD)

    def client(self) -> Any:
        """The cluster's client (connected, or the embedded cluster started, on first use)."""
        with self._lock:
            if self._client is None or self._client.status in ("closing", "closed"):
                self._client = self._client_fn()
                self._start_lock = None
            return self._client

    def _locked(self) -> Any:
        """The cluster-wide lock around starting and cancelling jobs (one lock object per process)."""
        client = self.client()
        with self._lock:
            if self._start_lock is None:
                from distributed import Lock

                self._start_lock = Lock("brokerage-jobs", scheduler_rpc=client.scheduler, loop=client.loop)
            return self._start_lock

    def snapshot(self, snap: Any) -> Any:
        """SNAP on the cluster (``brokerage.runs.snapshot_future``: sent once per snapshot version), the future to
        pass to a job; under the cluster-wide lock, so two server processes never race to publish it."""
        from brokerage import runs

        client = self.client()
        with self._locked():
            return runs.snapshot_future(client, snap)

    # ------------------------------------------------------------ start

    def start(
        self,
        job_id: str,
        fn: Callable[..., Any],
        *args: Any,
        admit: str | None = None,
        keep_s: float | None = None,
        evict: bool = True,
        restart_failed: bool = True,
    ) -> JobState:
        """Run ``FN(report, *ARGS)`` on the cluster as JOB_ID unless that job is queued, running or done; its state.

        ADMIT (the client's address) makes the job wait for a slot (Limits: total, per client) with its queue
        position as its label; a full queue raises JobsBusy at once. A cancelled job is started afresh, a failed one
        too unless RESTART_FAILED is False (a failure that would repeat). The job is kept KEEP_S after it finishes;
        EVICT False keeps it from being dropped early when many jobs finish.
        """
        client = self.client()
        lock = self._locked()
        with lock:
            state = self._poll(client, job_id)
            if state.state in ("running", "done") or (state.state == "failed" and not restart_failed):
                return state
            if admit is not None:
                self._check_quota(client, admit)
            key = f"{KEY}{uuid.uuid4().hex}"
            now = time.time()
            client.set_metadata([key], {"job": job_id, "state": "queued" if admit else "running", "percent": 0,
                                        "label": "waiting for a worker", "ticket": time.time_ns(), "updated": now,
                                        "keep": self.keep_s if keep_s is None else keep_s,
                                        "evict": evict, "client": client_digest(admit) if admit else None})  # fmt: skip
            fut = client.submit(run_job, fn, job_id, admit, self.limits, *args, key=key, pure=False)
            client.publish_dataset(fut, name=DATASET + job_id, override=True)
            self._held.put(job_id, fut)
        self._prune_now_and_then(client)
        return JobState("running", 0, "waiting for a worker", updated=now)

    def _check_quota(self, client: Any, admit: str) -> None:
        """Raise JobsBusy when ADMIT already has its share of long jobs, or the queue of all clients is full."""
        meta = client.get_metadata([], {})
        mine = client_jobs(meta, admit)
        if mine >= self.limits.max_per_client:
            raise JobsBusy(
                f"you already have {mine} long jobs queued or running (at most {self.limits.max_per_client}); "
                "wait for one to finish"
            )
        if len(waiting(meta)) >= self.limits.max_queued:
            raise JobsBusy(f"{self.limits.max_queued} long jobs are already waiting; try again in a minute")

    # ------------------------------------------------------------ poll, wait, result

    def poll(self, job_id: str) -> JobState:
        """The job's state; "unknown" for an id never started (or expired)."""
        return self._poll(self.client(), job_id)

    def _dataset(self, client: Any, job_id: str) -> Any:
        """The job's published future (or tombstone, or None), kept referenced by this process: a future released
        and asked for again at once by one client can come back with a lost state (seen with distributed 2026.8)."""
        held = client.get_dataset(DATASET + job_id, default=None)
        if held is None or isinstance(held, dict):
            self._held.discard(job_id)  # expired or cancelled: its result may go
        else:
            kept = self._held.peek(job_id)
            if kept is not None and kept.key == held.key:
                return kept
            self._held.put(job_id, held)
        return held

    def _poll(self, client: Any, job_id: str) -> JobState:
        held = self._dataset(client, job_id)
        if held is None:
            return JobState("unknown", error=f"no job {job_id!r} (it may have expired)")
        if isinstance(held, dict):  # a tombstone
            return JobState(str(held.get("state", "cancelled")), label=str(held.get("state", "")))
        meta = client.get_metadata([held.key], None)
        if not isinstance(meta, dict):
            return _from_future(held, "waiting for a worker")
        state = str(meta.get("state", "running"))
        if state == "done":
            try:
                result = held.result(timeout=RESULT_TIMEOUT_S)
            except Exception as exc:  # the result was lost with its worker and could not be recomputed
                return JobState("failed", error=f"{type(exc).__name__}: {exc}")
            return JobState("done", 100, "done", result=result, updated=float(meta.get("updated", 0)))
        if state == "failed":
            return JobState("failed", error=str(meta.get("error", "")), updated=float(meta.get("updated", 0)))
        updated = float(meta.get("updated", 0))
        if time.time() - updated > STALE_S:
            stale = _from_future(held, "")
            if stale.finished:
                return stale
        return JobState("running", int(meta.get("percent", 0)), str(meta.get("label", "")), updated=updated)

    def wait(self, job_id: str, timeout_s: float) -> JobState:
        """The job's state once it finishes or TIMEOUT_S passes, whichever is first.

        Usage: ``state = jobs.wait(job_id, 0.8)``
        """
        client = self.client()
        held = self._dataset(client, job_id)
        if held is not None and not isinstance(held, dict):
            end = time.monotonic() + timeout_s
            while not held.done() and time.monotonic() < end:  # the scheduler pushes the future's status
                time.sleep(WAIT_STEP_S)
        return self._poll(client, job_id)

    def result(self, job_id: str, timeout_s: float | None = None) -> Any:
        """The job's result once it is done (waits for it); the job's own exception if it failed, JobFailed if it
        was cancelled or is unknown.

        Usage: ``run = jobs.result(job_id)``
        """
        client = self.client()
        held = self._dataset(client, job_id)
        if held is not None and not isinstance(held, dict):
            try:
                return held.result(timeout=timeout_s)
            except Exception as exc:
                if type(exc).__name__ in ("CancelledError", "FutureCancelledError"):
                    raise JobFailed(f"job {job_id!r} was cancelled") from exc
                raise
        state = self._poll(client, job_id)
        raise JobFailed(state.error or f"job {job_id!r} is {state.state}")

    # ------------------------------------------------------------ cancel and expiry

    def cancel(self, job_id: str) -> None:
        """Cancel the job: its Dask task is cancelled (the job stops at its next progress report, and its own
        chunks on the cluster with it); polls answer "cancelled" for a while."""
        client = self.client()
        with self._locked():
            held = self._dataset(client, job_id)
            if held is None or isinstance(held, dict):
                return
            # the tombstone first: a dataset must never point at a forgotten key (it would look pending forever)
            client.publish_dataset({"state": "cancelled", "at": time.time()}, name=DATASET + job_id, override=True)
            client.cancel([held], force=True)

    def _prune_now_and_then(self, client: Any) -> None:
        now = time.time()
        if now - self._pruned < PRUNE_EVERY_S:
            return
        self._pruned = now
        try:
            self.prune(client)
        except Exception:  # expiry must never break a start
            log.warning("pruning finished jobs failed", exc_info=True)

    def prune(self, client: Any = None) -> int:
        """Drop finished jobs kept longer than their keep time, the oldest evictable ones beyond MAX_KEPT, and old
        tombstones; the number of jobs dropped."""
        client = client or self.client()
        now = time.time()
        meta = client.get_metadata([], {})
        finished = sorted(
            ((float(v.get("updated", 0)), k, v) for k, v in meta.items()
             if str(k).startswith(KEY) and isinstance(v, dict) and v.get("state") in ("done", "failed")),
            reverse=True,
        )  # fmt: skip
        victims = []
        evictable = 0
        for updated, key, v in finished:
            if v.get("evict", True):
                evictable += 1
            if now - updated > float(v.get("keep", self.keep_s)) or (
                v.get("evict", True) and evictable > self.max_kept
            ):
                victims.append((key, str(v.get("job"))))
        live = {str(v.get("job")) for _, _, v in finished}
        dropped = 0
        with self._locked():
            for key, job_id in victims:
                held = client.get_dataset(DATASET + job_id, default=None)
                if held is not None and not isinstance(held, dict) and held.key == key:
                    client.unpublish_dataset(DATASET + job_id)
                    self._held.discard(job_id)
                    dropped += 1
            for name in client.list_datasets():
                if str(name).startswith(DATASET) and str(name)[len(DATASET) :] not in live:
                    held = client.get_dataset(name, default=None)
                    if isinstance(held, dict) and now - float(held.get("at", 0)) > TOMBSTONE_S:
                        client.unpublish_dataset(name)
        return dropped


def _from_future(held: Any, label: str) -> JobState:
    """A job's state read from its future alone (it has not written any yet, or stopped writing)."""
    status = held.status
    if status == "error":
        exc = held.exception(timeout=RESULT_TIMEOUT_S)
        return JobState("failed", error=f"{type(exc).__name__}: {exc}")
    if status in ("cancelled", "lost"):
        return JobState("cancelled" if status == "cancelled" else "failed", error=f"the job's task is {status}")
    if status == "finished":
        return JobState("done", 100, "done", result=held.result(timeout=RESULT_TIMEOUT_S))
    return JobState("running", 0, label)


# ---------------------------------------------------------------- the worker side


class _Reporter:
    """A job's progress as seen from its worker: written to the scheduler (throttled), and the place where a
    cancelled job notices it (its task is no longer executing on this worker)."""

    def __init__(self, job_id: str) -> None:
        from distributed import get_client, get_worker

        self.worker = get_worker()
        self.client = get_client()
        self.key = self.worker.get_current_task()
        self.job_id = job_id
        got = self.client.get_metadata([self.key], None)
        self.meta: dict[str, Any] = dict(got) if isinstance(got, dict) else {"job": job_id}
        self._last = 0.0

    def cancelled(self) -> bool:
        """Whether this job's task was cancelled (or forgotten) on the scheduler."""
        ts = self.worker.state.tasks.get(self.key)
        return ts is None or ts.state not in ("executing", "long-running")

    def check(self) -> None:
        """Raise Cancelled when the job was cancelled."""
        if self.cancelled():
            from brokerage.runs import Cancelled

            raise Cancelled(f"job {self.job_id} cancelled")

    def write(self, **fields: Any) -> None:
        """Write FIELDS of the job's state to the scheduler (unless the job was cancelled meanwhile)."""
        self.meta.update(fields, updated=time.time())
        if not self.cancelled():
            self.client.set_metadata([self.key], self.meta)

    def __call__(self, percent: int, label: str) -> None:
        self.check()
        now = time.monotonic()
        if (int(percent), label) != (self.meta.get("percent"), self.meta.get("label")) and (
            now - self._last >= REPORT_EVERY_S or percent >= 100
        ):
            self._last = now
            self.write(state="running", percent=int(percent), label=label)


def _use_this_cluster(worker: Any) -> None:
    """Point the core's run engine in this worker process at the cluster it belongs to (once per process), so a
    whole-grid run inside a job fans out over the same cluster instead of starting a cluster of its own (with
    BROKERAGE_DASK_WORKERS=0 in its environment its runs stay in-process)."""
    from brokerage import runs

    if runs.scheduler_address() is None and runs.local_workers() > 0 and runs.running_client() is None:
        with contextlib.suppress(RuntimeError):  # another job of this process configured it meanwhile
            runs.configure(address=worker.scheduler.address, security=worker.security)


def run_job(fn: Callable[..., Any], job_id: str, admit: str | None, limits: Limits, *args: Any) -> Any:
    """Worker side of a job: leave the thread pool, wait for admission, run ``FN(report, *ARGS)``, record the end.

    Usage: (by Jobs.start) ``client.submit(run_job, fn, job_id, admit, limits, *args, key=key, pure=False)``
    """
    from distributed import secede

    from brokerage.runs import Cancelled

    secede()  # a job mostly waits for its chunks: it must not hold one of the worker's threads meanwhile
    report = _Reporter(job_id)
    _use_this_cluster(report.worker)
    try:
        if admit is None:
            report.write(state="running", label="starting")
            result = fn(report, *args)
        else:
            with admitted(report, admit, limits):
                result = fn(report, *args)
    except Cancelled:
        raise
    except BaseException as exc:
        if not report.cancelled():
            log.info("job %s failed: %s: %s", job_id, type(exc).__name__, exc)
            report.write(state="failed", error=f"{type(exc).__name__}: {exc}")
        raise
    report.write(state="done", percent=100, label="done")
    return result


def run_part(fn: Callable[..., Any], part_id: str, *args: Any) -> Any:
    """Worker side of one part of a job (e.g. one simulated config): ``FN(report, *ARGS)`` on one of the worker's
    threads (CPU-bound: it keeps its slot), with its progress under its key and a cancel that stops it at its next
    progress report. Parts are submitted and gathered by their job (``run_parts``), never published.
    """
    report = _Reporter(part_id)
    return fn(report, *args)


def run_parts(
    report: Report, fn: Callable[..., Any], argsets: list[tuple[Any, ...]], label: Callable[[int], str]
) -> list[Any]:
    """From inside a job: ``FN(report, *args)`` for each of ARGSETS as a task of its own on the cluster; REPORT
    shows their mean progress (LABEL(percent) says it); a cancelled job cancels its parts, which stop at their next
    progress report (a long simulation does not run on after a Cancel). The results in ARGSETS' order.

    Usage: ``run_parts(report, one_run, [(snap_future, stored), (snap_future, whatif)], lambda p: f"{p} %")``
    """
    from distributed import get_client

    client = get_client()
    futures = [
        client.submit(run_part, fn, f"part-{i}", *args, key=f"{KEY}part-{uuid.uuid4().hex}", pure=False)
        for i, args in enumerate(argsets)
    ]
    try:
        while not all(f.done() for f in futures):
            done = [100 if f.done() else _percent(client.get_metadata([f.key], None)) for f in futures]
            mean = sum(done) // max(len(done), 1)
            report(mean, label(mean))
            time.sleep(PARTS_POLL_S)
        return list(client.gather(futures))
    except BaseException:
        client.cancel(futures, force=True)
        raise


def _percent(meta: Any) -> int:
    return int(meta.get("percent", 0)) if isinstance(meta, dict) else 0
