"""Stabilizer callbacks: charts and table for the picked user and queue."""

from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, callback, html

from app import ids
from app.callbacks.urlstate import url_sync
from app.components.guard import guarded
from app.components.layout import card, empty_state, figure, grid, link_col
from app.main import services
from app.viewmodels import stabilizer as vm

COLUMNS = ["gshare", "produsername", "excess", "nQ_user", "max_q_len", "max_q_len_rule", "throttled", "nQ", "nQ_max", "nQ_max_rule", "nR", "nR_user", "trr",
           "percentage", "percentage_rule", "release_rule"]  # fmt: skip


@callback(Output(ids.STAB_CONTENT, "children"), Input(ids.STAB_USER, "value"), Input(ids.STAB_QUEUE, "value"))
@guarded("Stabilizer")
def update_stabilizer(user: str | None, queue: str | None) -> Any:
    """Per-queue chart, the user's chart and the filtered (PQ, user) table."""
    df = services.state.stabilizer_frame()
    if df.empty:
        return empty_state(
            "No analysis activity",
            "No user has queued or running jobs in the snapshot's user_job_counts, so nothing can be throttled.",
        )
    rows = vm.rows(df, user, queue)
    cols = [
        link_col("panda_queue", "/queue?name=", "queue", pinned="left", minWidth=170),
        *({"field": c} for c in COLUMNS),
    ]
    cols[3] = {
        "field": "excess",
        "headerName": "excess (nQ_user − max_q_len)",
        "sort": "desc",
        "type": "numericColumn",
        "minWidth": 130,
    }
    cols[7] = {
        "field": "throttled",
        "cellStyle": {
            "styleConditions": [
                {"condition": "params.value === true", "style": {"color": "#dc2626", "fontWeight": "600"}}
            ]
        },
    }
    n_thr = int(df["throttled"].sum())
    return html.Div(
        [
            dbc.Row([dbc.Col(card("Queues", figure(vm.queue_figure(vm.per_queue(df), queue))), md=6),
                     dbc.Col(card("User", figure(vm.user_figure(df, user) if user else vm.users_by_excess(df))), md=6)], className="g-2"),
            card(f"(PQ, user) pairs: {len(rows)} shown, {n_thr} throttled in total", grid(rows, cols, height=360, export_name="stabilizer.csv", url_param="s")),
        ]
    )  # fmt: skip


url_sync(ids.STAB_URL_SINK, {"user": (ids.STAB_USER, "value"), "queue": (ids.STAB_QUEUE, "value")})
