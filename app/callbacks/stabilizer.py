"""Stabilizer callbacks: charts and table for the picked user and queue."""

from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, callback, dcc, html

from app import ids
from app.callbacks.urlstate import url_sync
from app.components.guard import guarded
from app.components.layout import card, empty_state, figure, grid, link_col
from app.main import services
from app.viewmodels import stabilizer as vm
from brokerage.model.waiting import waiting_task_ids


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
    for r in rows:
        r["row_key"] = f"{r['panda_queue']}|{r['produsername']}|{r['gshare']}"
    cols = [
        link_col("panda_queue", "/queue?name=", "queue", pinned="left", minWidth=140, tooltipField="gshare"),
        *vm.column_defs(),
    ]
    n_thr = int(df["throttled"].sum())
    return html.Div(
        [
            dbc.Row([dbc.Col(card("Queues", figure(vm.queue_figure(vm.per_queue(df), queue))), md=6),
                     dbc.Col(card("User", figure(vm.user_figure(df, user) if user else vm.users_by_excess(df))), md=6)], className="g-2"),
            card(f"(PQ, user) pairs: {len(rows)} shown, {n_thr} throttled in total · click a row for the user's tasks it affects",
                 html.Div(grid(rows, cols, id_=ids.STAB_GRID, height=360, export_name="stabilizer.csv", url_param="s",
                               row_id="row_key"), id="stab-pairs")),
        ]
    )  # fmt: skip


@callback(Output(ids.STAB_TASKS, "children"), Input(ids.STAB_GRID, "cellClicked"), prevent_initial_call=True)
@guarded("Stabilizer tasks")
def update_stabilizer_tasks(event: dict[str, Any] | None) -> Any:
    """The clicked (PQ, user) pair's drill-down: the user's waiting analysis tasks and where the PQ stands in each
    one's job brokerage (removed by the Stabilizer, by another filter, ranked), each linking to its brokerage."""
    if not event or event.get("rowId") is None:
        return None
    queue, user, _share = [*str(event["rowId"]).split("|"), "", ""][:3]
    st = services.state
    snap = st.snapshot()
    found = vm.affected_tasks(snap.tasks, set(waiting_task_ids(snap)), st.job_decision, user, queue)
    if not found:
        return html.Div(f"{user} has no waiting analysis task: the limit at {queue} holds back no brokerage now.",
                        className="small text-muted", id="stab-tasks-list")  # fmt: skip
    hit = sum(t["stabilizer"] for t in found)
    items = [html.Li([dcc.Link(f"task {t['task']}", href=f"/queues?task={t['task']}&why={queue}"),
                      f" ({t['status']}): {t['standing']}"]) for t in found]  # fmt: skip
    return html.Div(
        [html.Div(f"Waiting analysis tasks of {user} at {queue}: {len(found)}, of which {hit} have {queue} removed "
                  f"by the Analysis Stabilizer ({vm.STABILIZER_CODE}).", className="fw-semibold small"),
         html.Ul(items, className="small mb-0")],
        id="stab-tasks-list",
    )  # fmt: skip


url_sync(ids.STAB_URL_SINK, {"user": (ids.STAB_USER, "value"), "queue": (ids.STAB_QUEUE, "value")})
