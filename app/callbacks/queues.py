"""Queues page callbacks: CSV export, criteria options and the explained job brokerage."""

from __future__ import annotations

import logging
from typing import Any

from dash import Input, Output, State, callback, html, no_update
from dash.exceptions import PreventUpdate

from app import ids
from app.callbacks.urlstate import url_sync
from app.components.decision import body_style, job_decision_figures, job_decision_props
from app.components.layout import empty_state, error_alert
from app.main import services
from app.viewmodels import queues as vm
from app.viewmodels import whynot as wvm

log = logging.getLogger(__name__)


@callback(Output(ids.QUEUES_GRID, "exportDataAsCsv"), Input(ids.QUEUES_EXPORT, "n_clicks"), prevent_initial_call=True)
def on_export(n_clicks: int | None) -> bool:
    """Ask the grid to download its (filtered) rows as CSV."""
    if not n_clicks:
        raise PreventUpdate
    return True


def search_task_options(search: str | None, value: Any) -> list[dict[str, Any]]:
    """Options matching what the operator types (3000 options at once make the dropdown sluggish)."""
    if not search:
        raise PreventUpdate
    return vm.search_tasks(services.state.snapshot(), search, keep=value)


callback(Output(ids.QUEUES_TASK, "options"), Input(ids.QUEUES_TASK, "search_value"), State(ids.QUEUES_TASK, "value"),
         prevent_initial_call=True)(search_task_options)  # fmt: skip
callback(Output(ids.NUCLEI_TASK, "options"), Input(ids.NUCLEI_TASK, "search_value"), State(ids.NUCLEI_TASK, "value"),
         prevent_initial_call=True)(search_task_options)  # fmt: skip


@callback(Output(ids.QUEUES_CRITERIA, "options"), Input(ids.QUEUES_TASK, "value"), State(ids.QUEUES_CRITERIA, "value"))
def update_criteria_options(task: Any, selected: list[str] | None = None) -> list[dict[str, Any]]:
    """Criteria codes present in the task's skips, most frequent first (the selected ones kept)."""
    tid = vm.parse_task(task)
    if tid is None:
        return []
    try:
        return vm.criteria_options(services.state.job_decision(tid), selected)
    except Exception:  # the decision panel shows the error itself
        return []


@callback(Output(ids.QUEUES_TASK, "value"), Input(ids.QUEUES_PICK, "data"))
def pick_default_task(picked: int | None) -> int | None:
    """The task of the URL; when it names none (first load), a showcase task: a ranking with its factors at work."""
    return picked if picked is not None else services.whatif.showcase_task("jobs")


DECISION_OUTPUTS = [
    Output(ids.QUEUES_HEADLINE, "children"),
    Output(ids.QUEUES_RANKED, "rowData"),
    Output(ids.QUEUES_RANKED, "columnDefs"),
    Output(ids.QUEUES_NOTES, "children"),
    Output(ids.QUEUES_SKIPPED, "rowData"),
    Output(ids.QUEUES_SKIPPED_TITLE, "children"),
]


def _blank(message: Any) -> tuple[Any, ...]:
    """Panel values that show MESSAGE in the headline and clear the rest."""
    return message, [], no_update, None, [], "Skipped queues"


@callback(*DECISION_OUTPUTS, Input(ids.QUEUES_TASK, "value"), Input(ids.QUEUES_CRITERIA, "value"))
def update_decision(task: Any, criteria: list[str] | None) -> tuple[Any, ...]:
    """Run (or fetch the memoised) job brokerage of the picked task and swap it into the mounted panel."""
    tid = vm.parse_task(task)
    if tid is None:
        return _blank(empty_state("No task picked", "Choose a task above; its job brokerage is shown here."))
    try:
        return job_decision_props(services.state.job_decision(tid), criteria or None)
    except Exception as exc:  # error boundary: say what failed inline, never a traceback
        log.exception("job brokerage of task %s failed", tid)
        return _blank(error_alert("Job brokerage", exc))


# The charts follow the ranked table: they are asked for once its rows are in the page, so the browser paints the
# headline and the table first instead of after plotly has laid out both charts (about 90 ms of a task pick).
@callback(
    Output(ids.QUEUES_FUNNEL, "figure"),
    Output(ids.QUEUES_FACTORS, "figure"),
    Input(ids.QUEUES_RANKED, "rowData"),
    State(ids.QUEUES_TASK, "value"),
)
def update_decision_figures(_rows: Any, task: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The funnel and weight-factor charts of the picked task (empty when none or when its brokerage failed)."""
    tid = vm.parse_task(task)
    try:
        return job_decision_figures(services.state.job_decision(tid)) if tid is not None else ({}, {})
    except Exception:  # the decision panel shows the error itself
        return {}, {}


@callback(Output(ids.QUEUES_DECISION_BODY, "style"), Input(ids.QUEUES_TASK, "value"))
def update_decision_body(task: Any) -> dict[str, str]:
    """Hide the funnel and the tables of a task a throttle held before any filter ran (the headline says why)."""
    tid = vm.parse_task(task)
    try:
        return body_style(services.state.job_decision(tid)) if tid is not None else {}
    except Exception:  # the decision panel shows the error itself
        return {}


@callback(
    Output(ids.QUEUES_WHY_ANSWER, "children"),
    Input(ids.QUEUES_TASK, "value"),
    Input(ids.QUEUES_WHY, "value"),
    Input(ids.QUEUES_SKIPPED, "filterModel"),
)
def update_why(task: Any, asked: str | None, skipped_filter: dict[str, Any] | None) -> Any:
    """Where the queue the operator names (in the box, or in the skipped table's queue filter) stands, in a sentence."""
    tid = vm.parse_task(task)
    name = (asked or "").strip() or wvm.filter_text(skipped_filter)
    if tid is None or not name:
        return ""
    try:
        kind, sentence = wvm.why_not(services.state.snapshot(), services.state.job_decision(tid), name)
    except Exception:  # the decision panel shows the error itself
        return ""
    return html.Span([html.Span(kind, className=f"why-kind why-{kind.replace(' ', '-')} me-1"), sentence])


url_sync(ids.QUEUES_URL_SINK, {"task": (ids.QUEUES_TASK, "value"), "criteria": (ids.QUEUES_CRITERIA, "value"),
                               "why": (ids.QUEUES_WHY, "value")})  # fmt: skip
