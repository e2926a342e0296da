"""Issue 30 item 10: a snapshot with no tasks, no queues, no jobs or one job status only simulates or is refused."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from brokerage.cli.main import main
from brokerage.model.gdpconfig import Config
from brokerage.sim.engine import Simulation
from brokerage.sim.setup import SimInputError
from tests.builders import counts, dataset, queue, sim_grid_snapshot, task

QUEUES = [queue("A", "S1"), queue("B", "S2")]
TASK = [task(1, chunk_nevents=100, chunk_njobs=10, neventsperjob=10, cputime=1.0)]
DATA = [dataset(1, 1, nfiles=10, nevents=100, neventsused=0)]


def _run(snap, hours: float = 2.0):  # type: ignore[no-untyped-def]
    return Simulation(snap, Config(), seed=0).run(hours).result()["headline"]


def test_no_tasks_simulates_the_snapshot_jobs_alone() -> None:
    """A grid with no tasks simulates: its 5 running jobs run on (none generated), and the result has 0 tasks."""
    h = _run(sim_grid_snapshot(QUEUES, [], job_counts=counts("A", running=5)))
    assert h["jobs_generated"] == 0 and h["tasks_completed"] == 0


def test_no_tasks_and_no_jobs_simulates_an_idle_grid() -> None:
    """A grid with neither tasks nor jobs simulates to an idle result: nothing generated, started or ended."""
    h = _run(sim_grid_snapshot(QUEUES, []))
    assert (h["jobs_generated"], h["jobs_started"], h["jobs_finished"]) == (0, 0, 0)


def test_no_jobs_the_task_makes_its_ten_jobs() -> None:
    """A grid with no jobs simulates: the ready task's 100 events in jobs of 10 make 10 jobs (they scout first)."""
    h = _run(sim_grid_snapshot(QUEUES, TASK, datasets=DATA))
    assert h["jobs_generated"] == 10


def test_one_status_only_activated_jobs_are_dispatched() -> None:
    """A grid whose jobs are all activated (no running job, so no slot) simulates; with 3 slots at A, 3 start."""
    slots = [{"panda_queue": "A", "nslots": 3}, {"panda_queue": "B", "nslots": 0}]
    snap = sim_grid_snapshot(QUEUES, [], job_counts=counts("A", activated=5), queue_slots=slots)
    assert _run(snap, 0.1)["jobs_started"] == 3


def test_no_queues_is_refused_with_one_sentence() -> None:
    """A grid without queues cannot run a job: SimInputError names the table ("queues: no rows")."""
    with pytest.raises(SimInputError, match="queues: no rows"):
        Simulation(sim_grid_snapshot([], TASK, datasets=DATA), Config(), seed=0)


def test_cli_refuses_no_queues_with_exit_2_and_runs_no_tasks(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """brokerage simulate on a grid without queues exits 2 with one line; on a grid without tasks it exits 0."""
    empty, no_tasks = tmp_path / "q.json", tmp_path / "t.json"
    sim_grid_snapshot([], TASK, datasets=DATA).to_json(str(empty))
    sim_grid_snapshot(QUEUES, [], job_counts=counts("A", running=5)).to_json(str(no_tasks))
    runner = CliRunner()
    bad = runner.invoke(main, ["simulate", "--snapshot", str(empty), "--hours", "1", "--no-store", "--quiet"])
    assert bad.exit_code == 2 and "queues: no rows" in bad.output and "Traceback" not in bad.output
    ok = runner.invoke(main, ["simulate", "--snapshot", str(no_tasks), "--hours", "1", "--no-store", "--quiet"])
    assert ok.exit_code == 0, ok.output
