"""Task states page: JEDI state flows over a time window and time spent per state."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from app.callbacks.tasks import future_options
from app.components.guard import guarded
from app.components.layout import loading, page_header, url_notice
from app.components.refresh import refresh_control
from app.viewmodels import tasks as vm
from app.viewmodels.common import unusable_choice

dash.register_page(__name__, path="/tasks", title="Task states · PanDA brokerage", name="Task states")


@guarded("Task states page")
def layout(
    window: str | None = None, future: str | None = None, empty: str | None = None, refresh: str | None = None, **_: Any
) -> html.Div:
    """Window switch, the simulated future to draw, the state diagram and the stuck tasks; ?window=&future= preselect."""
    options = future_options()
    known = {o["value"] for o in options}
    chosen = int(future) if future and future.isdigit() and int(future) in known else None
    problem = unusable_choice("window", window, list(vm.WINDOWS), vm.window_or_default(window)) or (
        f"future: run {future!r} is not a stored simulation of this grid version; showing the logged past only"
        if future and chosen is None else None)  # fmt: skip
    return html.Div(
        [
            page_header("Task states", "JEDI's task state diagram: how many tasks are in each status now, the transitions logged in a window (and a simulated future, in orange), and the tasks that stay longest where they are, with why. Task ids link to each task's history.", refresh_control(refresh)),
            url_notice(problem),
            html.Div([html.Div([html.Label("time window before the snapshot"),
                                dcc.RadioItems(id=ids.TASKS_WINDOW, options=list(vm.WINDOWS), value=vm.window_or_default(window), inline=True,
                                               inputClassName="me-1", labelClassName="me-3")]),
                      html.Div([html.Label("empty states"),
                                dcc.RadioItems(id=ids.TASKS_EMPTY, options=[{"label": " dimmed", "value": "dim"}, {"label": " hidden", "value": "hide"}],
                                               value="hide" if empty == "hide" else "dim", inline=True, inputClassName="me-1", labelClassName="me-3")]),
                      html.Div([html.Label("simulated future (a stored run of this grid)"),
                                dcc.Dropdown(id=ids.TASKS_FUTURE, options=options, value=chosen, clearable=True,
                                             placeholder="none yet: simulate the next hours, or run one on the Simulate page" if not options else "none",
                                             style={"minWidth": "22rem"})]),
                      html.Div([html.Label("or simulate the next hours (stored config)"),
                                html.Div([dbc.Input(id=ids.TASKS_SIM_HOURS, type="number", min=1, max=48, step=1, value=6,
                                                    size="sm", style={"width": "5rem"}),
                                          dbc.Button("Simulate", id=ids.TASKS_SIM_GO, size="sm", color="primary",
                                                     className="ms-2")], className="d-flex align-items-center")]),
                      html.Div([dbc.Progress(id=ids.TASKS_SIM_PROGRESS, value=0, style={"height": "12px", "width": "14rem", "display": "none"}),
                                html.Div(id=ids.TASKS_SIM_STATUS, className="small text-muted")], className="pt-4")],
                     className="controls"),
            dcc.Store(id=ids.TASKS_SIM_JOB),
            dcc.Store(id=ids.TASKS_SIM_RESULT),
            dcc.Interval(id=ids.TASKS_SIM_POLL, interval=500, disabled=True),
            loading(html.Div(id=ids.TASKS_CONTENT)),
            dcc.Store(id=ids.TASKS_URL_SINK),
        ]
    )  # fmt: skip
