"""The ``--scheduler`` and ``--workers`` options of whole-grid commands (imports no dask until they are used)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click


def cluster_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add --scheduler ADDRESS and --workers N to a click command; they configure the Dask engine before it runs.

    Usage: ``@click.command() @cluster_options def report(...)``
    """

    @click.option(
        "--scheduler",
        "scheduler",
        metavar="ADDRESS",
        help="Dask scheduler, e.g. tcp://host:8786 (default: $DASK_SCHEDULER_ADDRESS, else an embedded LocalCluster)",
    )
    @click.option(
        "--workers",
        "workers",
        type=click.IntRange(0, 1024),
        help="worker processes of the embedded cluster (default: one per core; 0: everything in this process)",
    )
    @functools.wraps(fn)
    def wrapper(*args: Any, scheduler: str | None, workers: int | None, **kwargs: Any) -> Any:
        if scheduler is not None or workers is not None:
            from brokerage.runs.engine import configure

            configure(address=scheduler, workers=workers)
        return fn(*args, **kwargs)

    return wrapper
