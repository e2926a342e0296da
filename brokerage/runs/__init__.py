"""Whole-grid work on dask.distributed: an embedded LocalCluster, or the scheduler at DASK_SCHEDULER_ADDRESS."""

from brokerage.runs.chunks import MIN_CLUSTER_TASKS, Cancelled, map_chunks, snapshot_future, split, use_cluster
from brokerage.runs.engine import close, configure, get_client, local_workers, running_client, scheduler_address
from brokerage.runs.grid import decide_all, run_grid

__all__ = [
    "MIN_CLUSTER_TASKS",
    "Cancelled",
    "close",
    "configure",
    "decide_all",
    "get_client",
    "local_workers",
    "map_chunks",
    "run_grid",
    "running_client",
    "scheduler_address",
    "snapshot_future",
    "split",
    "use_cluster",
]
