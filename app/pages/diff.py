"""Grid diff page (/diff?from=V1&to=V2&task=ID): which tasks' brokerage changed between two grid versions, and why."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids_diff as ids
from app.components.guard import guarded
from app.components.layout import empty_state, loading, page_header, url_notice
from app.main import services
from app.viewmodels import diff as vm

dash.register_page(__name__, path="/diff", title="Grid diff · PanDA brokerage", name="Grid diff")

POLL_MS = 300  # the diff job is polled this often while it runs


def _int(value: Any) -> int | None:
    text = str(value or "").strip().lstrip("vV")
    return int(text) if text.isdigit() else None


@guarded("Grid diff page")
def layout(**query: Any) -> html.Div:
    """Two version pickers and an optional task; the diff table fills in (a job, with progress and Cancel) below."""
    versions = services.diffs.versions()
    header = page_header(
        "What changed between two grid versions",
        "Every waiting task brokered on both versions under the stored gdpconfig; for each changed top candidate, "
        "top-10 set or pending state, the input that caused it, found by replaying the old grid with one input "
        "table, then one queue's, link's or endpoint's rows, of the new one.",
    )
    nothing = None
    if len(versions) < 2:
        why = (
            "This dashboard reads a snapshot file; grid versions live in the database."
            if not versions and services.state.engine() is None
            else "Only one grid version is stored: import a newer grid (`brokerage db import FILE`) to compare."
        )
        nothing = empty_state("Nothing to compare", why)
    options = vm.version_options(versions)
    known = {o["value"] for o in options}
    old_default, new_default = vm.default_pair(versions)
    old, new = _int(query.get("from")), _int(query.get("to"))
    notices = [
        url_notice(f"from: no grid version {query['from']} is stored") if query.get("from") and old not in known else None,
        url_notice(f"to: no grid version {query['to']} is stored") if query.get("to") and new not in known else None,
    ]  # fmt: skip
    return html.Div(
        [
            header,
            nothing,
            *[n for n in notices if n],
            html.Div(
                [html.Div([html.Label("from (older)"), dcc.Dropdown(id=ids.DIFF_FROM, options=options, value=old if old in known else old_default, clearable=False)], className="diff-pick"),
                 html.Div([html.Label("to (newer)"), dcc.Dropdown(id=ids.DIFF_TO, options=options, value=new if new in known else new_default, clearable=False)], className="diff-pick"),
                 html.Div([html.Label("task (optional)"), dbc.Input(id=ids.DIFF_TASK, type="number", min=0, debounce=True, value=_int(query.get("task")), placeholder="every waiting task")])],
                className="controls", style={"display": "none"} if nothing else None,
            ),
            html.Div([html.Div("Brokering both versions and replaying the changed tasks…", className="small text-muted"),
                      html.Div([dbc.Progress(id=ids.DIFF_PROGRESS, value=0, label="", style={"height": "14px"},
                                             className="flex-grow-1"),
                                dbc.Button("Cancel", id=ids.DIFF_CANCEL, size="sm", color="secondary", outline=True,
                                           className="py-0 ms-2")], className="d-flex align-items-center")],
                     id=ids.DIFF_PROGRESS_BOX, style={"display": "none"}),
            loading(html.Div(id=ids.DIFF_CONTENT)),
            dcc.Store(id=ids.DIFF_URL_SINK),
            dcc.Store(id=ids.DIFF_JOB),
            dcc.Interval(id=ids.DIFF_POLL, interval=POLL_MS, disabled=True),
        ]
    )  # fmt: skip
