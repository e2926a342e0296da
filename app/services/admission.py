"""Admission of long jobs, kept on the Dask scheduler: at most TOTAL at once and PER_CLIENT per client address; the
others wait first come, first served, each showing its place in the queue; beyond MAX_QUEUED a job is refused."""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from brokerage.model.words import count

TOTAL_RUNS = int(os.environ.get("BROKERAGE_GRID_RUNS", "2"))  # admitted jobs at once, all clients together
PER_CLIENT_RUNS = 1  # admitted jobs at once for one client address
MAX_QUEUED = 16  # jobs allowed to wait; beyond this a job is refused at once
MAX_PER_CLIENT = 3  # one client address's long jobs queued or running at once; beyond this its new job is refused
RETRY_AFTER_S = 30  # what a refused client is told to wait (HTTP Retry-After)
POLL_S = 0.2  # how often a waiting job looks at the queue (and shows it is alive)
LIVE_S = 10.0  # a waiting job that has not shown itself for this long is gone (its worker died)
KEY = "brokerage-job-"  # Dask key prefix of jobs (app.services.jobs.KEY)


class JobsBusy(RuntimeError):
    """Too many admitted jobs are already waiting (in all, or of this client); try again after RETRY_AFTER_S.

    Usage: ``raise JobsBusy("16 long jobs are already waiting")``
    """

    def __init__(self, message: str, retry_after_s: int = RETRY_AFTER_S) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class Limits:
    """How many admitted jobs run at once (in total, per client address) and how many may wait."""

    total: int = TOTAL_RUNS
    per_client: int = PER_CLIENT_RUNS
    max_queued: int = MAX_QUEUED
    max_per_client: int = MAX_PER_CLIENT

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_per_client", max(1, int(self.max_per_client)))
        object.__setattr__(self, "total", max(1, int(self.total)))
        object.__setattr__(self, "per_client", max(1, int(self.per_client)))
        object.__setattr__(self, "max_queued", max(0, int(self.max_queued)))


class Waiter(Protocol):
    """What admission needs of a job: its key, a scheduler client, a cancel check and a way to show its state."""

    key: str
    client: Any
    meta: dict[str, Any]

    def check(self) -> None: ...

    def write(self, **fields: Any) -> None: ...


def waiting(meta: dict[Any, Any], now: float | None = None) -> list[tuple[int, str]]:
    """(ticket, key) of every job waiting for admission, first come first, from the scheduler's job metadata."""
    now = time.time() if now is None else now
    return sorted(
        (int(v.get("ticket", 0)), str(k)) for k, v in meta.items()
        if str(k).startswith(KEY) and isinstance(v, dict) and v.get("state") == "queued"
        and now - float(v.get("updated", 0)) < LIVE_S
    )  # fmt: skip


def client_jobs(meta: dict[Any, Any], client: str, now: float | None = None) -> int:
    """Jobs of CLIENT (an address) still queued or running, from the scheduler's job metadata."""
    now = time.time() if now is None else now
    mine = client_digest(client)
    return sum(
        1 for k, v in meta.items()
        if str(k).startswith(KEY) and isinstance(v, dict) and v.get("client") == mine
        and v.get("state") in ("queued", "running") and now - float(v.get("updated", 0)) < LIVE_S
    )  # fmt: skip


def client_digest(client: str) -> str:
    """The name a client address goes by in the cluster's metadata (addresses are not kept)."""
    return _digest(client)


def queued_count(client: Any) -> int:
    """Jobs waiting for admission on CLIENT's cluster."""
    return len(waiting(client.get_metadata([], {})))


_semaphores: dict[str, Any] = {}  # one object per name and process: each keeps a lease-refresh callback running
_lock = threading.Lock()


def _semaphore(name: str, leases: int) -> Any:
    from distributed import Semaphore

    with _lock:
        sem = _semaphores.get(name)
        if sem is None:
            sem = _semaphores[name] = Semaphore(max_leases=leases, name=name)
        return sem


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "backslashreplace")).hexdigest()[:16]


@contextlib.contextmanager
def admitted(job: Waiter, client: str, limits: Limits) -> Iterator[None]:
    """Hold one of the cluster's slots and one of CLIENT's while the block runs; wait in turn for them, showing the
    position. Raises JobsBusy when the queue is too long, Cancelled (from JOB.check) when the job is cancelled.

    Usage: ``with admitted(report, "10.0.0.7", Limits()): work()``
    """
    # the limits are part of the names: a semaphore keeps the size it was first made with on the scheduler
    total = _semaphore(f"brokerage-jobs-total-{limits.total}", limits.total)
    mine = _semaphore(f"brokerage-jobs-client-{limits.per_client}-{_digest(client)}", limits.per_client)
    ticket = int(job.meta.get("ticket") or time.time_ns())
    job.write(state="queued", ticket=ticket)
    while True:
        job.check()
        queue = waiting(job.client.get_metadata([], {}))
        position = 1 + sum(1 for t, k in queue if (t, k) < (ticket, job.key))
        own_turn = position <= limits.total
        if own_turn and mine.acquire(timeout=0):
            if total.acquire(timeout=0):
                break
            mine.release()
            label = f"queued: {count(limits.total, 'long job')} running, this one is next"
        elif own_turn:
            label = "queued: your other long job runs first"
        else:
            label = f"queued: {count(position - 1, 'long job')} ahead"
        if position > limits.max_queued:
            raise JobsBusy(f"{position - 1} long jobs are already waiting; try again in a minute")
        job.write(state="queued", label=label)  # also shows the job is alive
        time.sleep(POLL_S)
    job.write(state="running", label="starting", percent=0)
    try:
        yield
    finally:
        total.release()
        mine.release()
