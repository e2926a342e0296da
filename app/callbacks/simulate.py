"""Simulation page callbacks: start the job (Run or a permalink), poll its progress, cancel it, draw the result."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlencode

import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, ctx, dcc, html, no_update
from dash.exceptions import PreventUpdate

from app import ids_sim as ids
from app.components.layout import card, empty_state, error_alert, figure, grid
from app.components.replicas import replicas_view
from app.main import services
from app.services.jobs import JobsBusy, JobState
from app.services.roles import client_address
from app.services.simulations import SimulationRequestError, parse_request
from app.viewmodels import simulate as vm

log = logging.getLogger(__name__)


def count_hours(hours: float) -> str:
    """'1 hour', '6 hours', '1.5 hours'."""
    return "1 hour" if hours == 1 else f"{hours:g} hours"


_SHOW, _HIDE = {"display": "flex"}, {"display": "none"}


def result_view(result: dict[str, Any]) -> Any:
    """The headline table, the share series, the timeout events and the queues that changed most (replicated runs:
    the intervals, the attribution or the sweep)."""
    if result.get("kind") in ("compare", "sweep"):
        what = "sweep" if result["kind"] == "sweep" else " vs ".join(result["labels"][:2])
        return html.Div([html.Div(f"{count_hours(result['hours'])} simulated on {result['snapshot']}, "
                                  f"{result['replicas']} replicas: {what}.", className="small text-muted mb-2",
                                  id="sim-summary"), replicas_view(result)])  # fmt: skip
    labels = result["labels"]
    head_cols = [{"field": "figure", "minWidth": 240}] + [{"field": x} for x in labels]
    head_cols += [{"field": "change", "minWidth": 200}] if len(labels) == 2 else []
    events = [figure(vm.events_figure(result, i)) for i in range(len(labels))]
    what = " vs ".join(labels)
    return html.Div(
        [
            html.Div(f"{count_hours(result['hours'])} simulated on {result['snapshot']}, seed {result['seed']}: {what}.",
                     className="small text-muted mb-2", id="sim-summary"),
            card("Headline", grid(vm.headline_rows(result), head_cols, height=330, export_name="simulation_headline.csv")),
            card("Global shares over time", html.Div([figure(vm.share_figure(result, "running")),
                                                      figure(vm.share_figure(result, "activated"))], className="sim-pair")),
            card("Work queues and nuclei over time", [html.Div([figure(vm.share_figure(result, "running", "work_queues")),
                                                                figure(vm.share_figure(result, "running", "nuclei"))],
                                                               className="sim-pair"),
                                                      figure(vm.no_nucleus_figure(result), id_="sim-no-nucleus")]),
            card("Timeouts and reassignments", html.Div(events, className="sim-pair" if len(events) > 1 else "")),
            card(f"Queues whose load changed most ({labels[-1]})",
                 grid(vm.queue_rows(result), vm.QUEUE_COLUMNS, height=320, export_name="simulation_queues.csv")),
            *([card(f"Task commands ({labels[-1]})", grid(vm.command_rows(result), vm.COMMAND_COLUMNS, height=200,
                                                           export_name="simulation_commands.csv"))]
              if result.get("commands") else []),
            card(f"Datasets, files and events per task ({labels[-1]}; each group adds up to its nFiles or nEvents)",
                 grid(vm.dataset_rows(result), vm.dataset_columns(), height=300,
                      export_name="simulation_datasets.csv",
                      no_rows="No task had inputs to process in this run (tasks need master input datasets).")),
            card(f"Retry module decisions on failed jobs ({labels[-1]})",
                 [_summed(vm.retry_summary(result), "sim-retry-summary"),
                  grid(vm.retry_rows(result), vm.RETRY_COLUMNS, height=200, export_name="simulation_retries.csv",
                       no_rows="No failed job had an error the retry rules or error classes act on.")]),
            card(f"Task status changes and their causes ({labels[-1]}; filter by task for one task's history)",
                 [_summed(vm.task_change_summary(result), "sim-task-summary"),
                  grid(vm.task_change_rows(result), vm.TASK_COLUMNS, height=300, export_name="simulation_tasks.csv",
                       no_rows="No task changed status in this run.")]),
            card("Every rule that moved jobs or tasks",
                 [_summed(vm.event_summary(result), "sim-event-summary"),
                  grid(vm.event_rows(result), vm.event_columns(labels), height=320, export_name="simulation_events.csv",
                       no_rows="No rule moved a job or a task in this run.")]),
        ]
    )  # fmt: skip


def _summed(text: str, id_: str) -> Any:
    """A card's one-line summary above its table: what the table holds, painted before the grid is."""
    return html.Div(text, className="small mb-1", id=id_)


def run_query(result: dict[str, Any]) -> dict[str, str]:
    """The request that made RESULT, as a query (what a replay of its last run needs)."""
    return {**{k: str(v) for k, v in (result.get("overrides") or {}).items()}, "hours": f"{result['hours']:g}",
            "seed": str(result["seed"]), "compare": "1" if len(result["labels"]) == 2 else "",
            "cmd": " ".join(result.get("commands") or [])}  # fmt: skip


def job_history_box(job: str = "") -> html.Div:
    """A PandaID field (JOB from the URL's ?job=: replayed as soon as the run is there) and a button that replays
    the shown run until that job is final, with a progress bar; shown once a run's result is there."""
    return html.Div([
        html.Div([dbc.Input(id=ids.SIM_JOB_ID, type="number", min=1, step=1, placeholder="PandaID, e.g. 1200",
                            value=int(job) if job.isdigit() else None,
                            size="sm", style={"maxWidth": "220px"}),
                  dbc.Button("Show its history", id=ids.SIM_JOB_GO, size="sm", color="primary", className="ms-2"),
                  html.Span("The run is replayed (same grid, config, seed and commands) until the job is final.",
                            className="small text-muted ms-3")], className="d-flex align-items-center mb-2"),
        dbc.Progress(id=ids.SIM_JOB_PROGRESS, value=0, style={"height": "12px", "display": "none"}),
        html.Div(id=ids.SIM_JOB_OUT),
        dcc.Store(id=ids.SIM_JOB_REQ), dcc.Store(id=ids.SIM_JOB_STATE),
        dcc.Interval(id=ids.SIM_JOB_POLL, interval=400, disabled=True),
    ])  # fmt: skip


def history_view(out: dict[str, Any]) -> html.Div:
    """A replayed job: what it was, then its steps and its task's status changes up to its end."""
    job = out["job"]
    facts = (f"Job {out['panda_id']} of task {out['task'] if out['task'] is not None else '(from the snapshot)'} at "
             f"{job['queue']}: {job['status']} at hour {out['replayed_to_h']:g}, attempt {job['attemptNr']}"
             + (f", brokered with ramCount {job['ramCount']:g}" if job["ramCount"] is not None else "")
             + (f", memory peak {job['maxPSS_MB']:g} MB" if job["maxPSS_MB"] is not None else "")
             + (f", error {job['errorCode']}" if job["errorCode"] else "") + (", scout" if job["scout"] else ""))  # fmt: skip
    query = urlencode({**{k: v for k, v in (out.get("query") or {}).items() if v}, "job": out["panda_id"]})
    return html.Div([
        html.Div([facts, " · ", dcc.Link("permalink", href=f"/simulate?{query}", id="sim-job-permalink")],
                 className="small mb-2", id="sim-job-facts"),
        grid(out["steps"], vm.HISTORY_COLUMNS, height=220, export_name=f"job_{out['panda_id']}_history.csv",
             no_rows="No step in this run: the job kept the status it had in the snapshot."),
        html.Div(f"Its task's status changes up to hour {out['replayed_to_h']:g}", className="small text-muted mt-2"),
        grid(out["task_steps"], vm.HISTORY_COLUMNS, height=160, no_rows="Its task did not change status."),
    ])  # fmt: skip


@callback(
    Output(ids.SIM_JOB_OUT, "children"),
    Output(ids.SIM_JOB_STATE, "data"),
    Output(ids.SIM_JOB_POLL, "disabled"),
    Output(ids.SIM_JOB_PROGRESS, "value"),
    Output(ids.SIM_JOB_PROGRESS, "style"),
    Input(ids.SIM_JOB_GO, "n_clicks"),
    Input(ids.SIM_JOB_POLL, "n_intervals"),
    Input(ids.SIM_JOB_REQ, "data"),
    State(ids.SIM_JOB_ID, "value"),
    State(ids.SIM_JOB_REQ, "data"),
    State(ids.SIM_JOB_STATE, "data"),
    prevent_initial_call=True,
)
def drive_job_history(
    _go: int | None, _tick: int | None, _req: Any, panda_id: Any, query: dict[str, Any] | None, job_id: str | None
) -> tuple[Any, ...]:
    """Start the replay for the PandaID typed in (or given by the URL, once the run is there), then poll it until
    the job's history is there."""
    bar_on, bar_off = {"height": "12px"}, {"height": "12px", "display": "none"}
    if ctx.triggered_id == ids.SIM_JOB_REQ and (not query or panda_id in (None, "")):
        raise PreventUpdate  # a new run: nothing to replay until a PandaID is asked for
    if ctx.triggered_id == ids.SIM_JOB_POLL:
        if not job_id:
            raise PreventUpdate
        state = services.simulations.poll(job_id)
    else:
        if panda_id in (None, "") or int(panda_id) < 1:
            msg = "job: type a PandaID of this run (an integer of 1 or more)"
            return html.Div(msg, className="text-danger small", id="sim-job-refused"), None, True, 0, bar_off
        try:
            req, _refused = parse_request(services.state.config(), query or {})
            job_id, state = services.simulations.start_history(req, int(panda_id), client_address())
        except (SimulationRequestError, JobsBusy) as exc:
            return html.Div(str(exc), className="text-danger small", id="sim-job-refused"), None, True, 0, bar_off
    if state.state == "running":
        return no_update, job_id, False, max(state.percent, 2), bar_on
    if state.state == "done":
        return history_view({**state.result, "query": query}), None, True, 100, bar_off
    error = (state.error or state.state).removeprefix("UnknownJob: ")
    return html.Div(error, className="text-danger small", id="sim-job-refused"), None, True, 0, bar_off


def job_outputs(job_id: str | None, state: JobState) -> tuple[Any, Any, bool, dict[str, str], int, str]:
    """(content, job id, poll disabled, progress box style, value, label) for a job's STATE."""
    if state.state == "running":
        return no_update, job_id, False, _SHOW, max(state.percent, 2), state.label or "starting…"
    if state.state == "done":
        return result_view(state.result), None, True, _HIDE, 100, ""
    if state.state == "cancelled":
        return empty_state("Simulation cancelled", "Press Run to start it again."), None, True, _HIDE, 0, ""
    return error_alert("Simulation", RuntimeError(state.error or state.state)), None, True, _HIDE, 0, ""


@callback(
    Output(ids.SIM_CONTENT, "children"),
    Output(ids.SIM_JOB, "data"),
    Output(ids.SIM_POLL, "disabled"),
    Output(ids.SIM_PROGRESS_BOX, "style"),
    Output(ids.SIM_PROGRESS, "value"),
    Output(ids.SIM_PROGRESS, "label"),
    Output("sim-location", "search"),
    Output(ids.SIM_JOB_BOX, "style"),
    Output(ids.SIM_JOB_REQ, "data"),
    Input(ids.SIM_RUN, "n_clicks"),
    Input(ids.SIM_AUTOSTART, "data"),
    Input(ids.SIM_POLL, "n_intervals"),
    Input(ids.SIM_CANCEL, "n_clicks"),
    State(ids.SIM_HOURS, "value"),
    State(ids.SIM_SEED, "value"),
    State(ids.SIM_COMPARE, "value"),
    State(ids.SIM_COMMANDS, "value"),
    State(ids.SIM_REPLICAS, "value"),
    State(ids.SIM_SWEEP, "value"),
    State(ids.SIM_URL, "data"),
    State(ids.SIM_JOB, "data"),
)
def drive_simulation(
    _run: int | None, autostart: bool | None, _tick: int | None, _cancel: int | None,
    hours: Any, seed: Any, compare: bool | None, cmds: str | None, replicas: Any, sweep: str | None,
    edits: dict[str, Any] | None, job_id: str | None,
) -> tuple[Any, ...]:  # fmt: skip
    """Start the simulation (Run, or opening a permalink with hours), poll it while it runs, or cancel it."""
    trigger = ctx.triggered_id
    if trigger == ids.SIM_POLL:
        if not job_id:
            raise PreventUpdate
        state = services.simulations.poll(job_id)
        return (*job_outputs(job_id, state), no_update, *_history_box(state))
    if trigger == ids.SIM_CANCEL:
        if job_id:
            services.simulations.cancel(job_id)
        return (*job_outputs(job_id, JobState("cancelled")), no_update, _HIDE, None)
    if trigger in (None, ids.SIM_AUTOSTART) and not autostart:
        raise PreventUpdate  # opening the page without hours runs nothing until Run is pressed
    query = {**(edits or {}), "hours": hours, "seed": seed, "compare": "1" if compare else "", "cmd": cmds or "",
             "replicas": replicas or 1, "sweep": (sweep or "").strip()}  # fmt: skip
    try:
        req, _refused = parse_request(services.state.config(), query)
        job_id, state = services.simulations.start(req, client_address())
    except SimulationRequestError as exc:
        refused = html.Div(str(exc), className="text-danger small", id="sim-refused")
        return refused, None, True, _HIDE, 0, "", no_update, _HIDE, None
    except JobsBusy as exc:
        return error_alert("Simulation", exc), None, True, _HIDE, 0, "", no_update, _HIDE, None
    except Exception as exc:
        log.exception("simulation failed to start")
        return error_alert("Simulation", exc), None, True, _HIDE, 0, "", no_update, _HIDE, None
    search = "?" + urlencode({**(edits or {}), "hours": f"{req.hours:g}", "seed": req.seed,
                              **({"compare": 1} if req.compare else {}),
                              **({"cmd": " ".join(req.commands)} if req.commands else {}),
                              **({"replicas": req.replicas} if req.replicas > 1 else {}),
                              **({"sweep": query["sweep"]} if req.sweep else {})})  # fmt: skip
    return (*job_outputs(job_id, state), search, *_history_box(state))


def _history_box(state: JobState) -> tuple[Any, Any]:
    """(style, request) of the job-history box: shown with the finished run's request, hidden otherwise."""
    if state.state == "done" and state.result.get("kind") is None:  # replicated runs have no one run to replay
        return {"display": "block"}, run_query(state.result)
    if state.state == "done":
        return _HIDE, None
    return (no_update, no_update) if state.state == "running" else (_HIDE, None)
