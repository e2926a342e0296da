"""gunicorn settings for the dashboard: ``gunicorn -c gunicorn.conf.py app.main:server``."""

import os
from typing import Any

bind = os.environ.get("BIND", "127.0.0.1:8050")
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
# threaded workers: a client that sends its request slowly holds one thread, not a whole worker, so a few slow
# (or hostile) clients cannot stall everyone; up to workers × threads requests are read at once
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
timeout = 60
keepalive = 5
# Whole-grid runs go to Dask. Without DASK_SCHEDULER_ADDRESS every worker process starts its own embedded
# LocalCluster (in post_worker_init below, never in the master: with preload_app the import starts nothing), so
# the cores are shared out between them; set DASK_SCHEDULER_ADDRESS to give every worker one shared cluster.
os.environ.setdefault("BROKERAGE_DASK_WORKERS", str(max(1, (os.cpu_count() or 1) // workers)))


def post_worker_init(worker: Any) -> None:
    """Finish Dash's one-time setup, load the grid and start the worker's Dask engine before it takes traffic.

    The first request must complete alone: with threads, two concurrent first requests race inside Dash's
    lazy setup and answer 500 for the JS bundles (plotly/dash#3971).
    """
    worker.wsgi.test_client().get("/")
    from app.main import services

    services.whatif.warm()
