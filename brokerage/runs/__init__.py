"""Whole-grid work on dask.distributed: an embedded LocalCluster, or the scheduler at DASK_SCHEDULER_ADDRESS."""

from __future__ import annotations

import importlib
from typing import Any

# dask is imported on first use, so that commands and pages that never run a whole grid do not pay for it
_EXPORTS = {
    "MIN_CLUSTER_TASKS": "chunks",
    "Cancelled": "chunks",
    "map_chunks": "chunks",
    "snapshot_future": "chunks",
    "split": "chunks",
    "use_cluster": "chunks",
    "close": "engine",
    "cluster_security": "engine",
    "configure": "engine",
    "get_client": "engine",
    "local_workers": "engine",
    "running_client": "engine",
    "scheduler_address": "engine",
    "decide_all": "grid",
    "run_grid": "grid",
    "sweep": "grid",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'brokerage.runs' has no attribute {name!r}")
    return getattr(importlib.import_module(f"brokerage.runs.{_EXPORTS[name]}"), name)
