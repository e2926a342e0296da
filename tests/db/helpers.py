"""Snapshots and comparisons shared by the store tests."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from brokerage.model.snapshot import GridSnapshot, frame
from brokerage.model.tables import TABLES
from brokerage.synth.history import simulate_task_history
from tests.builders import counts, grid, queue, task

TAKEN_AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def frames_equal(a: GridSnapshot, b: GridSnapshot) -> None:
    """Assert two snapshots hold the same rows in the same order (times compared at microsecond resolution)."""
    assert set(a.tables) == set(b.tables) == set(TABLES)
    for name in TABLES:
        left = a.tables[name].reset_index(drop=True).copy()
        right = b.tables[name].reset_index(drop=True).copy()
        for col in left.columns:
            if str(left[col].dtype).startswith("datetime64"):
                left[col] = left[col].astype("datetime64[us, UTC]")
                right[col] = right[col].astype("datetime64[us, UTC]")
        pd.testing.assert_frame_equal(left, right, obj=f"table {name}")


def with_history(snap: GridSnapshot, seed: int = 0) -> GridSnapshot:
    """SNAP with a simulated task_status_log for its tasks (same id and version)."""
    log = simulate_task_history(snap.tables["tasks"], snap.taken_at, seed=seed)
    return GridSnapshot({**snap.tables, "task_status_log": log}, snap.taken_at, snap.snapshot_id, snap.version)


def edge_grid() -> GridSnapshot:
    """A hand-built grid full of awkward values: nulls, NaN, unicode, lists, JSON, sub-second times."""
    snap = grid(
        [
            queue("Q_ÄÖ-1", "SITE_A", releases=["ANY"], numslots=None, site_class=None, laststart=None),
            queue("Q2", "SITE_B", type="analysis", releases=["21.0.1", "22.0.3"], numslots=12, site_class=-1,
                  catchall="singularity,jobseed=es", laststart="2026-11-20T11:59:59Z"),
        ],
        [
            task(7, status="running", nucleus="SITE_A", maxcorecount=None, iointensity=None, taskname="τ task"),
            task(8, status="defined", parent_tid=7, t1weight=-1, task_class=2, modificationtime="2026-11-20T11:00:00Z"),
        ],
        sites=[
            {"site_name": "SITE_A", "role": "nucleus", "tier_level": 1, "cloud": "DE", "bare_nucleus": "allow"},
            {"site_name": "SITE_B", "role": "satellite", "cloud": None},
        ],
        job_counts=counts("Q2", running=3, activated=0),
        network=[
            {"src": "SITE_B", "dst": "SITE_A", "key": "AGIS_closeness", "value": 3.0, "ts": None},
            {"src": "SITE_B", "dst": "SITE_A", "key": "dashb_mbps_1h", "value": 0.125, "ts": "2026-11-20T11:30:00Z"},
        ],
        datasets=[{"jeditaskid": 7, "datasetid": 70, "datasetname": "mc:ds", "nfiles": 3, "size_gb": 1.5}],
        dataset_replicas=[{"jeditaskid": 7, "datasetid": 70, "ddm_endpoint_name": "SITE_A_DATADISK", "nfiles": 3}],
        queue_software=[
            {"panda_queue": "Q2", "cmtconfigs": ["x86_64-el9-gcc13-opt"], "containers": [],
             "architectures": [{"arch": ["x86_64"], "instr": ["avx2"], "type": "cpu"}], "tags": [{"a": 1}]},
            {"panda_queue": "ALL", "containers": ["atlas/athena:22"]},
        ],
        users=[{"produsername": "jörg", "running_slots_hi": 4, "disk_quota_exceeded": True}],
        gshares=[{"gshare": "User Analysis", "usage_perc": 88.5}],
    )  # fmt: skip
    tables = dict(snap.tables)
    # a sub-second time survives the database although JSON files keep whole seconds
    tables["task_job_counts"] = frame(
        "task_job_counts",
        [{"jeditaskid": 7, "panda_queue": "Q2", "jobstatus": "failed", "modificationtime": "2026-11-20T10:00:00.25Z",
          "njobs": 2}],
    )  # fmt: skip
    return with_history(GridSnapshot(tables, snap.taken_at, "edge", 4), seed=5)
