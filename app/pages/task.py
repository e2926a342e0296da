"""Task detail page (/task?id=): attributes, state history, its job brokerage and PanDA 1.0.4's verdict on it."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from app.components.guard import guarded
from app.components.layout import card, empty_state, grid, loading, page_header
from app.components.pandacheck import panda_card
from app.main import state
from app.viewmodels import detail, queues
from app.viewmodels import tasks as tvm

dash.register_page(__name__, path="/task", title="Task · PanDA brokerage", name="Task")


@guarded("Task page")
def layout(id: str | None = None, **_: Any) -> html.Div:
    """One task: attributes, history and its job brokerage headline."""
    tid = queues.parse_task(id)
    if tid is None:
        return html.Div(
            [
                empty_state("No task given", "Open a task from a table, or add ?id=<jeditaskid> to the address."),
                dcc.Store(id=ids.TASK_ID, data=None),  # the job-brokerage callback's input exists on every task page
                html.Div(id=ids.TASK_JOBS),
                panda_card(hidden=True),  # the PanDA panel's callback ids exist on every task page
            ]
        )
    snap = state.snapshot()
    attrs = detail.task_attributes(snap, tid)
    hist = tvm.history(snap.task_status_log, snap.taken_at, tid)
    return html.Div(
        [
            page_header(f"Task {tid}", str(dict(attrs).get("taskname", ""))),
            dbc.Row(
                [
                    dbc.Col(card("Attributes", html.Table(html.Tbody([html.Tr([html.Th(k), html.Td(str(v))]) for k, v in attrs]),
                                                          className="table table-sm detail-table mb-0")), md=5),
                    dbc.Col([card("State history", grid(hist, height=240) if hist else empty_state("No history", "The task status log has no rows for this task.")),
                             card("Job brokerage", [loading(html.Div(id=ids.TASK_JOBS)),  # brokered by a callback
                                                    dcc.Link("Open the full explanation →", href=f"/queues?task={tid}")]),
                             panda_card(),  # PanDA's own brokers on this task, a job started after the page shows
                             ], md=7),
                ],
                className="g-2",
            ),
            dcc.Store(id=ids.TASK_ID, data=tid),
        ]
    )  # fmt: skip
