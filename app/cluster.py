"""The Dask cluster a gunicorn deployment's server processes share: ``python -m app.cluster ADDRESS_FILE``.

gunicorn.conf.py starts it from the master before any worker exists (a fresh interpreter: nothing is forked from a
threaded server), unless DASK_SCHEDULER_ADDRESS already names a cluster, and hands its scheduler address to every
worker through DASK_SCHEDULER_ADDRESS. Jobs and their state live on it, so any worker answers any poll.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 120
STOP_TIMEOUT_S = 30


def serve(address_file: Path) -> None:
    """Start the embedded cluster (BROKERAGE_DASK_WORKERS worker processes, default one per core), write its
    scheduler address to ADDRESS_FILE, and keep it until SIGTERM or until the parent process is gone."""
    from brokerage import runs

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    parent = os.getppid()
    address = runs.get_client().scheduler.address
    tmp = address_file.with_suffix(".part")
    tmp.write_text(address)
    tmp.replace(address_file)
    while not stop.wait(1.0) and os.getppid() == parent:  # never outlive the gunicorn master
        pass
    runs.close()


def start(folder: Path, timeout_s: float = START_TIMEOUT_S) -> tuple[subprocess.Popen[bytes], str]:
    """Start the cluster process and wait for its scheduler address; (process, address).

    Usage: ``proc, address = start(Path(tempfile.mkdtemp()))``
    """
    address_file = folder / "scheduler-address"
    proc = subprocess.Popen([sys.executable, "-m", "app.cluster", str(address_file)], cwd=ROOT)
    deadline = time.monotonic() + timeout_s
    while not address_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"the Dask cluster process did not start within {timeout_s:g} s (exit {proc.poll()})")
        time.sleep(0.1)
    return proc, address_file.read_text().strip()


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End the cluster process (SIGTERM, then SIGKILL after STOP_TIMEOUT_S)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
