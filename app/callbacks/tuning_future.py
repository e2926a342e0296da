"""Tuning page: simulate the next hours under the stored config and under the edits, side by side, as a job."""

from __future__ import annotations

import logging
from typing import Any

from dash import Input, Output, State, callback, html, no_update

from app import ids
from app.callbacks.jobdrive import JobControls, drive_job, fired
from app.callbacks.tuning import edits_of
from app.components.layout import error_alert
from app.components.replicas import replicas_view
from app.main import services
from app.services.jobs import JobsBusy, JobState
from app.services.roles import client_address
from app.services.simulations import SimRequest, SimulationRequestError, parse_request
from app.viewmodels import simulate as svm
from app.viewmodels import tuning as vm
from brokerage.model.gdpconfig import Value

log = logging.getLogger(__name__)


def future_view(result: dict[str, Any], overrides: dict[str, Value]) -> html.Div:
    """The headline figures of stored and proposed side by side with the change, and a link to each run (replicas:
    the paired differences with their intervals and attribution)."""
    if result.get("kind") == "compare":
        link = html.A("on the simulation page", href=vm.simulation_link(overrides, replicas=result["replicas"]),
                      className="small")  # fmt: skip
        return html.Div([replicas_view(result, compact=True), link], id="tune-future-result")
    rows = svm.headline_rows(result)
    head = html.Tr([html.Th("figure"), html.Th("stored"), html.Th("proposed"), html.Th("change")])
    body = [
        html.Tr([html.Td(r["figure"]), html.Td(r.get("stored", "")), html.Td(r.get("what-if", "")),
                 html.Td(r.get("change", ""), className="tune-future-change")])
        for r in rows
    ]  # fmt: skip
    links = html.Div(
        [
            html.Span(f"{vm.SIM_HOURS} simulated hours, seed {result['seed']}; on the simulation page: ",
                      className="small text-muted"),
            html.A("stored", href=vm.simulation_link({}), className="small me-2"),
            html.A("proposed", href=vm.simulation_link(overrides, compare=False), className="small me-2"),
            html.A("both with charts", href=vm.simulation_link(overrides), className="small"),
        ]
    )  # fmt: skip
    return html.Div(
        [html.Table([html.Thead(head), html.Tbody(body)], className="table table-sm small mb-1"), links],
        id="tune-future-result",
    )


def outputs(job_id: str | None, state: JobState, overrides: dict[str, Value]) -> tuple[Any, ...]:
    """(view, job id, poll disabled, progress value, progress label) for a job's STATE."""
    if state.state == "running":
        return no_update, job_id, False, max(state.percent, 2), state.label or "starting…"
    if state.state == "done":
        return future_view(state.result, overrides), None, True, 100, "done"
    if state.state == "cancelled":
        return html.Div("Simulation cancelled.", className="small text-muted"), None, True, 0, ""
    return error_alert("Simulation", RuntimeError(state.error or state.state)), None, True, 0, ""


@callback(
    Output(ids.TUNE_FUTURE_VIEW, "children"),
    Output(ids.TUNE_FUTURE_JOB, "data"),
    Output(ids.TUNE_FUTURE_POLL, "disabled"),
    Output(ids.TUNE_FUTURE_PROGRESS, "value"),
    Output(ids.TUNE_FUTURE_PROGRESS, "label"),
    Input(ids.TUNE_FUTURE_RUN, "n_clicks"),
    Input(ids.TUNE_FUTURE_POLL, "n_intervals"),
    Input(ids.TUNE_FUTURE_CANCEL, "n_clicks"),
    State(ids.TUNE_RAW, "data"),
    State(ids.TUNE_FUTURE_REPLICAS, "value"),
    State(ids.TUNE_FUTURE_JOB, "data"),
    prevent_initial_call=True,
)
def drive_future(
    _run: int | None, _tick: int | None, _cancel: int | None, raw: dict[str, Any] | None, replicas: str | None,
    job_id: str | None,
) -> tuple[Any, ...]:  # fmt: skip
    """Start the stored-vs-proposed simulation of the next hours, poll it, or cancel it."""
    overrides = edits_of(raw).overrides
    sims = services.simulations
    controls = JobControls(ids.TUNE_FUTURE_POLL, ids.TUNE_FUTURE_CANCEL, sims.poll, sims.cancel)
    return drive_job(
        fired(), job_id, controls,
        show=lambda jid, state: outputs(jid, state, overrides),
        start=lambda: start_future(overrides, replicas),
        named=lambda: named_future(overrides, replicas),
    )  # fmt: skip


def _request(overrides: dict[str, Value], replicas: str | None) -> SimRequest:
    """The simulation request of the edits: stored vs proposed over the next SIM_HOURS, REPLICAS runs each."""
    query = {**{k: vm.shown(v) if v is not None else "" for k, v in overrides.items()},
             "hours": str(vm.SIM_HOURS), "compare": "1", "replicas": replicas or "1"}  # fmt: skip
    return parse_request(services.state.config(), query)[0]


def named_future(overrides: dict[str, Value], replicas: str | None) -> str | None:
    """The simulation job the page's current request names (the one Run started), or None when it names none."""
    if not overrides:
        return None
    try:
        return services.simulations.job_id(_request(overrides, replicas))
    except SimulationRequestError:
        return None


def start_future(overrides: dict[str, Value], replicas: str | None) -> tuple[Any, ...]:
    """Start (or join) the stored-vs-proposed simulation; a note when nothing is edited, an inline refusal."""
    if not overrides:
        note = "Edit a value first: this compares the stored config with your edits."
        return html.Div(note, className="small text-muted mt-1", id="tune-future-note"), None, True, 0, ""
    try:
        job_id, state = services.simulations.start(_request(overrides, replicas), client_address())
    except (SimulationRequestError, JobsBusy) as exc:
        return html.Div(str(exc), className="text-danger small mt-1"), None, True, 0, ""
    except Exception as exc:
        log.exception("tuning simulation failed to start")
        return error_alert("Simulation", exc), None, True, 0, ""
    return outputs(job_id, state, overrides)
