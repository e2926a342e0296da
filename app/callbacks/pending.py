"""Pending tasks callbacks: the table of pending brokerages and their reasons, from the stored config's grid run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dash import Input, Output, callback, html

from app import ids
from app.callbacks.progress import progress_bar
from app.components.guard import guarded
from app.components.layout import empty_state, grid, link_col
from app.main import services
from app.viewmodels import pending as vm
from brokerage.brokers.batch import Key
from brokerage.model.explain import Decision


def decide(key: Key) -> Decision:
    """The memoised decision of one (broker, task) key of a grid run."""
    broker, tid = key
    st = services.state
    return st.nucleus_decision(tid) if broker == "task" else st.job_decision(tid)


def pending_view(set_progress: Callable[[tuple[int, str]], None] | None = None) -> Any:
    """Counts per kind of reason and the sortable, filterable table of pending tasks."""
    run = services.whatif.base_run(progress_bar(set_progress))
    rows = vm.pending_rows(services.state.snapshot(), run, decide)
    if not rows:
        return empty_state("No pending task", "Every waiting task found a queue (and a nucleus where it needs one).")
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(vm.kind_counts(rows).items(), key=lambda kv: -kv[1]))
    cols = [link_col("task", "/task?id=", pinned="left", maxWidth=110), {"field": "kind", "maxWidth": 170},
            {"field": "reason", "flex": 3, "tooltipField": "reason", "wrapText": True, "autoHeight": True},
            {"field": "taskname", "flex": 2, "tooltipField": "taskname"}, {"field": "broker", "maxWidth": 150},
            {"field": "user", "maxWidth": 130}, {"field": "gshare", "maxWidth": 150}]  # fmt: skip
    return html.Div(
        [
            html.Div(f"{len(rows)} pending brokerages: {counts}.", className="small mb-1", id="pending-sentence"),
            grid(rows, cols, id_=ids.PENDING_GRID, height=560, page_size=100, export_name="pending.csv", url_param="p"),
        ]
    )


@callback(
    Output(ids.PENDING_CONTENT, "children"),
    Input(ids.PENDING_TRIGGER, "data"),
    background=True,
    progress=[Output(ids.PENDING_PROGRESS, "value"), Output(ids.PENDING_PROGRESS, "label")],
    running=[(Output(ids.PENDING_PROGRESS_BOX, "style"), {"display": "block"}, {"display": "none"})],
    interval=300,
)
@guarded("Pending tasks")
def update_pending(set_progress: Callable[[tuple[int, str]], None], _: Any) -> Any:
    """Background job: the stored config's grid run (computed once per version), then the pending rows."""
    return pending_view(set_progress)
