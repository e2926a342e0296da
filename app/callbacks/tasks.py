"""Task states callbacks: flows, time in state and the task list for the chosen window."""

from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, callback, html

from app import ids
from app.callbacks.urlstate import url_sync
from app.components.guard import guarded
from app.components.layout import card, empty_state, figure, grid, link_col
from app.main import services
from app.viewmodels import tasks as vm
from app.viewmodels.common import records


@callback(Output(ids.TASKS_CONTENT, "children"), Input(ids.TASKS_WINDOW, "value"))
@guarded("Task states")
def update_tasks(window: str) -> Any:
    """Sankey of transitions in the window, time per state and the task table."""
    snap = services.state.snapshot()
    log = snap.task_status_log
    counts = vm.status_counts(snap.tasks)
    window = vm.window_or_default(window)
    since = vm.window_start(snap.taken_at, window)
    tr = vm.transitions(log, snap.taken_at, window)
    tis = vm.time_in_state(vm.durations(log, snap.taken_at), since)
    span = "" if since is None else f" in the last {window}"
    task_cols = [link_col("jeditaskid", "/task?id=", "task", pinned="left", maxWidth=110), {"field": "status", "maxWidth": 120},
                 {"field": "prodsourcelabel", "maxWidth": 130}, {"field": "taskname", "flex": 2}, {"field": "gshare"},
                 {"field": "nucleus"}, {"field": "currentpriority", "maxWidth": 130}]  # fmt: skip
    moved = vm.tasks_in_window(snap.tasks, log, since)
    tasks = records(
        moved[["jeditaskid", "status", "prodsourcelabel", "taskname", "gshare", "nucleus", "currentpriority"]]
    )
    flows: Any = (
        figure(vm.sankey(tr, counts))
        if len(log)
        else empty_state("No status history", "The snapshot's task_status_log table is empty.")
    )
    return html.Div(
        [
            dbc.Row([dbc.Col(card(f"State flows ({int(tr['n'].sum()) if len(tr) else 0} transitions)", flows), md=8),
                     dbc.Col(card(f"Time in state (stays that ended{span or ' at any time'})", figure(vm.time_figure(tis))), md=4)], className="g-2"),
            dbc.Row([dbc.Col(card("Transitions", grid(records(tr), height=260, export_name="transitions.csv")), md=4),
                     dbc.Col(card(f"Tasks ({len(tasks)} with a state change{span or ''})", grid(tasks, task_cols, height=260, export_name="tasks.csv")), md=8)], className="g-2"),
        ]
    )  # fmt: skip


url_sync(ids.TASKS_URL_SINK, {"window": (ids.TASKS_WINDOW, "value")})
