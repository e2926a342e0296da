"""Detail page callbacks: a task's job brokerage headline and a queue's Stabilizer rows, computed after the page shows."""

from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, callback, html
from dash.exceptions import PreventUpdate

from app import ids
from app.components.guard import guarded
from app.components.layout import empty_state, grid
from app.main import services
from app.viewmodels import pending as pvm
from app.viewmodels import stabilizer as svm

# who is throttled here comes first; the queue-wide terms repeat on every row, so they go last
STAB_COLUMNS = ("produsername", "vo", "throttled", "nQ_user", "max_q_len", "max_q_len_rule", "nR_user", "percentage",
                "gshare", "nQ", "throttle_from", "nQ_max", "can_throttle")  # fmt: skip


@callback(Output(ids.TASK_JOBS, "children"), Input(ids.TASK_ID, "data"))
@guarded("Job brokerage")
def update_task_jobs(task_id: int | None) -> Any:
    """Status, kept and skipped counts and the best five queues of the task's (memoised) job brokerage."""
    if task_id is None:
        raise PreventUpdate
    d = services.state.job_decision(int(task_id))
    held = pvm.throttle_sentence(d)
    if held:
        return dbc.Alert([html.Strong("Throttled. "), held], color="warning", className="py-2 mb-1 throttle-headline")
    if d.status != "ok":
        return html.Div(
            f"{d.status}: " + pvm.reason(d.broker if d.label == "queue" else "task", d.criteria_counts(), d)[1]
        )
    top = ", ".join(d.ranked_names[:5]) or "none"
    return html.Div(f"{d.status}: {len(d.candidates)} queues kept, {len(d.skipped)} skipped; best: {top}")


@callback(Output(ids.QUEUE_STAB, "children"), Input(ids.QUEUE_NAME, "data"))
@guarded("Analysis Stabilizer")
def update_queue_stabilizer(name: str | None) -> Any:
    """The (PQ, user) Stabilizer rows at the queue."""
    if not name:
        raise PreventUpdate
    stab = svm.rows(services.state.stabilizer_frame(), queue=name)
    if not stab:
        return empty_state("No analysis users", "No user has analysis jobs here.")
    return grid(stab, [{"field": c} for c in STAB_COLUMNS], height=220)
