"""Task detail callbacks: the job brokerage headline of the task, brokered after the page shows."""

from __future__ import annotations

from typing import Any

from dash import Input, Output, callback, html
from dash.exceptions import PreventUpdate

from app import ids
from app.components.guard import guarded
from app.main import services


@callback(Output(ids.TASK_JOBS, "children"), Input(ids.TASK_ID, "data"))
@guarded("Job brokerage")
def update_task_jobs(task_id: int | None) -> Any:
    """Status, kept and skipped counts and the best five queues of the task's (memoised) job brokerage."""
    if task_id is None:
        raise PreventUpdate
    d = services.state.job_decision(int(task_id))
    top = ", ".join(d.ranked_names[:5]) or "none"
    return html.Div(f"{d.status}: {len(d.candidates)} queues kept, {len(d.skipped)} skipped; best: {top}")
