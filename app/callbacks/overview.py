"""Overview callbacks: the skip-criteria census, computed after the page shows."""

from __future__ import annotations

from typing import Any

from dash import Input, Output, callback, html

from app import data, ids
from app.components.guard import guarded
from app.components.layout import figure, grid
from app.viewmodels import overview as vm


@callback(Output(ids.OVERVIEW_CONTENT, "children"), Input("overview-trigger", "data"))
@guarded("Skip census")
def update_census(_: Any) -> html.Div:
    """Run job brokerage over waiting tasks (memoised) and chart the most common skip criteria."""
    census = data.census()
    rows = census["criteria"]
    return html.Div(
        [
            html.Div(vm.census_sentence(census), className="small text-muted mb-1", id="census-sentence"),
            figure(vm.census_figure(census)),
            grid(rows, [{"field": "criteria"}, {"field": "skips", "headerName": "queues skipped"}, {"field": "tasks", "headerName": "tasks affected"}],
                 height=220, export_name="skip_criteria.csv"),
            html.A("Open a task's job brokerage on the Queues page →", href="/queues", className="small"),
        ]
    )  # fmt: skip
