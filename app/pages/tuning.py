"""Tuning page: edit gdpconfig, see one task re-ranked and the grid-wide impact at once; save, restore, report."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from app.components.guard import guarded
from app.components.layout import card, page_header, url_notice
from app.components.levers import levers_panel
from app.components.tuning import edit_summary, grid_placeholder, grid_starting, param_editor
from app.components.tuning_store import history_panel, report_panel, save_panel
from app.ids_levers import TUNE_LEVERS
from app.main import services
from app.viewmodels import queues as qvm
from app.viewmodels import tuning as vm

FUTURE_POLL_MS = 500  # the stored-vs-proposed simulation takes seconds to minutes: a calmer poll
GRID_POLL_MS = 100  # the whole-grid job is polled this often: its result shows at most this long after it is ready

dash.register_page(__name__, path="/tuning", title="Tuning · PanDA brokerage", name="Tuning")


@guarded("Tuning page")
def layout(task: str | None = None, saved: str | None = None, restored: str | None = None, **query: Any) -> html.Div:
    """Editor on the left; the picked task before/after and the grid impact on the right; save and reports below."""
    snap = services.state.snapshot()
    config = services.state.config()
    raw = vm.edits_from_query(query)
    edits = services.whatif.edits(raw)
    picked, problem = qvm.url_task(snap, task)
    # a callback picks a showcase task when the URL names none, and starts warming the stored config's grid run
    also = qvm.showcase_candidates(snap) if picked is None else []
    notice = None
    if saved:
        notice = dbc.Alert(
            f"Saved as gdpconfig version {saved}.", color="success", className="py-1 small", dismissable=True
        )
    elif restored:
        notice = dbc.Alert(
            f"Restored: now gdpconfig version {restored}.", color="success", className="py-1 small", dismissable=True
        )
    controls = html.Div(
        [
            html.Div(
                [
                    html.Label("task", htmlFor=ids.TUNE_TASK),
                    dcc.Dropdown(
                        id=ids.TUNE_TASK,
                        options=qvm.picker_options(snap, picked, also=also),
                        value=picked,
                        clearable=False,
                        placeholder="type a task id or name",
                    ),
                ],
                style={"minWidth": "480px"},
            ),
        ],
        className="controls",
    )
    bar = html.Div(
        [
            html.Div(
                edit_summary(edits.overrides, edits.errors, config), id=ids.TUNE_EDIT_SUMMARY, className="flex-grow-1"
            ),
            dcc.Clipboard(
                id=ids.TUNE_COPY,
                title="copy the permalink of this what-if",
                className="btn btn-sm btn-outline-secondary me-1",
            ),
            html.A(
                "permalink", id=ids.TUNE_PERMALINK, href=vm.permalink(picked, edits.overrides), className="small me-2"
            ),
            html.A(
                f"simulate the next {vm.SIM_HOURS} h",
                id=ids.TUNE_SIM_LINK,
                href=vm.simulation_link(edits.overrides),
                className="small me-2",
                title="the grid moved forward under the stored config and under these edits",
            ),
            dbc.Button("Reset edits", id=ids.TUNE_RESET, size="sm", color="secondary", outline=True),
        ],
        className="d-flex align-items-center gap-1 tune-bar",
    )
    return html.Div(
        [
            page_header(
                "Tuning",
                "Change a brokerage parameter and see at once what it does, before saving it: the picked task's "
                "candidates re-ranked, and the whole grid's waiting tasks re-brokered.",
            ),
            notice,
            url_notice(problem),
            bar,
            dbc.Row(
                [
                    dbc.Col(
                        card("gdpconfig parameters", param_editor(vm.editor_rows(config, raw, edits))),
                        md=5,
                        className="tune-left",
                    ),
                    dbc.Col(
                        [
                            card(
                                "Selected task: before / after",
                                [
                                    controls,
                                    html.Div(id=ids.TUNE_TASK_VIEW, className="tune-task-view"),
                                    levers_panel(TUNE_LEVERS, "queue or nucleus name"),
                                ],
                            ),
                            card(
                                "Whole grid: every waiting task re-brokered",
                                [
                                    html.Div(
                                        [
                                            dbc.Progress(
                                                id=ids.TUNE_GRID_PROGRESS,
                                                value=0,
                                                label="",
                                                style={"height": "14px"},
                                                className="flex-grow-1",
                                            ),
                                            dbc.Button(
                                                "Cancel",
                                                id=ids.TUNE_GRID_CANCEL,
                                                size="sm",
                                                color="secondary",
                                                outline=True,
                                                className="py-0 ms-2",
                                            ),
                                        ],
                                        id="tune-grid-progress-box",
                                        className="align-items-center",
                                        style={"display": "none"},
                                    ),
                                    # no loading overlay: the progress bar above tells a running job, and polls
                                    # every 100 ms would make an overlay flicker
                                    html.Div(
                                        grid_placeholder() if not edits.overrides else grid_starting(edits.overrides),
                                        id=ids.TUNE_GRID_VIEW,
                                    ),
                                ],
                            ),
                            card(f"The next {vm.SIM_HOURS} hours: stored vs proposed", future_panel()),
                        ],
                        md=7,
                    ),
                ],
                className="g-2",
            ),
            dbc.Row(
                [
                    # the history table needs width: half the row on wide screens, all of it below 1400 px
                    dbc.Col(
                        card("Save as a new gdpconfig version", save_panel(services.admin.can_save())), md=6, xxl=3
                    ),
                    dbc.Col(card("Brokerage report", report_panel()), md=6, xxl=3),
                    dbc.Col(
                        card("Saved versions", history_panel(services.admin.can_save(), services.admin.history_rows())),
                        md=12,
                        xxl=6,
                    ),
                ],
                className="g-2",
            ),
            dcc.Store(id=ids.TUNE_RAW, data=raw),
            dcc.Store(id=ids.TUNE_GRID_TRIGGER),
            dcc.Store(id=ids.TUNE_GRID_JOB),
            dcc.Interval(id=ids.TUNE_GRID_POLL, interval=GRID_POLL_MS, disabled=True),
            dcc.Store(id=ids.TUNE_FUTURE_JOB),
            dcc.Interval(id=ids.TUNE_FUTURE_POLL, interval=FUTURE_POLL_MS, disabled=True),
            dcc.Store(id=ids.TUNE_BASE_VERSION, data=config.version),
            dcc.Store(id=ids.TUNE_URL_SINK),
            dcc.Store(id=ids.TUNE_PICK, data=picked),
            dcc.Location(id=ids.TUNE_REDIRECT, refresh=True),
        ]
    )


def future_panel() -> html.Div:
    """Simulate the next hours under the stored config and under the edits (a background job), then the headline
    differences with links to each run on the simulation page."""
    return html.Div(
        [
            html.Div(
                [
                    dbc.Button(f"Simulate the next {vm.SIM_HOURS} h", id=ids.TUNE_FUTURE_RUN, size="sm",
                               color="primary", outline=True),
                    html.Label("replicas", htmlFor=ids.TUNE_FUTURE_REPLICAS, className="small ms-2 me-1"),
                    dbc.Select(id=ids.TUNE_FUTURE_REPLICAS, value="5", size="sm", style={"width": "5rem"},
                               options=[{"label": str(n), "value": str(n)} for n in (1, 2, 5, 10, 20)]),
                    dbc.Progress(id=ids.TUNE_FUTURE_PROGRESS, value=0, label="", style={"height": "14px"},
                                 className="flex-grow-1 ms-2"),
                    dbc.Button("Cancel", id=ids.TUNE_FUTURE_CANCEL, size="sm", color="secondary", outline=True,
                               className="py-0 ms-2"),
                ],
                className="d-flex align-items-center",
            ),
            html.Div(
                html.Div("Jobs finished, time queued, reassignments, throttled work queues and tasks completed over "
                         "the next hours, under the stored config and under these edits, side by side; with "
                         "replicas, each difference with its 95 % interval and, for several keys, which key made it.",
                         className="small text-muted mt-1"),
                id=ids.TUNE_FUTURE_VIEW,
            ),
        ]
    )  # fmt: skip
