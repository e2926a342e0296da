"""The Dask cluster a gunicorn deployment's server processes share: ``python -m app.cluster ADDRESS_FILE``.

gunicorn.conf.py starts it from the master before any worker exists (a fresh interpreter: nothing is forked from a
threaded server), unless DASK_SCHEDULER_ADDRESS already names a cluster, and hands its scheduler address to every
worker through DASK_SCHEDULER_ADDRESS. Jobs and their state live on it, so any worker answers any poll. The cluster
speaks TLS only, under credentials generated at its start (brokerage/runs/engine.py): it writes them to its private
folder (mode 0700, files 0600), and the workers reach it through Dask's own TLS settings (``client_environ``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 120
STOP_TIMEOUT_S = 30
# the generated credentials' files in the cluster's folder, by the Dask setting that names each
CREDENTIALS = {"ca-file": "ca.pem", "client.cert": "cert.pem", "client.key": "key.pem"}


def serve(address_file: Path) -> None:
    """Start the embedded cluster (BROKERAGE_DASK_WORKERS worker processes, default one per core), write its
    scheduler address to ADDRESS_FILE, and keep it until SIGTERM or until the parent process is gone."""
    from brokerage import runs

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    parent = os.getppid()
    address = runs.get_client().scheduler.address
    _write_credentials(address_file.parent, runs.cluster_security())
    tmp = address_file.with_suffix(".part")
    tmp.write_text(address)
    tmp.replace(address_file)
    while not stop.wait(1.0) and os.getppid() == parent:  # never outlive the gunicorn master
        pass
    runs.close()


def _write_credentials(folder: Path, security: Any) -> None:
    """The cluster's CA, certificate and key (PEM texts held by SECURITY) as files only this user can read."""
    folder.chmod(0o700)
    texts = {
        "ca-file": security.tls_ca_file,
        "client.cert": security.tls_client_cert,
        "client.key": security.tls_client_key,
    }
    for setting, name in CREDENTIALS.items():
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(texts[setting])


def client_environ(folder: Path) -> dict[str, str]:
    """Dask's TLS settings, as environment variables, that let a process reach the cluster started in FOLDER.

    Usage: ``os.environ.update(client_environ(folder))`` (before the process imports dask)
    """
    env = {"DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True"}
    for setting, name in CREDENTIALS.items():
        env["DASK_DISTRIBUTED__COMM__TLS__" + setting.replace(".", "__").replace("-", "_").upper()] = str(folder / name)
    return env


def start(folder: Path, timeout_s: float = START_TIMEOUT_S) -> tuple[subprocess.Popen[bytes], str]:
    """Start the cluster process in FOLDER (its credentials go there) and wait for its scheduler address;
    (process, address).

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
