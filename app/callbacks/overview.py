"""Overview callbacks: the skip-criteria census, computed after the page shows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dash import Input, Output, callback, html

from app import ids
from app.callbacks.progress import progress_bar
from app.components.guard import guarded
from app.components.layout import figure, grid
from app.main import services
from app.viewmodels import overview as vm


def census_view(set_progress: Callable[[tuple[int, str]], None] | None = None) -> html.Div:
    """The skip census over every waiting task, from the stored config's grid run (computed once per version)."""

    progress = progress_bar(set_progress)

    census = vm.census_from_run(services.whatif.base_run(progress))
    rows = census["criteria"]
    return html.Div(
        [
            html.Div([vm.census_sentence(census), " ", html.A("List every pending task and why →", href="/pending", id="census-pending-link")],
                     className="small text-muted mb-1", id="census-sentence"),
            figure(vm.census_figure(census)),
            grid(rows, [{"field": "criteria"}, {"field": "skips", "headerName": "queues skipped"}, {"field": "tasks", "headerName": "tasks affected"}],
                 height=220, export_name="skip_criteria.csv", url_param="o"),
            html.A("Open a task's job brokerage on the Queues page →", href="/queues", className="small"),
        ]
    )  # fmt: skip


@callback(
    Output(ids.OVERVIEW_CONTENT, "children"),
    Input("overview-trigger", "data"),
    background=True,
    progress=[Output("overview-progress", "value"), Output("overview-progress", "label")],
    running=[(Output("overview-progress-box", "style"), {"display": "block"}, {"display": "none"})],
    interval=300,
)
@guarded("Skip census")
def update_census(set_progress: Callable[[tuple[int, str]], None], _: Any) -> html.Div:
    """Background job: broker every waiting task once per snapshot and config version, then chart the skip criteria."""
    return census_view(set_progress)
