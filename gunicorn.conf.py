"""gunicorn settings for the dashboard: ``gunicorn -c gunicorn.conf.py app.main:server``."""

import os
from typing import Any

bind = os.environ.get("BIND", "127.0.0.1:8050")
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
# sync workers: threaded workers can hit Dash's cold-start race (plotly/dash#3971)
worker_class = "sync"
timeout = 60


def post_worker_init(worker: Any) -> None:
    """Finish Dash's one-time setup and load the grid before the worker takes traffic."""
    worker.wsgi.test_client().get("/")
    from app.main import services

    services.whatif.warm()
