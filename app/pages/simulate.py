"""Simulation page (/simulate?hours=H&seed=N&compare=1&KEY=VALUE): the grid moved forward under a gdpconfig."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids_sim as ids
from app.callbacks.simulate import job_history_box
from app.components.guard import guarded
from app.components.layout import card, page_header, url_notice
from app.components.tuning import edit_summary
from app.main import services
from app.services.simulations import (
    DEFAULT_HOURS,
    MAX_HOURS,
    MAX_REPLICAS,
    REQUEST_KEYS,
    SimulationRequestError,
    parse_request,
)

dash.register_page(__name__, path="/simulate", title="Simulation · PanDA brokerage", name="Simulation")


@guarded("Simulation page")
def layout(**query: Any) -> html.Div:
    """Hours, seed, stored-vs-what-if switch and the edits from the URL; Run starts the job, results below."""
    config = services.state.config()
    problem = None
    try:
        req, refused = parse_request(config, query)
    except SimulationRequestError as exc:
        problem = str(exc)
        req, refused = parse_request(
            config, {k: v for k, v in query.items() if k not in ("hours", "seed", "cmd", "replicas", "sweep")}
        )
    started = "hours" in query and problem is None
    return html.Div(
        [
            page_header(
                "Simulate the grid forward",
                "JEDI generates jobs under the job throttler, the brokers place them, pilots run them, the server's "
                "timeout and reassignment rules close or fail them (docs/lifecycle.md). Compare the stored gdpconfig "
                "with a what-if from the tuning page's permalink; with replicas, every config runs on the same seeds and each "
                "difference comes with its 95 % interval, so you can tell an edit's effect from the seed's.",
            ),
            url_notice(problem),
            html.Div(edit_summary(req.overrides, refused, config), id=ids.SIM_EDITS, className="mb-2"),
            html.Div(
                [html.Div([html.Label("simulated hours"), dbc.Input(id=ids.SIM_HOURS, type="number", min=1, max=MAX_HOURS, step=1, value=req.hours if "hours" in query else DEFAULT_HOURS)], className="sim-field"),
                 html.Div([html.Label("seed"), dbc.Input(id=ids.SIM_SEED, type="number", min=0, step=1, value=req.seed)], className="sim-field"),
                 html.Div([html.Label("task commands (optional)"),
                           dbc.Input(id=ids.SIM_COMMANDS, type="text", value=" ".join(req.commands), debounce=True,
                                     placeholder="e.g. 2h:1234:pause 4h:1234:resume")],
                          title="HOURSh:TASK:COMMAND with kill, finish, retry, incexec, pause, resume, reassign",
                          className="sim-field sim-commands"),
                 html.Div([html.Label("replicas"), dbc.Input(id=ids.SIM_REPLICAS, type="number", min=1, max=MAX_REPLICAS, step=1, value=req.replicas)],
                          title="seeds seed, seed+1, ... of every config (the same for both): paired differences with 95 % intervals",
                          className="sim-field"),
                 html.Div([html.Label("sweep (optional)"),
                           dbc.Input(id=ids.SIM_SWEEP, type="text", debounce=True, placeholder="KEY=v1,v2,...",
                                     value="" if req.sweep is None else f"{req.sweep[0]}=" + ",".join(map(str, req.sweep[1])))],
                          title="each value of KEY against the stored config on the same seeds, with 95 % intervals",
                          className="sim-field sim-commands"),
                 html.Div(dbc.Switch(id=ids.SIM_COMPARE, label="stored vs what-if side by side", value=req.compare or not req.overrides, disabled=not req.overrides), className="sim-field pt-4"),
                 html.Div(dbc.Button("Run simulation", id=ids.SIM_RUN, color="primary", size="sm"), className="sim-field pt-4")],
                className="controls",
            ),
            html.Div([dbc.Progress(id=ids.SIM_PROGRESS, value=0, label="", style={"height": "16px", "flex": "1"}),
                      dbc.Button("Cancel", id=ids.SIM_CANCEL, color="secondary", size="sm", outline=True, className="ms-2")],
                     id=ids.SIM_PROGRESS_BOX, style={"display": "none"}, className="align-items-center my-2"),
            html.Div(id=ids.SIM_CONTENT),
            html.Div(card("One job's simulated history (the last run shown): every step with its cause",
                          job_history_box(str(query.get("job") or ""))), id=ids.SIM_JOB_BOX, style={"display": "none"}),
            dcc.Store(id=ids.SIM_JOB),
            dcc.Store(id=ids.SIM_AUTOSTART, data=started),
            dcc.Store(id=ids.SIM_URL, data={k: v for k, v in query.items() if k not in REQUEST_KEYS}),
            dcc.Interval(id=ids.SIM_POLL, interval=500, disabled=True),
            dcc.Location(id="sim-location", refresh=False),
        ]
    )  # fmt: skip
