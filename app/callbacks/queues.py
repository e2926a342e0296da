"""Queues page callbacks: CSV export, criteria options and the explained job brokerage."""

from __future__ import annotations

from typing import Any

from dash import Input, Output, callback
from dash.exceptions import PreventUpdate

from app import data, ids
from app.callbacks.urlstate import url_sync
from app.components.decision import job_decision_view
from app.components.guard import guarded
from app.components.layout import empty_state
from app.viewmodels import queues as vm


@callback(Output(ids.QUEUES_GRID, "exportDataAsCsv"), Input(ids.QUEUES_EXPORT, "n_clicks"), prevent_initial_call=True)
def on_export(n_clicks: int | None) -> bool:
    """Ask the grid to download its (filtered) rows as CSV."""
    if not n_clicks:
        raise PreventUpdate
    return True


@callback(Output(ids.QUEUES_CRITERIA, "options"), Input(ids.QUEUES_TASK, "value"))
def update_criteria_options(task: Any) -> list[dict[str, Any]]:
    """Criteria codes present in the task's skips, most frequent first."""
    tid = vm.parse_task(task)
    if tid is None:
        return []
    try:
        return vm.criteria_options(data.job_decision(tid))
    except Exception:  # the decision panel shows the error itself
        return []


@callback(Output(ids.QUEUES_DECISION, "children"), Input(ids.QUEUES_TASK, "value"), Input(ids.QUEUES_CRITERIA, "value"))
@guarded("Job brokerage")
def update_decision(task: Any, criteria: list[str] | None) -> Any:
    """Run (or fetch the memoised) job brokerage of the picked task and render it."""
    tid = vm.parse_task(task)
    if tid is None:
        return empty_state("No task picked", "Choose a task above; its job brokerage is shown here.")
    return job_decision_view(data.job_decision(tid), criteria or None)


url_sync(ids.QUEUES_URL_SINK, {"task": (ids.QUEUES_TASK, "value"), "criteria": (ids.QUEUES_CRITERIA, "value")})
