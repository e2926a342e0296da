"""Admission control for whole-grid work: caps per client and in total across processes, a queue, shared runs."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import IO, TypeVar

T = TypeVar("T")
Waiting = Callable[[int], None]  # told the queue position (1 = next) while a run waits for a slot

TOTAL_RUNS = int(os.environ.get("BROKERAGE_GRID_RUNS", "2"))  # whole-grid runs at once, all clients together
PER_CLIENT_RUNS = 1  # whole-grid runs at once for one client address
MAX_QUEUED = 16  # runs allowed to wait; beyond this a run is refused at once
POLL_S = 0.1


class AdmissionRefused(RuntimeError):
    """Too many whole-grid runs are waiting; the client should try again later."""


class Admission:
    """Admits whole-grid runs: at most TOTAL at once (PER_CLIENT per client), the rest wait in a queue with their
    position reported; runs with the same key share one computation in a process and queue behind each other across
    processes (background callbacks run in their own processes, so slots are lock files in FOLDER).

    Usage: ``admission.run(("grid", fingerprint), "10.0.0.7", lambda: runs.whatif_runs(o), waiting=show)``
    """

    def __init__(
        self, folder: Path, total: int = TOTAL_RUNS, per_client: int = PER_CLIENT_RUNS, max_queued: int = MAX_QUEUED
    ) -> None:
        self.folder = folder
        self.total, self.per_client, self.max_queued = max(1, total), max(1, per_client), max(0, max_queued)
        self._shared: dict[Hashable, Future[object]] = {}
        self._lock = threading.Lock()

    def run(self, key: Hashable, client: str, fn: Callable[[], T], waiting: Waiting | None = None) -> T:
        """FN() once admitted; a caller with the same KEY in this process gets the same result without a second run."""
        with self._lock:
            shared = self._shared.get(key)
            mine = shared is None
            if mine:
                shared = self._shared[key] = Future()
        assert shared is not None
        if not mine:
            return shared.result()  # type: ignore[return-value]
        try:
            with self.slot(key, client, waiting):
                result = fn()
        except BaseException as exc:
            shared.set_exception(exc)
            raise
        finally:
            with self._lock:
                self._shared.pop(key, None)
        shared.set_result(result)
        return result

    @contextlib.contextmanager
    def slot(self, key: Hashable, client: str, waiting: Waiting | None = None) -> Iterator[None]:
        """Hold one total slot and one of CLIENT's slots (and KEY's lock) while the block runs; wait in turn for them."""
        self.folder.mkdir(parents=True, exist_ok=True)
        ticket = self.folder / f"ticket-{time.time_ns():020d}-{os.getpid()}-{threading.get_ident()}"
        ticket.touch()
        held: list[IO[bytes]] = []
        try:
            last = -1
            while True:
                position = self.position(ticket)  # 1 = first of those waiting (running ones hold no ticket)
                if position <= self.total:
                    held = self._acquire(key, client)
                    if held:
                        break
                if position > self.max_queued:
                    raise AdmissionRefused(f"{position - 1} whole-grid runs are already waiting; try again in a minute")
                if waiting is not None and position != last:
                    waiting(position)
                    last = position
                time.sleep(POLL_S)
            ticket.unlink(missing_ok=True)
            yield
        finally:
            ticket.unlink(missing_ok=True)
            for f in held:
                fcntl.flock(f, fcntl.LOCK_UN)
                f.close()

    def position(self, ticket: Path) -> int:
        """1 + the number of tickets waiting ahead of TICKET (tickets of dead processes are skipped)."""
        ahead = 0
        for t in self.folder.glob("ticket-*"):
            if t.name < ticket.name and _alive(t):
                ahead += 1
        return ahead + 1

    def _acquire(self, key: Hashable, client: str) -> list[IO[bytes]]:
        """Lock KEY's file, one of CLIENT's slot files and one total slot file, or nothing (all released)."""
        held: list[IO[bytes]] = []
        groups = [
            [f"key-{_digest(key)}"],
            [f"client-{_digest(client)}-{i}" for i in range(self.per_client)],
            [f"slot-{i}" for i in range(self.total)],
        ]
        for names in groups:
            got = next((f for n in names if (f := _try_lock(self.folder / n)) is not None), None)
            if got is None:
                for f in held:
                    fcntl.flock(f, fcntl.LOCK_UN)
                    f.close()
                return []
            held.append(got)
        return held


def _digest(value: Hashable) -> str:
    return hashlib.sha256(repr(value).encode("utf-8", "backslashreplace")).hexdigest()[:16]


def _try_lock(path: Path) -> IO[bytes] | None:
    f = path.open("ab")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        return None
    return f


def _alive(ticket: Path) -> bool:
    pid = int(ticket.name.split("-")[2])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        ticket.unlink(missing_ok=True)
        return False
    except PermissionError:
        return True
    return True
