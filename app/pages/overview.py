"""Overview page: the grid at a glance and the skip criteria that hold waiting tasks back."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from app.components.guard import guarded
from app.components.layout import card, figure, kpi, loading, page_header
from app.components.refresh import refresh_control
from app.main import state
from app.viewmodels import common
from app.viewmodels import overview as vm
from app.viewmodels import tasks as tvm

dash.register_page(__name__, path="/", title="Overview · PanDA brokerage", name="Overview")

POLL_MS = 300  # the census job is polled this often while the stored config's grid run is computed


@guarded("Overview page")
def layout(refresh: str | None = None, **_: Any) -> html.Div:
    """KPIs, composition charts and (loaded after the page) the skip-criteria census."""
    snap = state.snapshot()
    c = state.answers.get("overview_counts", lambda src: vm.counts(src.snap))  # per snapshot and config
    jobs = c["jobs_by_state"]
    return html.Div(
        [
            page_header(
                "Overview",
                f"Grid snapshot taken {snap.taken_at:%Y-%m-%d %H:%M} UTC. Click a number to open its page.",
                refresh_control(refresh),
            ),
            dbc.Row(
                [
                    kpi("queues", f"{c['queues']:,}", "/queues"),
                    kpi("online queues", f"{c['online']:,}", "/queues"),
                    kpi("nuclei", f"{c['nuclei']} of {c['sites']} sites", "/nuclei"),
                    kpi("tasks", f"{c['tasks']:,}", "/tasks"),
                    kpi("waiting tasks", f"{c['waiting']:,}", "/pending"),
                    kpi("jobs", f"{c['jobs']:,}", "/queues"),
                ],
                className="g-2",
            ),
            dbc.Row(
                [
                    dbc.Col(card("Queues", figure(vm.queue_status_figure(c))), md=4),
                    dbc.Col(card("Tasks", figure(tvm.status_figure(c["tasks_by_status"]))), md=4),
                    dbc.Col(
                        card(
                            "Jobs",
                            figure(
                                common.bar(list(jobs), list(jobs.values()), "Jobs by state", 300, common.PALETTE[1])
                            ),
                        ),
                        md=4,
                    ),
                ],
                className="g-2",
            ),
            card(
                "Why waiting tasks are held back",
                [
                    html.Div(
                        [
                            html.Div(
                                "Brokering every waiting task under the stored config…", className="small text-muted"
                            ),
                            dbc.Progress(id="overview-progress", value=0, label="", style={"height": "14px"}),
                        ],
                        id="overview-progress-box",
                        style={"display": "none"},
                    ),
                    loading(html.Div(id=ids.OVERVIEW_CONTENT)),
                ],
            ),
            dcc.Store(id="overview-trigger", data=snap.key),
            dcc.Interval(id=ids.OVERVIEW_POLL, interval=POLL_MS, disabled=True),
        ]
    )
