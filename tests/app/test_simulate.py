"""Simulation page: request parsing, the job, the result view and the JSON API."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from brokerage.model.gdpconfig import Config


def _text(component: Any) -> str:
    return json.dumps(component.to_plotly_json() if hasattr(component, "to_plotly_json") else component,
                      default=lambda o: o.to_plotly_json() if hasattr(o, "to_plotly_json") else str(o))  # fmt: skip


def test_request_names_bad_hours_and_seed() -> None:
    """hours must be in (0, 48] and seed an integer: the message names the field and what is allowed."""
    from app.services.simulations import SimulationRequestError, parse_request

    for query, words in (({"hours": "0"}, "hours: '0' is not allowed"), ({"hours": "99"}, "at most 48"),
                         ({"hours": "x"}, "hours"), ({"seed": "-1"}, "seed: '-1' is not allowed")):  # fmt: skip
        with pytest.raises(SimulationRequestError, match=words):
            parse_request(Config(), query)
    req, refused = parse_request(Config(), {"hours": "2", "THROTTLE_THRESHOLD": "1.5", "NQUEUED_SAT_CAP": "0"})
    assert req.hours == 2 and req.overrides == {"THROTTLE_THRESHOLD": 1.5} and "NQUEUED_SAT_CAP" in refused
    assert req.labels == ["what-if"] and parse_request(Config(), {"compare": "1", "THROTTLE_THRESHOLD": "1"})[0].labels == [
        "stored", "what-if"]  # fmt: skip


def _wait(sims: Any, job_id: str) -> Any:
    for _ in range(600):
        state = sims.poll(job_id)
        if state.finished:
            return state
        time.sleep(0.05)
    raise AssertionError("the simulation did not finish")


def test_simulation_job_and_its_view(app_client, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stored-vs-what-if job finishes with two runs; the view shows the headline, the shares and the rules."""
    from app.callbacks.simulate import result_view
    from app.main import services
    from app.services.simulations import parse_request
    from brokerage.runs import engine

    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))
    req, _ = parse_request(services.state.config(), {"hours": "1", "compare": "1", "THROTTLE_THRESHOLD": "0.5"})
    job_id, _state = services.simulations.start(req)
    state = _wait(services.simulations, job_id)
    assert state.state == "done", state.error
    result = state.result
    assert result["labels"] == ["stored", "what-if"] and len(result["runs"]) == 2
    text = _text(result_view(result))
    assert "Headline" in text and "jobs finished" in text and "Global shares over time" in text
    from app.viewmodels.simulate import task_change_rows

    changes = task_change_rows(result)
    assert changes and {"time_h", "task", "from", "to", "cause"} <= set(changes[0])
    assert all(r["cause"] for r in changes) and "Task status changes" in text
    assert services.simulations.start(req)[0] == job_id  # the same request joins the same job


def start(client: Any, url: str) -> Any:
    """POST URL with the CSRF token (the cookie any answer sets, repeated in the X-CSRF-Token header)."""
    client.get("/api/overview")
    return client.post(url, headers={"X-CSRF-Token": client.get_cookie("brokerage_csrf").value})


def test_api_simulation_starts_then_answers(app_client, monkeypatch: pytest.MonkeyPatch) -> None:
    """POST /api/simulation (with the CSRF token) starts the run (202 while it runs), GET then answers 200 with the
    result; bad hours are a JSON 400."""
    from brokerage.runs import engine

    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))
    bad = start(app_client, "/api/simulation?hours=-3")
    assert bad.status_code == 400 and "hours" in bad.get_json()["error"]
    assert start(app_client, "/api/simulation?hours=0.5&seed=3").status_code in (200, 202)
    for _ in range(600):
        r = app_client.get("/api/simulation?hours=0.5&seed=3")
        if r.status_code == 200:
            break
        assert r.status_code == 202
        time.sleep(0.05)
    doc = r.get_json()
    assert doc["state"] == "done" and doc["result"]["runs"][0]["headline"]["hours"] == 0.5


def test_finished_runs_are_stored_and_served(app_client, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """A finished simulation keeps each run in the database with its grid and config versions; /api/simulation/runs
    lists them and /api/simulation/runs/<id> serves one (an unknown id is a 404 naming the stored ones)."""
    from app.main import services
    from app.services.simulations import parse_request
    from brokerage.runs import engine
    from brokerage.store.database import make_engine
    from brokerage.store.schema import upgrade

    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))
    db = make_engine(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    upgrade(db)
    monkeypatch.setattr(services.state, "engine", lambda: db)
    req, _ = parse_request(services.state.config(), {"hours": "0.5", "seed": "9", "compare": "1",
                                                     "THROTTLE_THRESHOLD": "0.5"})  # fmt: skip
    job_id, _ = services.simulations.start(req)
    state = _wait(services.simulations, job_id)
    assert state.state == "done" and state.result["run_ids"] == [1, 2]
    runs = app_client.get("/api/simulation/runs").get_json()["runs"]
    assert [(r["run_id"], r["label"], r["seed"]) for r in runs] == [(2, "what-if", 9), (1, "stored", 9)]
    assert runs[0]["overrides"] == {"THROTTLE_THRESHOLD": 0.5} and runs[1]["overrides"] == {}
    one = app_client.get("/api/simulation/runs/2").get_json()
    assert one["result"]["headline"]["hours"] == 0.5
    missing = app_client.get("/api/simulation/runs/7")
    assert missing.status_code == 404 and "newest: 2, 1" in missing.get_json()["error"]
    db.dispose()


def test_runs_api_without_a_database_says_so(app_client) -> None:
    """A grid read from a file stores no runs: the list is empty with a note, a bad limit is a 400."""
    doc = app_client.get("/api/simulation/runs").get_json()
    assert doc["runs"] == [] and "not stored" in doc["note"]


def test_task_commands_in_a_request_are_checked_and_shown(
    app_client, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """cmd=HOURSh:TASK:COMMAND: a malformed or late one is refused naming cmd; a valid one runs and the result view
    lists it with its outcome (pause of a running task applied)."""
    from app.callbacks.simulate import result_view
    from app.main import services
    from app.services.simulations import SimulationRequestError, parse_request
    from brokerage.runs import engine

    for bad, words in (("1h:5:explode", "cmd: 'explode' is not a task command"), ("9h:5:pause", "not within the 2")):
        with pytest.raises(SimulationRequestError, match=words):
            parse_request(Config(), {"hours": "2", "cmd": bad})
    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))
    req, _ = parse_request(services.state.config(), {"hours": "1", "cmd": "0.5h:5:pause"})
    with pytest.raises(SimulationRequestError, match="cmd: task 77 is not a task of the grid"):
        services.simulations.start(parse_request(services.state.config(), {"hours": "1", "cmd": "0.5h:77:pause"})[0])
    job_id, _ = services.simulations.start(req)
    state = _wait(services.simulations, job_id)
    assert state.state == "done", state.error
    cmds = state.result["runs"][0]["commands"]
    assert [(c["task"], c["command"], c["outcome"]) for c in cmds] == [(5, "pause", "applied")]
    assert "Task commands" in _text(result_view(state.result))


def test_task_states_extend_into_a_stored_simulation(
    app_client, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """A stored run of the current grid version is offered on the task states page; choosing it adds its task
    transitions to the diagram as simulated ones; a run of another grid version is not offered."""
    from app.callbacks import tasks as cb
    from app.main import services
    from brokerage.model.gdpconfig import Config as Cfg
    from brokerage.store.database import make_engine
    from brokerage.store.schema import upgrade
    from brokerage.store.sim_runs import save_run

    db = make_engine(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    upgrade(db)
    monkeypatch.setattr(services.state, "engine", lambda: db)
    snap = services.state.snapshot()
    result = {"headline": {}, "task_changes": [{"time_h": 0.5, "task": 2, "from": "ready", "to": "running",
                                                "cause": "JobGenerator: first jobs submitted"}]}  # fmt: skip
    run_id = save_run(db, result, snap, Cfg(), 6.0, 0, "stored")
    from brokerage.model.snapshot import GridSnapshot

    other = GridSnapshot(snap.tables, snap.taken_at, snap.snapshot_id, snap.version + 1)
    save_run(db, result, other, Cfg(), 6.0, 0, "stored")
    assert [o["value"] for o in cb.future_options()] == [run_id]
    view = _text(cb.update_tasks("all", run_id))
    assert "1 simulated" in view and "the next 6 h simulated (run 1)" in view
    db.dispose()


def test_a_grid_without_the_simulators_tables_is_a_400_naming_them(app_client, monkeypatch: pytest.MonkeyPatch) -> None:
    """/api/simulation on a grid without work queues, share values and queue slots answers 400 naming each; the
    page's Run says the same inline (SimulationRequestError), and nothing is started."""
    from app.main import services
    from tests.builders import grid, queue, task

    bare = grid([queue("A", "S1")], [task(1)])
    monkeypatch.setattr(services.state, "snapshot", lambda: bare)
    r = start(app_client, "/api/simulation?hours=1&seed=77")
    assert r.status_code == 400
    error = r.get_json()["error"]
    assert "work_queues: no rows" in error and "queue_slots: no rows" in error and "gshares: no rows" in error


def test_any_jobs_history_is_replayed_and_shown(app_client, monkeypatch: pytest.MonkeyPatch) -> None:
    """POST /api/simulation/job/<PandaID>?hours=1 replays the run until that job is final and answers its steps with
    their causes (the job generated first); the page's view names the queue; an id the run never made is a failed
    job whose error names the range; the result view has the datasets, retry and job-history cards."""
    from app.callbacks.simulate import history_view
    from app.main import services
    from brokerage.runs import engine
    from brokerage.sim.engine import Simulation

    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))
    assert start(app_client, "/api/simulation/job/0?hours=1").status_code == 400
    full = Simulation(services.state.snapshot(), services.state.effective_config({}), seed=2).run(1)
    ev = full.log.frame()
    pid = int(ev.loc[ev["rule"] == "dispatch", "id"].iloc[0])  # a job that moved in the run
    assert start(app_client, f"/api/simulation/job/{pid}?hours=1&seed=2").status_code in (200, 202)
    for _ in range(600):
        r = app_client.get(f"/api/simulation/job/{pid}?hours=1&seed=2")
        if r.status_code == 200:
            break
        assert r.status_code == 202
        time.sleep(0.05)
    doc = r.get_json()
    assert doc["state"] == "done", doc
    out = doc["result"]
    assert out["panda_id"] == pid and out["steps"] and out["steps"][0]["cause"].startswith("pilot getJob")
    assert out["job"]["queue"] in _text(history_view(out))
    start(app_client, "/api/simulation/job/99999999?hours=0.1&seed=2")
    for _ in range(600):
        bad = app_client.get("/api/simulation/job/99999999?hours=0.1&seed=2").get_json()
        if bad["state"] != "running":
            break
        time.sleep(0.05)
    assert bad["state"] == "failed" and "this run made jobs 1 to" in bad["error"]


def test_result_view_has_datasets_retries_and_job_history() -> None:
    """A run with work (the simulator tests' three-task grid, one input retried with more memory) carries per-task
    dataset counters that add up and the retry module's decisions; the view shows both cards and the job-history
    box."""
    from app.callbacks.simulate import result_view
    from app.viewmodels.simulate import dataset_rows, retry_rows
    from brokerage.sim.engine import Simulation
    from tests.core.sim.test_datasets import _snap

    sim = Simulation(_snap(True), Config(), seed=1)
    sim.true_ram_mb.update({1: 5000.0, 2: 5000.0})
    run = sim.run(6).result()
    result = {"labels": ["stored"], "runs": [run], "hours": 6.0, "seed": 1, "snapshot": "test", "overrides": {},
              "commands": []}  # fmt: skip
    rows = dataset_rows(result)
    assert len(rows) == 3 and all(
        r["in_ready"] + r["in_running"] + r["in_finished"] + r["in_failed"] == r["in_nFiles"] for r in rows)  # fmt: skip
    assert any("increase_memory" in r["action"] and r["code"] == 1235 for r in retry_rows(result))
    text = _text(result_view(result))
    assert "Datasets, files and events per task" in text and "Retry module decisions" in text
    assert run["headline"]["memory_increases"] > 0


def test_cards_say_what_they_hold_and_no_nucleus_is_plotted_apart() -> None:
    """Issue 33 item 9: the retry, task-status and rule cards each lead with a sentence of what they hold (counts that
    match their tables); the per-nucleus chart leaves out '(no nucleus ...)', which gets a chart of its own."""
    from app.callbacks.simulate import result_view
    from app.viewmodels import simulate as vm
    from brokerage.sim.engine import Simulation
    from brokerage.sim.output import NO_NUCLEUS
    from tests.core.sim.test_datasets import _snap

    sim = Simulation(_snap(True), Config(), seed=1)
    sim.true_ram_mb.update({1: 5000.0, 2: 5000.0})
    run = sim.run(6).result()
    result = {"labels": ["stored"], "runs": [run], "hours": 6.0, "seed": 1, "snapshot": "test", "overrides": {},
              "commands": []}  # fmt: skip
    failed = sum(r["jobs"] for r in vm.retry_rows(result))
    assert vm.retry_summary(result).startswith(f"{failed:,} failed jobs with {len(vm.retry_rows(result))} error codes")
    changes = vm.task_change_rows(result)
    assert vm.task_change_summary(result).startswith(f"{len(changes):,} status changes on")
    assert vm.event_summary(result).startswith(f"{len(vm.event_rows(result))} rules moved jobs or tasks")
    assert run["nuclei"].get(NO_NUCLEUS) is not None
    nuclei = vm.share_figure(result, "running", "nuclei")
    assert all(t["name"] != NO_NUCLEUS for t in nuclei["data"])
    apart = vm.no_nucleus_figure(result)
    assert apart["data"][0]["y"] == run["nuclei"][NO_NUCLEUS]["running"]
    text = _text(result_view(result))
    assert all(i in text for i in ("sim-retry-summary", "sim-task-summary", "sim-event-summary", "sim-no-nucleus"))
    empty = {**result, "runs": [{**run, "retries": [], "task_changes": [], "events": []}]}
    assert vm.retry_summary(empty).startswith("No failed job") and vm.task_change_summary(empty).startswith("No task")
    assert vm.event_summary(empty) == "No rule moved a job or a task in this run."
