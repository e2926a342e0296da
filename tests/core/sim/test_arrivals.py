"""Issue 30: new tasks arrive as the snapshot's recent history shows, seeded and identical across compared configs."""

from __future__ import annotations

import numpy as np
import pytest

from brokerage.model.gdpconfig import Config
from brokerage.sim import arrivals
from brokerage.sim.engine import Simulation
from tests.builders import counts, dataset, queue, sim_grid_snapshot, task


def _log(tid: int, hours_before: float) -> dict:
    when = np.datetime64("2026-11-20T12:00:00") - np.timedelta64(int(hours_before * 3600), "s")
    return {"jeditaskid": tid, "status": "registered", "modificationtime": str(when) + "Z"}


def _grid(log: list[dict]):  # type: ignore[no-untyped-def]
    """Four running MC Simulation tasks and one User Analysis task, each with 100 jobs of input, on two queues."""
    tasks = [
        task(t, status="running", chunk_nevents=10, chunk_njobs=1, neventsperjob=10, cputime=1.0) for t in (1, 2, 3, 4)
    ]
    tasks.append(task(5, status="running", prodsourcelabel="user", gshare="User Analysis", chunk_nevents=10,
                      chunk_njobs=1, neventsperjob=10, cputime=1.0))  # fmt: skip
    ds = [dataset(t, t, nfiles=100, nevents=1000, neventsused=0) for t in (1, 2, 3, 4, 5)]
    return sim_grid_snapshot([queue("A", "S1"), queue("B", "S2")], tasks, datasets=ds,
                             job_counts=counts("A", running=20) + counts("B", running=20), task_status_log=log)  # fmt: skip


def test_rates_count_the_tasks_created_in_the_last_seven_days() -> None:
    """Creation rate per (label, share) = tasks whose first logged status lies in the last 168 h, over 168 h: three
    MC Simulation tasks created 2, 50 and 100 h ago (task 4, 200 h ago, is older) give 3/168 per hour; one User
    Analysis task 10 h ago gives 1/168."""
    snap = _grid([_log(1, 2), _log(2, 50), _log(3, 100), _log(4, 200), _log(5, 10)])
    got, source = arrivals.rates(snap)
    assert source == "history"
    assert got == {
        ("managed", "MC Simulation"): pytest.approx(3 / 168),
        ("user", "User Analysis"): pytest.approx(1 / 168),
    }


def test_an_empty_history_gives_the_documented_default() -> None:
    """No task_status_log: every share's live tasks renew once in DEFAULT_TASK_LIFETIME_H (168 h): 4/168 and 1/168."""
    got, source = arrivals.rates(_grid([]))
    assert source == "default"
    assert got == {
        ("managed", "MC Simulation"): pytest.approx(4 / 168),
        ("user", "User Analysis"): pytest.approx(1 / 168),
    }


def test_the_plan_depends_on_the_snapshot_and_seed_only() -> None:
    """Same snapshot and seed: the same arrivals (times and copied tasks) whatever the config; another seed draws
    others."""
    snap = _grid([_log(t, 0.5) for t in (1, 2, 3, 4, 5)])
    a = Simulation(snap, Config(), seed=3)
    b = Simulation(snap, Config().with_overrides({"THROTTLE_THRESHOLD": 3}), seed=3)
    assert len(a.arrival_plan.at_s) > 0
    assert np.array_equal(a.arrival_plan.at_s, b.arrival_plan.at_s)
    assert np.array_equal(a.arrival_plan.template, b.arrival_plan.template)
    assert not np.array_equal(a.arrival_plan.at_s, Simulation(snap, Config(), seed=4).arrival_plan.at_s)


def test_an_arrival_enters_registered_is_refined_and_gets_jobs() -> None:
    """A planned arrival at 0.1 h copying analysis task 5 joins at the refiner's 10-minute pass as task 6 (above
    every id), registered -> defined (TaskRefiner) -> ready (ContentsFeeder), and JobGenerator brokers it in the same
    tick (no analysis queue here: pending), with task 5's label and share and its whole input (100 units)."""
    snap = _grid([])
    sim = Simulation(snap, Config(), seed=0, new_tasks=False)
    sim.arrival_plan = arrivals.Plan(np.array([360.0]), np.array([5]), {}, "test")
    sim.run(0.5)
    assert sim.tasks.index.max() == 6 and sim.tasks.at[6, "nFiles"] == 100
    assert sim.tasks.at[6, "gshare"] == "User Analysis" and sim.tasks.at[6, "prodSourceLabel"] == "user"
    steps = [(round(c[0]), c[2], c[3]) for c in sim.task_causes if c[1] == 6 and c[2] != c[3]]
    assert steps[:3] == [(600, "registered", "defined"), (600, "defined", "ready"), (600, "ready", "pending")]
