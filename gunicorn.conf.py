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


def post_worker_init(worker: Any) -> None:
    """Finish Dash's one-time setup and load the grid before the worker takes traffic.

    The first request must complete alone: with threads, two concurrent first requests race inside Dash's
    lazy setup and answer 500 for the JS bundles (plotly/dash#3971).
    """
    worker.wsgi.test_client().get("/")
    from app.main import services

    services.whatif.warm()
