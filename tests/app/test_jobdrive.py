"""One poll/cancel/start dispatch for the tuning page's three jobs; a Cancel before the start answered cancels the
job the page's request names (grid what-if, report, simulation alike)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from dash.exceptions import PreventUpdate

from app.callbacks.jobdrive import JobControls, drive_job
from app.services.jobs import JobState
from tests.app.test_jobs import _as_trigger


def _controls(log: list[tuple[str, str]]) -> JobControls:
    """Controls whose poll answers 'running' at 40 % and whose cancel is recorded in LOG."""
    return JobControls(
        "poll", "cancel", lambda jid: JobState("running", 40, "busy"), lambda jid: log.append(("cancel", jid))
    )


def _show(jid: str | None, state: JobState) -> tuple[Any, ...]:
    return jid, state.state, state.percent


def test_a_tick_shows_the_job_cancel_cancels_it_and_anything_else_starts_it() -> None:
    """A poll tick shows the polled state of the page's job; Cancel cancels the page's job; any other trigger starts."""
    log: list[tuple[str, str]] = []
    c = _controls(log)
    never: Callable[[], str | None] = lambda: pytest.fail("a known job id needs no name")  # noqa: E731
    assert drive_job("poll", "j1", c, show=_show, start=lambda: ("started",), named=never) == ("j1", "running", 40)
    assert drive_job("cancel", "j1", c, show=_show, start=lambda: ("started",), named=never) == ("j1", "cancelled", 0)
    assert log == [("cancel", "j1")]
    assert drive_job("run", None, c, show=_show, start=lambda: ("started",), named=never) == ("started",)


def test_a_cancel_merged_with_a_tick_cancels_and_an_edit_merged_with_one_starts() -> None:
    """Dash merges one callback's requests made before the first is sent into one call that fired both inputs
    (``fired``): a Cancel click that fired with a poll tick cancels the job, and a new edit that fired with one
    starts its job, where reading one triggered id would have shown the poll and lost them."""
    log: list[tuple[str, str]] = []
    c = _controls(log)
    never: Callable[[], str | None] = lambda: pytest.fail("a known job id needs no name")  # noqa: E731
    run = drive_job(["poll", "cancel"], "j1", c, show=_show, start=lambda: ("started",), named=never)
    assert run == ("j1", "cancelled", 0) and log == [("cancel", "j1")]
    run = drive_job(["poll", "edits"], "j1", c, show=_show, start=lambda: ("started",), named=never)
    assert run == ("started",)
    assert drive_job(["poll"], "j1", c, show=_show, start=lambda: ("started",), named=never) == ("j1", "running", 40)


def test_a_tick_without_a_job_changes_nothing() -> None:
    """A poll tick when the page holds no job id leaves the page as it is (PreventUpdate)."""
    with pytest.raises(PreventUpdate):
        drive_job("poll", None, _controls([]), show=_show, start=lambda: (), named=lambda: None)


def test_cancel_before_the_start_answered_cancels_the_named_job() -> None:
    """With no job id in the page yet, Cancel cancels the job the request names; with none named, nothing."""
    log: list[tuple[str, str]] = []
    c = _controls(log)
    assert drive_job("cancel", None, c, show=_show, start=lambda: (), named=lambda: "grid:x") == (
        "grid:x",
        "cancelled",
        0,
    )
    assert drive_job("cancel", None, c, show=_show, start=lambda: (), named=lambda: None) == (None, "cancelled", 0)
    assert log == [("cancel", "grid:x")]


@pytest.fixture
def recorded(app_client: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """The app's job service with start, wait and cancel recorded instead of run (every job stays 'running')."""
    from app.main import services

    seen: dict[str, list[str]] = {"start": [], "cancel": []}

    def start(job_id: str, *args: Any, **kw: Any) -> JobState:
        seen["start"].append(job_id)
        return JobState("running", 0, "waiting for a worker")

    monkeypatch.setattr(services.jobs, "start", start)
    monkeypatch.setattr(services.jobs, "snapshot", lambda snap: None)
    monkeypatch.setattr(services.jobs, "wait", lambda job_id, s: JobState("running", 0, "waiting for a worker"))
    monkeypatch.setattr(services.jobs, "cancel", lambda job_id: seen["cancel"].append(job_id))
    return seen


def test_grid_what_if_cancel_before_start_answered(recorded: dict[str, list[str]]) -> None:
    """The whole-grid job: Cancel with no job id in the page cancels the job the edits started."""
    from app import ids
    from app.callbacks.tuning import drive_grid_job

    raw = {"NQUEUED_SAT_CAP": 277}
    _as_trigger(f"{ids.TUNE_GRID_TRIGGER}.data", drive_grid_job, raw, None, None, None)
    out = _as_trigger(f"{ids.TUNE_GRID_CANCEL}.n_clicks", drive_grid_job, raw, None, 1, None)
    assert len(recorded["start"]) == 1 and recorded["cancel"] == recorded["start"]
    assert "Whole-grid run cancelled" in str(out[0].to_plotly_json())


def test_report_cancel_before_start_answered(recorded: dict[str, list[str]], snap: Any) -> None:
    """The report job: Cancel with no job id in the page cancels the report Export started (same scope, format,
    task and edits); the page says no report was written."""
    from app import ids
    from app.callbacks.reports import drive_export

    task = int(snap.tasks["jeditaskid"].iloc[0])
    args = ("task", "csv", task, {"NQUEUED_SAT_CAP": 277}, None)
    _as_trigger(f"{ids.TUNE_REPORT_BUTTON}.n_clicks", drive_export, 1, None, None, *args)
    out = _as_trigger(f"{ids.TUNE_REPORT_CANCEL}.n_clicks", drive_export, 1, None, 1, *args)
    assert len(recorded["start"]) == 1 and recorded["cancel"] == recorded["start"]
    assert out[2] == "Cancelled: no report was written."


def test_simulation_cancel_before_start_answered(recorded: dict[str, list[str]]) -> None:
    """The stored-vs-proposed simulation: Cancel with no job id in the page cancels the simulation Run started."""
    from app import ids
    from app.callbacks.tuning_future import drive_future

    raw = {"NQUEUED_SAT_CAP": 277}
    _as_trigger(f"{ids.TUNE_FUTURE_RUN}.n_clicks", drive_future, 1, None, None, raw, "2", None)
    out = _as_trigger(f"{ids.TUNE_FUTURE_CANCEL}.n_clicks", drive_future, 1, None, 1, raw, "2", None)
    assert len(recorded["start"]) == 1 and recorded["cancel"] == recorded["start"]
    assert "Simulation cancelled" in str(out[0].to_plotly_json())


def test_the_dashboards_report_under_edits_carries_the_before_after(app_client: Any, snap: Any) -> None:
    """The report job of the tuning page (work.report_file) under what-if edits writes the before/after: the JSON's
    "whatif" names the edit with its stored value and counts the decisions compared."""
    import json

    from app.main import services
    from app.services import work

    task = int(snap.tasks["jeditaskid"].iloc[0])
    src = services.state.source()
    made = work.report_file(lambda *_: None, src.snap, src.config, task, "json", {"NQUEUED_SAT_CAP": 1000}, "test")
    doc = json.loads(made.data)["whatif"]
    assert doc["edits"]["NQUEUED_SAT_CAP"]["whatif"] == 1000 and doc["decisions_compared"] >= 1
