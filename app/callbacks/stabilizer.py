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
    # a dropdown sends a string or nothing; anything else is a forged request and filters nothing
    user = user if isinstance(user, str) else None
    queue = queue if isinstance(queue, str) else None
    df = services.state.stabilizer_frame()
    if df.empty:
        return empty_state(
            "No analysis activity",
            "No user has queued or running jobs in the snapshot's user_job_counts, so nothing can be throttled.",
        )
    rows = vm.rows(df, user, queue)
    cols = [
        link_col("panda_queue", "/queue?name=", "queue", pinned="left", minWidth=140, tooltipField="gshare"),
        *vm.column_defs(),
    ]
    n_thr = int(df["throttled"].sum())
    return html.Div(
        [
            dbc.Row([dbc.Col(card("Queues", figure(vm.queue_figure(vm.per_queue(df), queue))), md=6),
                     dbc.Col(card("User", figure(vm.user_figure(df, user) if user else vm.users_by_excess(df))), md=6)], className="g-2"),
            card(f"(PQ, user) pairs: {len(rows)} shown, {n_thr} throttled in total · click a user for the tasks their limits hold back",
                 [html.Div(grid(rows, cols, height=360, export_name="stabilizer.csv", url_param="s"), id="stab-pairs"),
                  tasks_view(df, user, queue)]),
        ]
    )  # fmt: skip


def tasks_view(df: Any, user: str | None, queue: str | None) -> Any:
    """The picked user's drill-down: their waiting analysis tasks and where each queue of the table stands in each
    one's job brokerage (removed by the Stabilizer, by another filter, ranked), each linking to its brokerage."""
    if not user:
        return html.Div("Click a user (or pick one above) for the waiting tasks their limits hold back.",
                        className="small text-muted mt-2", id="stab-tasks-list")  # fmt: skip
    st = services.state
    snap = st.snapshot()
    waiting = set(waiting_task_ids(snap))
    queues = [queue] if queue else sorted(set(df.loc[df["produsername"] == user, "panda_queue"]))
    items, hit, seen = [], 0, set()
    for q in queues:
        for t in vm.affected_tasks(snap.tasks, waiting, st.job_decision, user, q):
            seen.add(t["task"])
            hit += t["stabilizer"]
            items.append(html.Li([dcc.Link(f"task {t['task']}", href=f"/queues?task={t['task']}&why={q}"),
                                  f" ({t['status']}) at {q}: {t['standing']}"]))  # fmt: skip
    where = queue or f"{len(queues)} queues"
    if not items:
        return html.Div(f"{user} has no waiting analysis task: the limits at {where} hold back no brokerage now.",
                        className="small text-muted mt-2", id="stab-tasks-list")  # fmt: skip
    return html.Div(
        [html.Div(f"Waiting analysis tasks of {user} at {where}: {len(seen)}; {hit} of the places below are removed "
                  f"by the Analysis Stabilizer ({vm.STABILIZER_CODE}).", className="fw-semibold small"),
         html.Ul(items[:40], className="small mb-0")],
        id="stab-tasks-list", className="mt-2",
    )  # fmt: skip


url_sync(ids.STAB_URL_SINK, {"user": (ids.STAB_USER, "value"), "queue": (ids.STAB_QUEUE, "value")})
