"""A `dask scheduler` and `dask worker` processes on 127.0.0.1 for tests, reached by address."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from distributed import Client

DASK = str(Path(sys.executable).parent / "dask")
START_TIMEOUT_S = 60


ROOT = Path(__file__).resolve().parents[1]


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    # the workers unpickle test helpers (tests.*) as well as the project: the checkout goes on their path
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.Popen([DASK, *args], stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)


@contextmanager
def external_cluster(tmp: Path, workers: int = 2) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """Start a scheduler and WORKERS workers (one thread each, no nanny); yield (address, worker processes).

    Usage: ``with external_cluster(tmp_path) as (address, procs): Client(address)``
    """
    file = tmp / "scheduler.json"
    sched = _start(
        ["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(file)],
        tmp / "scheduler.log",
    )
    procs: list[subprocess.Popen[bytes]] = []
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        for i in range(workers):
            args = ["worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard"]
            procs.append(_start(args, tmp / f"worker{i}.log"))
        with Client(address, set_as_default=False, timeout=START_TIMEOUT_S) as client:
            client.wait_for_workers(workers, timeout=START_TIMEOUT_S)
        yield address, procs
    finally:
        for p in [*procs, sched]:
            if p.poll() is None:
                p.terminate()
        for p in [*procs, sched]:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
