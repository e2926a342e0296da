"""The app's layers: state caches are bounded and keyed, layouts broker nothing, the core never imports the app."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import click
import pytest

from app.state import AppState, Source
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> list[str]:
    """Every module an import statement of PATH names, at any level (module or function)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_core_never_imports_the_app_and_the_app_has_no_global_statement() -> None:
    """No file under brokerage/ imports app (at any level), and no file under app/ rebinds a module global."""
    core = [(p, m) for p in (ROOT / "brokerage").rglob("*.py") for m in _imports(p) if m.split(".")[0] == "app"]
    assert core == []
    globals_ = [p for p in (ROOT / "app").rglob("*.py") if re.search(r"^\s*global ", p.read_text(), re.M)]
    assert globals_ == []


def test_viewmodels_are_pure() -> None:
    """Viewmodels import neither Dash nor the store, the state or the services."""
    banned = ("dash", "flask", "sqlalchemy", "brokerage.store", "app.state", "app.services", "app.main")
    found = [
        (p.name, m)
        for p in (ROOT / "app" / "viewmodels").glob("*.py")
        for m in _imports(p)
        if any(m == b or m.startswith(b + ".") for b in banned)
    ]
    assert found == []


def _state(snap: GridSnapshot, decisions: int = 1024) -> AppState:
    state = AppState(decisions=decisions)
    state.reset(Source(snap, Config(), "test"))
    return state


def test_decision_cache_is_bounded_and_keyed_on_snapshot_config_broker_task(snap: GridSnapshot) -> None:
    """Equal keys share one decision; another config, broker or task is another entry; the cache never outgrows its size."""
    state = _state(snap, decisions=3)
    first = state.job_decision(1)
    assert state.job_decision(1) is first
    assert state.job_decision(1, {"NW_ACTIVE": False}) is not first
    assert state.nucleus_decision(1) is not first and state.job_decision(2) is not first
    assert state.sizes()["decisions"] == 3
    for tid in (1, 2, 3, 4):
        state.job_decision(tid, {"NQUEUED_SAT_CAP": 100 + tid})
    assert state.sizes()["decisions"] == 3


def test_what_if_configs_are_bounded(snap: GridSnapshot) -> None:
    """Each distinct set of edits builds one config, and the process keeps only the most recent ones."""
    from app.state import CONFIG_CACHE_SIZE

    state = _state(snap)
    assert state.effective_config({"NQUEUED_SAT_CAP": 300}) is state.effective_config({"NQUEUED_SAT_CAP": 300})
    for cap in range(1, CONFIG_CACHE_SIZE + 20):
        state.effective_config({"NQUEUED_SAT_CAP": cap})
    assert state.sizes()["configs"] == CONFIG_CACHE_SIZE


def test_one_grid_cache_per_loaded_snapshot(snap: GridSnapshot) -> None:
    """The GridCache belongs to the loaded snapshot, survives a config reload and is replaced with the snapshot."""
    state = _state(snap)
    cache = state.grid_cache()
    assert cache.snap is state.snapshot() and state.grid_cache() is cache
    assert dataclasses.replace(state.source(), config=Config()).grid is cache  # what a config reload does
    state.reset(Source(GridSnapshot.from_dict(snap.to_dict()), Config(), "reloaded"))
    assert state.grid_cache() is not cache and state.grid_cache().snap is state.snapshot()


@pytest.mark.parametrize("module", ["queues", "nuclei", "tuning", "task", "queue"])
def test_page_layouts_run_no_brokerage_and_start_no_thread(app_client, monkeypatch, module: str) -> None:
    """Building a page (no task in the URL) brokers nothing and starts nothing; its callbacks do that afterwards."""
    import dash

    from app.main import services

    def forbidden(*_a: object, **_k: object) -> None:
        raise AssertionError("a page layout ran a brokerage or started a thread")

    for name in ("job_decision", "nucleus_decision", "stabilizer_frame"):
        monkeypatch.setattr(services.state, name, forbidden)
    monkeypatch.setattr(services.jobs, "start", forbidden)
    params = {"task": {"id": "1"}, "queue": {"name": "AGLT2_Q2"}}.get(module, {})
    tree = str(dash.page_registry[f"app.pages.{module}"]["layout"](**params))
    assert "failed:" not in tree and "AssertionError" not in tree


def test_default_task_is_picked_by_a_callback(app_client) -> None:
    """Without a task in the URL the pick callback opens on a showcase task; a URL's task is kept."""
    from app.callbacks.detail import update_queue_stabilizer, update_task_jobs
    from app.callbacks.nuclei import pick_default_task as pick_nucleus_task
    from app.callbacks.queues import pick_default_task

    assert pick_default_task(None) in {1, 2} and pick_default_task(7) == 7
    assert pick_nucleus_task(None) in {3, 4}
    assert "queues kept" in str(update_task_jobs(1)) and "alice" in str(update_queue_stabilizer("BNL-ATLAS_Q9"))


def test_cli_registers_core_commands_and_the_serve_plugin(monkeypatch) -> None:
    """`brokerage` has the core's subcommands and the app's `serve`; a broken plugin fails loudly."""
    from brokerage.cli import main as cli

    ctx = click.Context(cli.main)
    assert {"db", "nucleus", "report", "serve", "jobs", "snapshot"} <= set(cli.main.list_commands(ctx))
    assert cli.main.get_command(ctx, "serve") is not None

    class Broken:
        name = "broken"

        def load(self) -> click.Command:
            raise ImportError("no module named 'missing'")

    monkeypatch.setattr(cli, "entry_points", lambda group, **kw: [Broken()])
    with pytest.raises(ImportError, match="missing"):
        cli.main.get_command(ctx, "broken")
