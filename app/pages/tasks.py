"""Task states page: JEDI state flows over a time window and time spent per state."""

from __future__ import annotations

from typing import Any

import dash
from dash import dcc, html

from app import ids
from app.components.guard import guarded
from app.components.layout import loading, page_header, url_notice
from app.viewmodels import tasks as vm
from app.viewmodels.common import unusable_choice

dash.register_page(__name__, path="/tasks", title="Task states · PanDA brokerage", name="Task states")


@guarded("Task states page")
def layout(window: str | None = None, **_: Any) -> html.Div:
    """Window switch and the state graph; ?window= preselects."""
    return html.Div(
        [
            page_header("Task states", "JEDI task state transitions from the task status log; pick a window. Task ids link to each task's history."),
            url_notice(unusable_choice("window", window, list(vm.WINDOWS), vm.window_or_default(window))),
            html.Div([html.Div([html.Label("time window before the snapshot"),
                                dcc.RadioItems(id=ids.TASKS_WINDOW, options=list(vm.WINDOWS), value=vm.window_or_default(window), inline=True,
                                               inputClassName="me-1", labelClassName="me-3")])], className="controls"),
            loading(html.Div(id=ids.TASKS_CONTENT)),
            dcc.Store(id=ids.TASKS_URL_SINK),
        ]
    )  # fmt: skip
