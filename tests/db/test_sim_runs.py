"""Simulation runs in the database: stored with their grid and gdpconfig versions, listed, shown, pruned."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from brokerage.cli.main import main
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.store import sim_runs
from brokerage.store.errors import StoreError
from brokerage.store.repository import save_snapshot
from brokerage.store.sim_runs import list_runs, load_run, save_run


def _result(finished: int) -> dict[str, Any]:
    return {"headline": {"jobs_finished": finished, "hours": 1.0}, "times_h": [0.0, 1.0]}


def test_a_run_keeps_its_grid_and_config_versions(engine: Any, small_grid: GridSnapshot) -> None:
    """save_run stores the result with the snapshot version, config version, fingerprint and edits it ran on."""
    snap = GridSnapshot(small_grid.tables, small_grid.taken_at, "demo", 7)
    config = Config(version=3).with_overrides({"THROTTLE_THRESHOLD": 1.5})
    run_id = save_run(engine, _result(42), snap, config, 6.0, 5, "what-if")
    info, result = load_run(engine, run_id)
    assert (info.snapshot_id, info.snapshot_version, info.config_version) == ("demo", 7, 3)
    assert info.overrides == {"THROTTLE_THRESHOLD": 1.5} and info.config_fingerprint == config.fingerprint()
    assert (info.hours, info.seed, info.label, info.headline["jobs_finished"]) == (6.0, 5, "what-if", 42)
    assert result == _result(42)


def test_only_the_newest_runs_are_kept(engine: Any, small_grid: GridSnapshot, monkeypatch: pytest.MonkeyPatch) -> None:
    """With RUNS_KEPT 2, a third run prunes the oldest: the store never grows without bound."""
    monkeypatch.setattr(sim_runs, "RUNS_KEPT", 2)
    ids = [save_run(engine, _result(i), small_grid, Config(), 1.0, 0, "stored") for i in range(3)]
    assert [r.run_id for r in list_runs(engine)] == [ids[2], ids[1]]
    with pytest.raises(StoreError, match=f"run id: {ids[0]} is not a stored simulation run"):
        load_run(engine, ids[0])


def test_simulate_stores_its_run_and_sim_runs_lists_it(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`brokerage simulate` on the database grid stores the run; `sim-runs` lists it and --show prints it;
    an unknown id exits 2 naming the stored ids."""
    from brokerage.store.database import make_engine
    from brokerage.store.schema import upgrade
    from tests.core.sim.test_engine import _snap

    eng = make_engine(db_url)
    upgrade(eng)
    version = save_snapshot(eng, _snap())
    eng.dispose()
    monkeypatch.setenv("DATABASE_URL", db_url)
    r = CliRunner().invoke(main, ["simulate", "--hours", "1", "--quiet"])
    assert r.exit_code == 0, r.output
    assert "stored as run 1" in r.output
    r = CliRunner().invoke(main, ["sim-runs"])
    assert r.exit_code == 0 and "stored" in r.output.splitlines()[1]
    r = CliRunner().invoke(main, ["sim-runs", "--show", "1"])
    assert json.loads(r.output)["run"]["snapshot_version"] == version
    r = CliRunner().invoke(main, ["sim-runs", "--show", "9"])
    assert r.exit_code == 2 and "run id: 9 is not a stored simulation run; newest: 1" in r.output
