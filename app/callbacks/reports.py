"""Report export on the tuning page: a job with progress and Cancel, then a download."""

from __future__ import annotations

import base64
import logging
from typing import Any

from dash import Input, Output, State, callback, clientside_callback, html, no_update
from dash.exceptions import PreventUpdate

from app import ids
from app.callbacks.jobdrive import JobControls, drive_job, fired
from app.components.layout import error_alert, failure_alert
from app.main import services
from app.services.jobs import JobsBusy, JobState
from app.services.reports import INLINE_LIMIT, MadeReport, ReportRefused
from app.services.roles import client_address
from app.viewmodels import queues as qvm
from brokerage.model.words import count

log = logging.getLogger(__name__)

FIRST_WAIT_S = 0.5  # the request that starts the job waits this long: a one-task report downloads without a poll
_SHOWN = {"visibility": "visible", "height": "12px"}
_HIDDEN = {"visibility": "hidden", "height": "12px"}
_IDLE = (None, True, 0, "", _HIDDEN, False, True)  # job id, poll disabled, bar value, label, style, buttons


def refused(raw: dict[str, Any] | None) -> Any:
    """Why the current edits cannot be exported (a status line), or None when they can."""
    edits = services.whatif.edits(raw)
    if not edits.errors:
        return None
    names = ", ".join(sorted(edits.errors))
    return html.Span(f"Not exported: fix the refused edits first ({names}).", className="text-danger")


def delivered(made: MadeReport, overrides: dict[str, Any]) -> tuple[Any, Any]:
    """(download data, status with a download link) of a filed report; a file above INLINE_LIMIT is not pushed
    through the callback: its data is {"url": link}, which the browser fetches (the clientside callback below)."""
    what = f"{count(len(overrides), 'what-if edit')}, with the before/after" if overrides else "the stored config"
    status = html.Span(
        [
            f"{made.name} ({made.size / 1e6:.1f} MB) under {what}: ",
            html.A("download", href=made.url, id="tune-report-link"),
        ]
    )
    if made.size > INLINE_LIMIT:
        return {"url": made.url}, status
    payload = {
        "content": base64.b64encode(made.path.read_bytes()).decode(),
        "filename": made.name,
        "base64": True,
        "type": made.media_type,
    }
    return payload, status


def export(scope: str, fmt: str, task: Any, raw: dict[str, Any] | None) -> tuple[Any, Any]:
    """Build the report under the current edits and wait for it; (download data, or {"url"} of a big file, or None;
    status with a link)."""
    if (why := refused(raw)) is not None:
        return None, why
    overrides = dict(services.whatif.edits(raw).overrides)
    made = services.reports.make(scope, fmt, qvm.parse_task(task), overrides)
    return delivered(made, overrides)


def outputs(job_id: str | None, state: JobState, raw: dict[str, Any] | None) -> tuple[Any, ...]:
    """(download, link to fetch, status, job id, poll disabled, bar value, bar label, bar style, export disabled,
    cancel disabled)."""
    if state.state == "running":
        label = state.label or "starting…"
        return no_update, no_update, no_update, job_id, False, max(state.percent, 2), label, _SHOWN, True, False
    if state.state == "done":
        try:
            made = services.reports.save(state.result)
        except ReportRefused as exc:  # beyond this user's report storage: said on the page, nothing written
            return None, no_update, failure_alert("Report", str(exc)), *_IDLE
        payload, status = delivered(made, dict(services.whatif.edits(raw).overrides))
        return *_split(payload), status, *_IDLE
    if state.state == "cancelled":
        return no_update, no_update, "Cancelled: no report was written.", *_IDLE
    return None, no_update, failure_alert("Report", state.error or state.state), *_IDLE


# a big report is not pushed through a callback (megabytes of base64 in one JSON answer): the browser follows its
# download link (served with Content-Disposition: attachment, so the page stays)
clientside_callback(
    """
    function(todo) {
        if (!todo || !todo.url) { return window.dash_clientside.no_update; }
        const a = document.createElement("a");
        a.href = todo.url;
        a.download = "";
        document.body.appendChild(a);
        a.click();
        a.remove();
        return todo.url;
    }
    """,
    Output(ids.TUNE_REPORT_FETCHED, "data"),
    Input(ids.TUNE_REPORT_FETCH, "data"),
    prevent_initial_call=True,
)


# Cancel is live from the click on: a Cancel before the starting request answered cancels the job the request names
clientside_callback(
    "function(n) { return n ? false : window.dash_clientside.no_update; }",
    Output(ids.TUNE_REPORT_CANCEL, "disabled", allow_duplicate=True),
    Input(ids.TUNE_REPORT_BUTTON, "n_clicks"),
    prevent_initial_call=True,
)


def _split(payload: Any) -> tuple[Any, Any]:
    """(inline download data, link to fetch) of DELIVERED's first value."""
    if isinstance(payload, dict) and "url" in payload:
        return no_update, payload
    return payload, no_update


@callback(
    Output(ids.TUNE_REPORT_DOWNLOAD, "data"),
    Output(ids.TUNE_REPORT_FETCH, "data"),
    Output(ids.TUNE_REPORT_STATUS, "children"),
    Output(ids.TUNE_REPORT_JOB, "data"),
    Output(ids.TUNE_REPORT_POLL, "disabled"),
    Output(ids.TUNE_REPORT_PROGRESS, "value"),
    Output(ids.TUNE_REPORT_PROGRESS, "label"),
    Output(ids.TUNE_REPORT_PROGRESS, "style"),
    Output(ids.TUNE_REPORT_BUTTON, "disabled"),
    Output(ids.TUNE_REPORT_CANCEL, "disabled"),
    Input(ids.TUNE_REPORT_BUTTON, "n_clicks"),
    Input(ids.TUNE_REPORT_POLL, "n_intervals"),
    Input(ids.TUNE_REPORT_CANCEL, "n_clicks"),
    State(ids.TUNE_REPORT_SCOPE, "value"),
    State(ids.TUNE_REPORT_FORMAT, "value"),
    State(ids.TUNE_TASK, "value"),
    State(ids.TUNE_RAW, "data"),
    State(ids.TUNE_REPORT_JOB, "data"),
    prevent_initial_call=True,
)
def drive_export(
    n_clicks: int | None, _tick: int | None, _cancel: int | None, scope: str, fmt: str, task: Any,
    raw: dict[str, Any] | None, job_id: str | None,
) -> tuple[Any, ...]:  # fmt: skip
    """Start the report job (Export), poll its progress, or cancel it; once written the browser downloads it."""
    controls = JobControls(ids.TUNE_REPORT_POLL, ids.TUNE_REPORT_CANCEL, services.jobs.poll, services.jobs.cancel)
    try:
        return drive_job(
            fired(), job_id, controls,
            show=lambda jid, state: outputs(jid, state, raw),
            start=lambda: start_export(n_clicks, scope, fmt, task, raw),
            named=lambda: named_job(scope, fmt, task, raw),
        )  # fmt: skip
    except PreventUpdate:
        raise
    except JobsBusy as exc:
        return None, no_update, html.Span(str(exc), className="text-danger"), *_IDLE
    except Exception as exc:  # an unknown task or a bad edit is said inline, never a traceback
        log.exception("report export failed")
        return None, no_update, error_alert("Report", exc), *_IDLE


def named_job(scope: str, fmt: str, task: Any, raw: dict[str, Any] | None) -> str | None:
    """The report job the page's current request names (the one Export started), or None when it names none."""
    if refused(raw) is not None or (scope == "task" and qvm.parse_task(task) is None):
        return None
    return services.reports.job_id(scope, fmt, qvm.parse_task(task), services.whatif.edits(raw).overrides)


def start_export(n_clicks: int | None, scope: str, fmt: str, task: Any, raw: dict[str, Any] | None) -> tuple[Any, ...]:
    """Start (or join) the report job of the request and wait a moment for it: a one-task report downloads at once."""
    if not n_clicks:
        raise PreventUpdate
    if (why := refused(raw)) is not None:
        return None, no_update, why, *_IDLE
    overrides = dict(services.whatif.edits(raw).overrides)
    job_id, state = services.reports.start(scope, fmt, qvm.parse_task(task), overrides, client_address())
    if state.state == "running":
        state = services.jobs.wait(job_id, FIRST_WAIT_S)
    out = outputs(job_id, state, raw)
    # a new export first clears the previous report's line, so an old file is never taken for the new one
    return (*out[:2], "" if out[2] is no_update else out[2], *out[3:])
