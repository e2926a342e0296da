"""Pending tasks page (/pending): every waiting task whose brokerage found nothing, and why."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from app.components.guard import guarded
from app.components.layout import loading, page_header
from app.main import state

dash.register_page(__name__, path="/pending", title="Pending tasks · PanDA brokerage", name="Pending tasks")

POLL_MS = 300  # the job of the stored config's grid run is polled this often while it runs


@guarded("Pending tasks page")
def layout(criteria: str | None = None, **_: Any) -> html.Div:
    """Header, a progress bar while the grid run is computed, and (after the page shows) the pending table;
    ?criteria=CODE keeps the tasks in which that criteria code removed candidates (the Queues page links here)."""
    return html.Div(
        [
            page_header("Pending tasks and why",
                        "Every waiting task whose brokerage under the stored config found no queue or nucleus: a throttle, "
                        "every queue skipped (with the criteria that removed most), or no nucleus. Sort and filter the table; "
                        "a task id opens the task."),
            html.Div([html.Div("Brokering every waiting task under the stored config…", className="small text-muted"),
                      dbc.Progress(id=ids.PENDING_PROGRESS, value=0, label="", style={"height": "14px"})],
                     id=ids.PENDING_PROGRESS_BOX, style={"display": "none"}),
            loading(html.Div(id=ids.PENDING_CONTENT)),
            dcc.Store(id=ids.PENDING_TRIGGER, data=state.snapshot().key),
            dcc.Store(id=ids.PENDING_CRITERIA, data=(criteria or "").strip() or None),
            dcc.Interval(id=ids.PENDING_POLL, interval=POLL_MS, disabled=True),
        ]
    )  # fmt: skip
