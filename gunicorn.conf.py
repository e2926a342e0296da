"""gunicorn settings for the dashboard: ``gunicorn -c gunicorn.conf.py app.main:server``."""

import os
import tempfile
from pathlib import Path
from typing import Any

bind = os.environ.get("BIND", "127.0.0.1:8050")
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
# each worker reads requests on an event loop (app/serving.py) and runs the app on `threads` threads only once a
# request is complete: a client sending slowly holds no thread, the request line and headers must arrive within
# BROKERAGE_HEADER_TIMEOUT (10 s) and the body within BROKERAGE_BODY_TIMEOUT (30 s), and a body announced above
# BROKERAGE_MAX_BODY (8 MiB) is answered 413 without being read
worker_class = "app.serving.BufferedWorker"
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
timeout = 60
keepalive = 5

# Long work (whole-grid what-ifs, reports, diffs, simulations) runs as jobs on ONE Dask cluster that every worker
# shares: a job started through one worker is polled, cancelled and read through the other. Without
# DASK_SCHEDULER_ADDRESS the master starts that cluster as a process of its own (app/cluster.py) before any worker.
_cluster: list[Any] = []


def on_starting(server: Any) -> None:
    """Refuse plain-text operator secrets; start the shared Dask cluster unless DASK_SCHEDULER_ADDRESS names one
    (the workers inherit its address)."""
    from app.services.roles import refuse_plain_secrets

    refuse_plain_secrets()
    if os.environ.get("DASK_SCHEDULER_ADDRESS"):
        return
    from app.cluster import client_environ, start

    folder = Path(tempfile.mkdtemp(prefix="brokerage-dask-"))
    proc, address = start(folder)
    _cluster.append(proc)
    os.environ["DASK_SCHEDULER_ADDRESS"] = address
    os.environ.update(client_environ(folder))  # its TLS credentials: only this server's processes can reach it
    server.log.info("Dask cluster for the workers at %s (pid %s)", address, proc.pid)


def on_exit(server: Any) -> None:
    """Stop the cluster the master started."""
    from app.cluster import stop

    for proc in _cluster:
        stop(proc)


def post_worker_init(worker: Any) -> None:
    """Finish Dash's one-time setup and start the stored config's grid run before the worker takes traffic.

    The first request must complete alone: with threads, two concurrent first requests race inside Dash's
    lazy setup and answer 500 for the JS bundles (plotly/dash#3971).
    """
    worker.wsgi.test_client().get("/")
    from app.main import services

    services.whatif.warm()
