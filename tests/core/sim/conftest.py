"""Small grids and hand-placed jobs for the simulator's rule tests."""

from __future__ import annotations

from typing import Any

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.sim.engine import Simulation
from brokerage.sim.jobs import S
from tests.builders import counts, dataset, queue, sim_grid_snapshot, task


def small_sim(config: Config | None = None, queues: list[dict[str, Any]] | None = None, **tables: Any) -> Simulation:
    """Two online production queues at S1/S2, one ready task with 100 events left in jobs of one file (nFilesPerJob 1:
    10 events), no jobs."""
    qs = queues or [queue("A", "S1"), queue("B", "S2")]
    tasks = tables.pop("tasks", [task(1, chunk_nevents=100, chunk_njobs=10, cputime=1.0, nfilesperjob=1)])
    ds = tables.pop("datasets", [dataset(1, 1, nfiles=10, nevents=100, neventsused=0)])
    snap = sim_grid_snapshot(qs, tasks, datasets=ds, job_counts=tables.pop("job_counts", counts("A")), **tables)
    return Simulation(snap, config or Config(), seed=0)


def add_jobs(sim: Simulation, n: int = 1, status: str = "activated", queue: str = "A", **cols: Any) -> np.ndarray:
    """Append N jobs at QUEUE in STATUS (share MC Simulation, managed, priority 500) with columns overridden."""
    base: dict[str, Any] = {
        "jediTaskID": -1, "computingSite": sim.qi[queue], "jobStatus": S[status], "gshare": sim.si["MC Simulation"],
        "workQueue": sim.wi["MC Simulation"],
        "resource_type": 0, "prodSourceLabel": 0, "currentPriority": 500.0, "attemptNr": 1, "coreCount": 1,
        "creationTime": 0.0, "modificationTime": 0.0, "stateChangeTime": 0.0, "activationTime": 0.0,
        "runSeconds": 3600.0,
    }  # fmt: skip
    if "gshare" in cols and "workQueue" not in cols:
        cols["workQueue"] = cols["gshare"]  # a share's own work queue has the share's index
    base.update(cols)
    if n > 1:
        base = {k: np.full(n, v) if np.ndim(v) == 0 else v for k, v in base.items()}
    rows = sim.jobs.append(**base)
    sim.live = np.concatenate([sim.live[sim.live < rows[0]], rows])  # the engine's index of live rows
    return rows


def status_of(sim: Simulation, rows: np.ndarray) -> list[str]:
    """The status names of ROWS."""
    return [list(S)[c] for c in sim.jobs["jobStatus"][rows]]
