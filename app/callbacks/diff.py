"""Grid diff callbacks: the table of changed brokerages and their causes, computed as a job (progress, Cancel)."""

from __future__ import annotations

from typing import Any

from dash import Input, Output, State, callback, ctx, html, no_update
from dash.exceptions import PreventUpdate

from app import ids_diff as ids
from app.callbacks.urlstate import url_sync
from app.components.layout import empty_state, error_alert, failure_alert, grid, link_col
from app.main import services
from app.services.diffs import DiffError
from app.services.jobs import JobsBusy, JobState
from app.services.roles import client_address
from app.viewmodels import diff as vm

FIRST_WAIT_S = 0.5  # the request that starts the job waits this long: a kept or quick diff shows without a poll
_SHOW, _HIDE = {"display": "block"}, {"display": "none"}


def diff_view(old: int | None, new: int | None, task: Any) -> Any:
    """The summary sentence and the table of changed brokerages, or why there is none (waits for the diff's job)."""
    pick = _pick(old, new, task)
    if not isinstance(pick, tuple):
        return pick
    try:
        return result_view(services.diffs.diff(*pick))
    except (DiffError, ValueError) as exc:
        return empty_state("Cannot compare", str(exc))


def _pick(old: int | None, new: int | None, task: Any) -> Any:
    """(old, new, task) to compare, or the view saying why there is nothing to compare (None: the page says so)."""
    if old is None and new is None:
        return None  # nothing stored to compare: the page says so above
    if old is None or new is None:
        return empty_state("Pick two versions", "Choose the older and the newer grid version above.")
    if old == new:
        return empty_state("The same version twice", f"v{old} against itself has no difference; pick another one.")
    try:
        return int(old), int(new), int(task) if task not in (None, "") else None
    except ValueError as exc:
        return empty_state("Cannot compare", str(exc))


def result_view(diff: dict[str, Any]) -> Any:
    """The summary sentence and the table of changed brokerages of one diff."""
    rows = vm.rows(diff)
    sentence = html.Div(vm.summary(diff), className="small mb-1", id="diff-sentence")
    if not rows:
        return html.Div([sentence, empty_state("No brokerage changed", "Every compared task keeps its top candidate, "
                                                 "its top-10 set and its pending state.")])  # fmt: skip
    cols = [link_col("task", "/task?id=", pinned="left", maxWidth=100), {"field": "broker", "maxWidth": 100},
            {"field": "what", "headerName": "what changed", "flex": 2, "wrapText": True, "autoHeight": True, "tooltipField": "what"},
            {"field": "because", "flex": 5, "wrapText": True, "autoHeight": True, "tooltipField": "because"},
            {"field": "input", "maxWidth": 120}, {"field": "attributed to", "maxWidth": 130}]  # fmt: skip
    return html.Div([sentence, grid(rows, cols, id_=ids.DIFF_GRID, height=560, page_size=50, export_name="diff.csv")])


def job_outputs(job_id: str | None, state: JobState) -> tuple[Any, ...]:
    """(content, job id, poll disabled, progress box style, value, label) for the diff job's STATE."""
    if state.state == "running":
        return no_update, job_id, False, _SHOW, max(state.percent, 2), state.label or "starting…"
    if state.state == "done":
        return result_view(state.result), None, True, _HIDE, 100, ""
    if state.state == "cancelled":
        note = empty_state("Diff cancelled", "Pick the versions again to start it again.")
        return note, None, True, _HIDE, 0, ""
    if state.error.startswith("DiffError: "):
        return empty_state("Cannot compare", state.error.removeprefix("DiffError: ")), None, True, _HIDE, 0, ""
    return failure_alert("Grid diff", state.error or state.state), None, True, _HIDE, 0, ""


@callback(
    Output(ids.DIFF_CONTENT, "children"),
    Output(ids.DIFF_JOB, "data"),
    Output(ids.DIFF_POLL, "disabled"),
    Output(ids.DIFF_PROGRESS_BOX, "style"),
    Output(ids.DIFF_PROGRESS, "value"),
    Output(ids.DIFF_PROGRESS, "label"),
    Input(ids.DIFF_FROM, "value"),
    Input(ids.DIFF_TO, "value"),
    Input(ids.DIFF_TASK, "value"),
    Input(ids.DIFF_POLL, "n_intervals"),
    Input(ids.DIFF_CANCEL, "n_clicks"),
    State(ids.DIFF_JOB, "data"),
)
def drive_diff(old: Any, new: Any, task: Any, _tick: int | None, _cancel: int | None, job_id: str | None) -> Any:
    """Start the diff of the picked versions as a job (a kept one answers at once), poll it, or cancel it."""
    trigger = ctx.triggered_id
    try:
        if trigger == ids.DIFF_POLL:
            if not job_id:
                raise PreventUpdate
            return job_outputs(job_id, services.jobs.poll(job_id))
        if trigger == ids.DIFF_CANCEL:
            if job_id:
                services.jobs.cancel(job_id)
            return job_outputs(job_id, JobState("cancelled"))
        pick = _pick(old, new, task)
        if not isinstance(pick, tuple):
            return pick, None, True, _HIDE, 0, ""
        job_id, state = services.diffs.start(*pick, client=client_address())
        if state.state == "running":
            state = services.jobs.wait(job_id, FIRST_WAIT_S)
        return job_outputs(job_id, state)
    except PreventUpdate:
        raise
    except (DiffError, JobsBusy) as exc:
        return empty_state("Cannot compare", str(exc)), None, True, _HIDE, 0, ""
    except Exception as exc:  # error boundary: say what failed inline
        return error_alert("Grid diff", exc), None, True, _HIDE, 0, ""


url_sync(
    ids.DIFF_URL_SINK,
    {"from": (ids.DIFF_FROM, "value"), "to": (ids.DIFF_TO, "value"), "task": (ids.DIFF_TASK, "value")},
)
