"""A generated job's walltime as seed 003 writes it: cpuEfficiency 0 means walltime = baseWalltime; baseWalltime's
default 600 s."""

from __future__ import annotations

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.sim import jobgen
from brokerage.sim.setup import sim_grid
from tests.builders import counts, dataset, task
from tests.core.sim.conftest import small_sim

CODE = Config().with_overrides({"RULES": "panda-1.0.4"})


def _sim(**kw: object):  # type: ignore[no-untyped-def]
    sim = small_sim(tasks=[task(1, status="running", chunk_nevents=100, chunk_njobs=10, neventsperjob=10, cputime=50.0, **kw)],
                    datasets=[dataset(1, 1, nfiles=10, nevents=100, neventsused=0)],
                    job_counts=counts("A", running=20) + counts("B", running=20))  # fmt: skip
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    return sim


def test_cpu_efficiency_zero_gives_walltime_base_walltime() -> None:
    """Seed 003: "cpuEfficiency can be set to 0 to disable scaling with nEvents. In this case wall = baseWalltime":
    a task of 50 HS06 s/event, 10 events per job, cpuEfficiency 0 and baseWalltime 1800 s makes jobs of exactly
    1800 s (before: its efficiency was clipped to 5 %, 10,000 s of CPU at corepower 10)."""
    sim = _sim(cpuefficiency=0, basewalltime=1800)
    assert sim.tasks.at[1, "cpu_hs06s_per_job"] == 0.0
    jobgen.tick(sim, 0.0)
    assert sim.jobs.n == 10 and np.allclose(sim.jobs["runSeconds"][: sim.jobs.n], 1800.0)


def test_base_walltime_defaults_to_600_seconds() -> None:
    """Seed 003: "basewalltime represents the part of the job not scaling with cpu power, default 600s": a task that
    leaves it unset (0) gets 600 s; a task setting 1200 s keeps it; switch basewalltime_as_jedi reads unset as 0."""
    snap = _sim().snap
    assert sim_grid(snap).tasks.at[1, "basewalltime"] == 600.0
    assert sim_grid(snap, CODE).tasks.at[1, "basewalltime"] == 0.0
    assert _sim(basewalltime=1200).tasks.at[1, "basewalltime"] == 1200.0


def test_walltime_is_cputime_over_power_cores_and_efficiency_plus_base() -> None:
    """Seed 003: "wall = cpuTime/corePower/coreCount/cpuEfficiency*nEvents+baseWalltime": 50 HS06 s/event x 10
    events / (10 HS06 x 1 core x 0.5) + 600 s = 700 s, scaled by the task's true CPU factor and the per-job noise."""
    sim = _sim(cpuefficiency=50)
    sim.true_cpu[1] = 1.0
    assert sim.tasks.at[1, "cpu_hs06s_per_job"] == 50.0 * 10 / 0.5
    jobgen.tick(sim, 0.0)
    cpu_part = sim.jobs["runSeconds"][: sim.jobs.n] - 600.0
    assert np.all((cpu_part > 100 * 0.5) & (cpu_part < 100 * 2.0))  # 100 s x a log-normal noise of sigma 0.15
