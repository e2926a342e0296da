"""Report export on the tuning page: a background job with progress, then a download."""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from typing import Any

from dash import Input, Output, State, callback, clientside_callback, html, no_update

from app import ids
from app.callbacks.progress import progress_bar
from app.components.layout import error_alert
from app.main import services
from app.services.reports import INLINE_LIMIT
from app.viewmodels import queues as qvm
from brokerage.model.words import count

log = logging.getLogger(__name__)

_SHOWN = {"visibility": "visible", "height": "12px"}
_HIDDEN = {"visibility": "hidden", "height": "12px"}


def export(
    scope: str,
    fmt: str,
    task: Any,
    raw: dict[str, Any] | None,
    set_progress: Callable[[tuple[int, str]], None] | None = None,
) -> tuple[Any, Any]:
    """Build the report under the current edits; return (download data or None, status with a download link)."""
    edits = services.whatif.edits(raw)
    if edits.errors:
        refused = ", ".join(sorted(edits.errors))
        return None, html.Span(f"Not exported: fix the refused edits first ({refused}).", className="text-danger")

    progress = progress_bar(set_progress, "tasks")

    made = services.reports.make(scope, fmt, qvm.parse_task(task), edits.overrides, progress)
    what = f"{count(len(edits.overrides), 'what-if edit')}" if edits.overrides else "the stored config"
    status = html.Span(
        [
            f"{made.name} ({made.size / 1e6:.1f} MB) under {what}: ",
            html.A("download", href=made.url, id="tune-report-link"),
        ]
    )
    if made.size > INLINE_LIMIT:
        return None, status
    payload = {
        "content": base64.b64encode(made.path.read_bytes()).decode(),
        "filename": made.name,
        "base64": True,
        "type": made.media_type,
    }
    return payload, status


# a new export or a cancel first clears the previous report's line, so an old file is never taken for the new one
clientside_callback(
    """
    function(run, cancel) {
        const t = (window.dash_clientside.callback_context.triggered || [])[0] || {};
        return (t.prop_id || "").startsWith("CANCEL_ID.") ? "Cancelled: no report was written." : "";
    }
    """.replace("CANCEL_ID", ids.TUNE_REPORT_CANCEL),
    Output(ids.TUNE_REPORT_STATUS, "children", allow_duplicate=True),
    Input(ids.TUNE_REPORT_BUTTON, "n_clicks"),
    Input(ids.TUNE_REPORT_CANCEL, "n_clicks"),
    prevent_initial_call=True,
)


@callback(
    Output(ids.TUNE_REPORT_DOWNLOAD, "data"),
    Output(ids.TUNE_REPORT_STATUS, "children"),
    Input(ids.TUNE_REPORT_BUTTON, "n_clicks"),
    State(ids.TUNE_REPORT_SCOPE, "value"),
    State(ids.TUNE_REPORT_FORMAT, "value"),
    State(ids.TUNE_TASK, "value"),
    State(ids.TUNE_RAW, "data"),
    background=True,
    progress=[Output(ids.TUNE_REPORT_PROGRESS, "value"), Output(ids.TUNE_REPORT_PROGRESS, "label")],
    running=[
        (Output(ids.TUNE_REPORT_BUTTON, "disabled"), True, False),
        (Output(ids.TUNE_REPORT_CANCEL, "disabled"), False, True),
        (Output(ids.TUNE_REPORT_PROGRESS, "style"), _SHOWN, _HIDDEN),
    ],
    cancel=[Input(ids.TUNE_REPORT_CANCEL, "n_clicks")],
    interval=300,
    prevent_initial_call=True,
)
def on_export(
    set_progress: Callable[[tuple[int, str]], None],
    n_clicks: int | None,
    scope: str,
    fmt: str,
    task: Any,
    raw: dict[str, Any] | None,
) -> tuple[Any, Any]:
    """Background job: build and write the report, showing progress; the browser then downloads it."""
    if not n_clicks:
        return no_update, no_update
    try:
        return export(scope, fmt, task, raw, set_progress)
    except Exception as exc:  # an unknown task or a bad edit is said inline, never a traceback
        log.exception("report export failed")
        return None, error_alert("Report", exc)
