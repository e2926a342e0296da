"""A later version of a grid for demos and benchmarks: link backlogs, job counts, disk space and a queue status move."""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from brokerage.model.network import QUEUED_PRODUCTION_OUTPUT
from brokerage.model.snapshot import GridSnapshot


def later(snap: GridSnapshot, seed: int = 1, *, share: float = 0.05, minutes: int = 10) -> GridSnapshot:
    """SNAP as a pull MINUTES later might see it (deterministic from SEED): queued files on SHARE of the links
    double, job counts at SHARE of the queues move by up to ±50 %, free space at SHARE of the endpoints halves,
    and one online queue goes offline. The version number grows by one.

    Usage: ``new = later(demo_snapshot(), seed=1)``
    """
    rng = np.random.default_rng(seed)
    net = snap.tables["network"].copy()
    queued = np.flatnonzero((net["key"] == QUEUED_PRODUCTION_OUTPUT).to_numpy())
    pick = rng.choice(queued, size=max(1, int(len(queued) * share)), replace=False) if len(queued) else []
    net.loc[net.index[pick], "value"] = net["value"].to_numpy()[pick] * 2 + 10
    jc = snap.tables["job_counts"].copy()
    queues = jc["panda_queue"].unique()
    moved = set(rng.choice(queues, size=max(1, int(len(queues) * share)), replace=False)) if len(queues) else set()
    rows = jc["panda_queue"].isin(moved).to_numpy()
    factor = rng.uniform(0.5, 1.5, size=int(rows.sum()))
    jc.loc[rows, "njobs"] = np.round(jc.loc[rows, "njobs"].to_numpy() * factor).astype(jc["njobs"].dtype)
    eps = snap.tables["ddm_endpoints"].copy()
    n_eps = max(1, int(len(eps) * share)) if len(eps) else 0
    half = rng.choice(len(eps), size=n_eps, replace=False) if n_eps else []
    eps.loc[eps.index[half], "space_free"] = eps["space_free"].to_numpy()[half] / 2
    qs = snap.tables["queues"].copy()
    online = np.flatnonzero((qs["status"] == "online").to_numpy())
    if len(online):
        qs.loc[qs.index[int(rng.choice(online))], "status"] = "offline"
    return GridSnapshot(
        {**snap.tables, "network": net, "job_counts": jc, "ddm_endpoints": eps, "queues": qs},
        snap.taken_at + timedelta(minutes=minutes),
        snap.snapshot_id,
        snap.version + 1,
    )
