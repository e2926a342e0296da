"""Tuning page panels: save with the operator role, version history, reports (data passed in)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from app.components.layout import empty_state, grid
from app.viewmodels import history as hvm


def save_panel(can_save: bool) -> html.Div:
    """Operator name, secret and comment; saving is refused (with the reason) for viewers.

    CAN_SAVE: the grid comes from a database (files and the demo grid keep no versions).
    """
    no_db = not can_save
    warning = (
        empty_state(
            "Saving needs a database",
            "This grid comes from a file or the built-in demo; start the dashboard on a database "
            "(DATABASE_URL or the embedded SQLite of the quick start) to save gdpconfig versions.",
        )
        if no_db
        else None
    )
    return html.Div(
        [
            warning,
            dbc.Input(
                id=ids.TUNE_SAVE_USER, placeholder="operator name", size="sm", className="mb-1", autoComplete="username"
            ),
            dbc.Input(
                id=ids.TUNE_SAVE_SECRET,
                placeholder="operator secret",
                type="password",
                size="sm",
                className="mb-1",
                autoComplete="current-password",
            ),
            dbc.Textarea(
                id=ids.TUNE_SAVE_COMMENT,
                placeholder="why (recorded in the history)",
                size="sm",
                className="mb-1",
                rows=2,
            ),
            dbc.Button("Save edits as a new version", id=ids.TUNE_SAVE, size="sm", color="primary", disabled=no_db),
            html.Div(id=ids.TUNE_SAVE_RESULT, className="mt-1"),
            html.Div(
                "Viewers can explore what-ifs freely; saving needs the operator role.",
                className="small text-muted mt-1",
            ),
        ]
    )


def history_panel(has_db: bool, rows: list[dict[str, Any]]) -> html.Div:
    """Every saved version (ROWS from ``hvm.history_rows``), a diff between two versions, and restore."""
    options = hvm.version_options(rows)
    if not has_db:
        top: Any = empty_state("No history", "Versions are kept in the database; this grid has none.")
    elif not rows:
        top = empty_state("No saved versions yet", "The stored gdpconfig equals the defaults; save an edit to start.")
    else:
        top = grid(rows, hvm.history_columns(), height=240, export_name="gdpconfig_history.csv", fit=True)
    return html.Div(
        [
            top,
            html.Div(
                [
                    html.Span("diff A", className="small text-muted me-1"),
                    dcc.Dropdown(id=ids.TUNE_DIFF_A, options=options, value=options[-1]["value"], clearable=False,
                                 style={"minWidth": "120px"}),
                    html.Span("→ B", className="small text-muted mx-1"),
                    dcc.Dropdown(id=ids.TUNE_DIFF_B, options=options, value=options[0]["value"], clearable=False,
                                 style={"minWidth": "120px"}),
                    dbc.Button("Restore A", id=ids.TUNE_RESTORE, size="sm", color="warning", outline=True,
                               className="ms-2", disabled=not rows,
                               title="make version A's values current again (operator role; uses the name and "
                               "secret of the save form)"),
                ],
                className="d-flex align-items-center mt-1",
            ),
            html.Div([html.Div(id=ids.TUNE_RESTORE_PROMPT, className="small fw-semibold"),
                      dbc.Input(id=ids.TUNE_RESTORE_COMMENT, placeholder="why restore (required, recorded in the history)", size="sm", className="my-1"),
                      dbc.Button("Confirm restore", id=ids.TUNE_RESTORE_CONFIRM, size="sm", color="warning", disabled=True),
                      dbc.Button("Cancel", id=ids.TUNE_RESTORE_BACK, size="sm", color="secondary", outline=True, className="ms-1")],
                     id=ids.TUNE_RESTORE_BOX, className="restore-box mt-1", style={"display": "none"}),
            html.Div(id=ids.TUNE_DIFF_VIEW, className="mt-1"),
        ]
    )  # fmt: skip


REPORT_POLL_MS = 300  # a report job is polled this often while it runs


def report_panel() -> html.Div:
    """Scope and format of a report under the current what-if, with a progress bar for whole-grid reports."""
    return html.Div(
        [
            dbc.RadioItems(
                id=ids.TUNE_REPORT_SCOPE,
                options=[
                    {"label": "selected task", "value": "task"},
                    {"label": "every waiting task", "value": "all"},
                ],
                value="task",
                inline=True,
                className="small",
            ),
            dbc.RadioItems(
                id=ids.TUNE_REPORT_FORMAT,
                options=[{"label": f.upper(), "value": f} for f in ("html", "csv", "json")],
                value="html",
                inline=True,
                className="small mb-1",
            ),
            html.Div(
                [
                    dbc.Button("Export report", id=ids.TUNE_REPORT_BUTTON, size="sm", color="primary"),
                    dbc.Button(
                        "Cancel",
                        id=ids.TUNE_REPORT_CANCEL,
                        size="sm",
                        color="secondary",
                        outline=True,
                        className="ms-1",
                        disabled=True,
                    ),
                ],
            ),
            dbc.Progress(
                id=ids.TUNE_REPORT_PROGRESS, value=0, className="mt-1", style={"height": "12px", "visibility": "hidden"}
            ),
            html.Div(id=ids.TUNE_REPORT_STATUS, className="small text-muted mt-1"),
            dcc.Download(id=ids.TUNE_REPORT_DOWNLOAD),
            dcc.Store(id=ids.TUNE_REPORT_JOB),
            dcc.Store(id=ids.TUNE_REPORT_FETCH),
            dcc.Store(id=ids.TUNE_REPORT_FETCHED),
            dcc.Interval(id=ids.TUNE_REPORT_POLL, interval=REPORT_POLL_MS, disabled=True),
            html.Div(
                "The report records the snapshot, the config version and the what-if edits it was made with.",
                className="small text-muted",
            ),
        ]
    )


def diff_table(rows: Sequence[dict[str, Any]]) -> Any:
    """Keys that differ between two versions."""
    if not rows:
        return html.Div("The two versions store the same values.", className="small text-muted")
    return html.Table(
        [
            html.Thead(html.Tr([html.Th("key"), html.Th("A"), html.Th("B")])),
            html.Tbody([html.Tr([html.Td(html.Code(r["key"])), html.Td(r["a"]), html.Td(r["b"])]) for r in rows]),
        ],
        className="table table-sm detail-table mb-0",
    )
