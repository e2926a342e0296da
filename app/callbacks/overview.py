"""Overview callbacks: the skip-criteria census, from the stored config's grid run (a job, polled after the page shows)."""

from __future__ import annotations

from typing import Any

from dash import Input, Output, callback, ctx, html, no_update

from app import ids
from app.components.layout import error_alert, failure_alert, figure, grid
from app.main import services
from app.viewmodels import overview as vm
from brokerage.brokers.batch import GridRun

FIRST_WAIT_S = 0.5  # the request that starts (or finds) the run waits this long: a ready run shows without a poll
_SHOW, _HIDE = {"display": "block"}, {"display": "none"}


def census_view(run: GridRun | None = None) -> html.Div:
    """The skip census over every waiting task, from the stored config's grid run (waited for when RUN is None)."""
    census = vm.census_from_run(run if run is not None else services.whatif.base_run())
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
    Output("overview-progress-box", "style"),
    Output("overview-progress", "value"),
    Output("overview-progress", "label"),
    Output(ids.OVERVIEW_POLL, "disabled"),
    Input("overview-trigger", "data"),
    Input(ids.OVERVIEW_POLL, "n_intervals"),
)
def update_census(_snap: Any, _tick: int | None) -> tuple[Any, ...]:
    """Start (or find) the job of the stored config's grid run, show its progress while it runs, then the census."""
    try:
        state = services.whatif.base_state(0 if ctx.triggered_id == ids.OVERVIEW_POLL else FIRST_WAIT_S)
        if state.state == "running":
            return no_update, _SHOW, max(state.percent, 2), state.label or "starting…", False
        if state.state == "done":
            return census_view(state.result), _HIDE, 100, "", True
        return failure_alert("Skip census", state.error or state.state), _HIDE, 0, "", True
    except Exception as exc:  # error boundary: say what failed inline
        return error_alert("Skip census", exc), _HIDE, 0, "", True
