"""Task states callbacks: flows, time in state and the task list for the chosen window."""

from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, ctx, html, no_update
from dash.exceptions import PreventUpdate

from app import ids
from app.callbacks.urlstate import url_sync
from app.components.guard import guarded
from app.components.layout import card, figure, grid, link_col
from app.main import services
from app.viewmodels import state_diagram as sdv
from app.viewmodels import tasks as vm
from app.viewmodels.common import records


def future_options() -> list[dict[str, Any]]:
    """The stored simulation runs of the current grid version, newest first, as choices for the simulated future."""
    engine = services.state.engine()
    if engine is None:
        return []
    from brokerage.store.sim_runs import list_runs

    snap = services.state.snapshot()
    runs = [
        r for r in list_runs(engine, 50) if r.snapshot_id == snap.snapshot_id and r.snapshot_version == snap.version
    ]
    return [{"label": f"run {r.run_id}: next {r.hours:g} h, {r.label}"
             + (f" ({', '.join(f'{k}={v}' for k, v in r.overrides.items())})" if r.overrides else ""),
             "value": r.run_id} for r in runs]  # fmt: skip


def _future(run_id: Any) -> tuple[Any, str]:
    """(simulated transitions, title suffix) of stored run RUN_ID, or empty ones."""
    if not run_id:
        return sdv.future_transitions([]), ""
    from brokerage.store.sim_runs import load_run

    info, result = load_run(services.state.engine(), int(run_id))
    return sdv.future_transitions(
        result.get("task_changes", [])
    ), f" + the next {info.hours:g} h simulated (run {info.run_id})"


def _reasons() -> dict[int, str] | None:
    """Why each task the stored config's brokerage found no place for is waiting (the pending page's sentences);
    None while the stored config's grid run is not ready (it is started then, never awaited in this callback)."""
    from app.callbacks.pending import decide
    from app.viewmodels import pending as pvm

    run = services.whatif.base_run_if_ready()  # started when it is not ready, never awaited here
    if run is None:
        return None
    snap = services.state.snapshot()
    rows = pvm.pending_rows(snap, run, decide)
    reasons = {int(r["task"]): f"{r['kind']}: {r['reason']}" for r in rows}
    status = dict(zip(snap.tasks["jeditaskid"].astype(int), snap.tasks["status"].astype(str), strict=True))
    for (broker, tid), o in run.outcomes.items():  # placed tasks: what they wait for, and where their jobs go
        if broker != "task" and o.status == "ok" and tid not in reasons and status.get(tid) in sdv.PLACED_WAIT:
            reasons[tid] = sdv.placed_sentence(status[tid], o.top)
    return reasons


STUCK_COLUMNS = [link_col("task", "/task?id=", pinned="left", maxWidth=110), {"field": "status", "maxWidth": 120},
                 {"field": "hours_in_status", "headerName": "hours in status", "maxWidth": 140, "sort": "desc"},
                 {"field": "since", "maxWidth": 170},
                 {"field": "reason", "flex": 3, "tooltipField": "reason", "minWidth": 320},
                 {"field": "label", "maxWidth": 110}, {"field": "gshare", "maxWidth": 170}, {"field": "taskname", "flex": 1}]  # fmt: skip


@callback(
    Output(ids.TASKS_CONTENT, "children"),
    Input(ids.TASKS_WINDOW, "value"),
    Input(ids.TASKS_FUTURE, "value"),
    Input(ids.TASKS_SIM_RESULT, "data"),
    Input(ids.TASKS_EMPTY, "value"),
)
@guarded("Task states")
def update_tasks(window: str, future_run: Any, just_run: dict[str, Any] | None = None, empty: str = "dim") -> Any:
    """The state diagram (logged transitions in the window, optionally a stored run's simulated ones), the tasks
    that stay longest in their status with the reason, time per state and the tasks that moved."""
    snap = services.state.snapshot()
    log = snap.task_status_log
    counts = vm.status_counts(snap.tasks)
    window = vm.window_or_default(window)
    since = vm.window_start(snap.taken_at, window)
    tr = vm.transitions(log, snap.taken_at, window)
    dur = vm.durations(log, snap.taken_at)
    tis = vm.time_in_state(dur, since)
    span = "" if since is None else f" in the last {window}"
    future, future_title = _future(future_run)
    if not future_run and just_run:
        future = sdv.future_transitions(just_run.get("task_changes", []))
        future_title = f" + the next {float(just_run['hours']):g} h simulated (not stored: the grid is a file)"
    title = f"JEDI task states: tasks there now, transitions logged{span or ''}{future_title}"
    reasons = _reasons()
    stuck = sdv.stuck_rows(snap.tasks, dur, reasons or {})
    n_live = int((~snap.tasks["status"].isin(sdv.FINAL_STATUSES)).sum())
    task_cols = [link_col("jeditaskid", "/task?id=", "task", pinned="left", maxWidth=110), {"field": "status", "maxWidth": 120},
                 {"field": "prodsourcelabel", "maxWidth": 130}, {"field": "taskname", "flex": 2}, {"field": "gshare"},
                 {"field": "nucleus"}, {"field": "currentpriority", "maxWidth": 130}]  # fmt: skip
    moved = vm.tasks_in_window(snap.tasks, log, since)
    tasks = records(
        moved[["jeditaskid", "status", "prodsourcelabel", "taskname", "gshare", "nucleus", "currentpriority"]]
    )
    n_past = int(tr["n"].sum()) if len(tr) else 0
    n_future = int(future["n"].sum()) if len(future) else 0
    head = f"State diagram ({n_past:,} logged transitions" + (f", {n_future:,} simulated)" if future_title else ")")
    return html.Div(
        [
            card(head, html.Div(figure(sdv.diagram(tr, future, counts, title, hide_empty=empty == "hide")), id="tasks-diagram")),
            card(f"Stuck: tasks longest in their status (the longest {len(stuck):,} of {n_live:,} not final; the open "
                 "stay counted)" + ("" if reasons is not None else " · brokerage reasons follow once the stored "
                                    "config's grid run is ready: pick the window again"),
                 grid(stuck, STUCK_COLUMNS, height=320, export_name="stuck_tasks.csv")),
            dbc.Row([dbc.Col(card(f"Time in state (stays that ended{span or ' at any time'})", figure(vm.time_figure(tis))), md=4),
                     dbc.Col(card("Transitions", grid(records(tr), height=300, export_name="transitions.csv")), md=3),
                     dbc.Col(card(f"Tasks ({len(tasks)} with a state change{span or ''})", grid(tasks, task_cols, height=300, export_name="tasks.csv")), md=5)],
                    className="g-2"),
        ]
    )  # fmt: skip


@callback(
    Output(ids.TASKS_FUTURE, "options"),
    Output(ids.TASKS_FUTURE, "value"),
    Output(ids.TASKS_SIM_JOB, "data"),
    Output(ids.TASKS_SIM_POLL, "disabled"),
    Output(ids.TASKS_SIM_PROGRESS, "value"),
    Output(ids.TASKS_SIM_PROGRESS, "style"),
    Output(ids.TASKS_SIM_STATUS, "children"),
    Output(ids.TASKS_SIM_RESULT, "data"),
    Input(ids.TASKS_SIM_GO, "n_clicks"),
    Input(ids.TASKS_SIM_POLL, "n_intervals"),
    State(ids.TASKS_SIM_HOURS, "value"),
    State(ids.TASKS_SIM_JOB, "data"),
    prevent_initial_call=True,
)
def simulate_future(_go: int | None, _tick: int | None, hours: Any, job_id: str | None) -> tuple[Any, ...]:
    """Simulate the next HOURS under the stored config (a background run, stored like every run), then draw it as
    the simulated future."""
    from app.services.jobs import JobsBusy
    from app.services.roles import client_address
    from app.services.simulations import SimulationRequestError, parse_request

    bar = {"height": "12px", "width": "14rem"}
    hide = {**bar, "display": "none"}
    keep = (no_update, no_update)
    if ctx.triggered_id == ids.TASKS_SIM_POLL:
        if not job_id:
            raise PreventUpdate
        state = services.simulations.poll(job_id)
    else:
        try:
            if hours in (None, ""):  # the field holds nothing usable (empty, or outside its 1..48)
                raise SimulationRequestError("hours: expected a number of hours above 0 and at most 48")
            req, _ = parse_request(services.state.config(), {"hours": str(hours)})
            job_id, state = services.simulations.start(req, client_address())
        except (SimulationRequestError, JobsBusy) as exc:
            refused = html.Span(str(exc), className="text-danger", id="tasks-sim-refused")
            return (*keep, None, True, 0, hide, refused, no_update)
    if state.state == "running":
        return (*keep, job_id, False, max(state.percent, 2), bar, state.label or "starting…", no_update)
    if state.state != "done":
        return (*keep, None, True, 0, hide, html.Span(state.error or state.state, className="text-danger"), no_update)
    result = state.result
    run_ids = result.get("run_ids") or []
    if not run_ids:  # a grid from a file: nothing is stored, the page keeps this run's task changes itself
        data = {"hours": result["hours"], "task_changes": result["runs"][-1].get("task_changes", [])}
        return (no_update, None, None, True, 100, hide, f"the next {result['hours']:g} h drawn in orange", data)
    return (future_options(), run_ids[-1], None, True, 100, hide, f"run {run_ids[-1]} drawn in orange", None)


url_sync(
    ids.TASKS_URL_SINK,
    {"window": (ids.TASKS_WINDOW, "value"), "future": (ids.TASKS_FUTURE, "value"), "empty": (ids.TASKS_EMPTY, "value")},
)
