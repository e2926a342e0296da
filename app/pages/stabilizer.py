"""Analysis Stabilizer page: queue lengths against their caps, per queue and per user."""

from __future__ import annotations

from typing import Any

import dash
from dash import dcc, html

from app import ids
from app.components.guard import guarded
from app.components.layout import loading, page_header, url_notice
from app.components.refresh import refresh_control
from app.main import state
from app.viewmodels import stabilizer as vm
from app.viewmodels.common import unusable_choice

dash.register_page(__name__, path="/stabilizer", title="Stabilizer · PanDA brokerage", name="Stabilizer")


@guarded("Stabilizer page")
def layout(user: str | None = None, queue: str | None = None, refresh: str | None = None, **_: Any) -> html.Div:
    """User and queue pickers over the Stabilizer table; ?user=&queue= preselect."""
    df = state.stabilizer_frame()
    users = vm.users(df)
    queues = sorted(df["panda_queue"].unique()) if len(df) else []
    picked = user if user in users else None  # the whole grid unless the URL names a user
    return html.Div(
        [
            page_header("Analysis Stabilizer", "A PQ can throttle once nQ ≥ max(BASE_QUEUE_LENGTH_PER_PQ, BASE_EXPECTED_WAIT_HOUR_ON_PQ × trr) (grey mark); there a user is throttled when nQ(PQ,user) exceeds max_q_len = max(BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER, BASE_QUEUE_RATIO_ON_PQ × nR, nQ_max × percentage).", refresh_control(refresh)),
            url_notice(unusable_choice("user", user, users, picked)),
            url_notice(unusable_choice("queue", queue, queues, None)),
            html.Div(
                [html.Div([html.Label("user"), dcc.Dropdown(id=ids.STAB_USER, options=users, value=picked, placeholder="all users")]),
                 html.Div([html.Label("queue"), dcc.Dropdown(id=ids.STAB_QUEUE, options=queues, value=queue if queue in queues else None, placeholder="all queues")])],
                className="controls",
            ),
            loading(html.Div(id=ids.STAB_CONTENT)),
            dcc.Store(id=ids.STAB_URL_SINK),
        ]
    )  # fmt: skip
