"""Queues page: every queue, and the explained job brokerage of a picked task."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from app.components.decision import job_decision_panel
from app.components.guard import guarded
from app.components.layout import card, grid, loading, page_header, url_notice
from app.components.refresh import refresh_control
from app.main import state
from app.viewmodels import gridstate
from app.viewmodels import queues as vm

dash.register_page(__name__, path="/queues", title="Queues · PanDA brokerage", name="Queues")


@guarded("Queues page")
def layout(
    task: str | None = None,
    criteria: str | None = None,
    why: str | None = None,
    site: str | None = None,
    q_f: str | None = None,
    q_s: str | None = None,
    refresh: str | None = None,
    **_: Any,
) -> html.Div:
    """Queue table, task picker and the brokerage panel; ?task=&criteria= preselect the view."""
    snap = state.snapshot()
    rows = state.answers.get("queue_rows", lambda src: vm.queue_rows(src.snap))  # per snapshot and config
    picked, problem = vm.url_task(snap, task)
    # without a task in the URL a callback picks a showcase task after the page shows (it runs brokerages)
    also = vm.showcase_candidates(snap) if picked is None else []
    queues_grid = grid(
        rows,
        gridstate.with_sort(vm.queue_column_defs(), q_s),
        id_=ids.QUEUES_GRID,
        height=380,
        export_name="queues.csv",
        row_id="panda_queue",
        url_param="q",
    )
    # a shared link brings its filters back; ?site= (the navbar search for a site) filters to that site's queues
    model = gridstate.filter_model(q_f)
    if site:
        model["atlas_site"] = {"filterType": "text", "type": "equals", "filter": site}
    if model:
        queues_grid.filterModel = model
    table = card(
        f"All queues ({len(rows)})",
        queues_grid,
        footer=dbc.Button("Export CSV", id=ids.QUEUES_EXPORT, size="sm", color="secondary", outline=True),
    )
    controls = html.Div(
        [
            html.Div(
                [html.Label("task", htmlFor=ids.QUEUES_TASK),
                 dcc.Dropdown(id=ids.QUEUES_TASK, options=vm.picker_options(snap, picked, also=also), value=picked, clearable=False,
                              placeholder="type a task id or name")],
                style={"minWidth": "520px"},
            ),
            html.Div(
                [html.Label("skip criteria", htmlFor=ids.QUEUES_CRITERIA),
                 dcc.Dropdown(id=ids.QUEUES_CRITERIA, multi=True, value=vm.split_list(criteria),
                              options=[{"label": c, "value": c} for c in vm.split_list(criteria)],
                              placeholder="all criteria")],
                style={"minWidth": "320px"},
            ),
        ],
        className="controls",
    )  # fmt: skip
    brokerage = card("Job brokerage of a task", [url_notice(problem), controls, loading(job_decision_panel(why))])
    return html.Div(
        [
            page_header(
                "Queues",
                "Every PanDA queue with its job counts; pick a task to see where its jobs would go and why.",
                refresh_control(refresh),
            ),
            # a permalink to a task opens on its brokerage; the 700-row table comes after it
            *([brokerage, table] if picked is not None else [table, brokerage]),
            dcc.Store(id=ids.QUEUES_URL_SINK),
            dcc.Store(id=ids.QUEUES_PICK, data=picked),
        ]
    )
