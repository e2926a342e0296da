"""Grid diff callbacks: the table of changed brokerages and their causes, computed as a background job."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dash import Input, Output, callback, html

from app import ids_diff as ids
from app.callbacks.urlstate import url_sync
from app.components.guard import guarded
from app.components.layout import empty_state, grid, link_col
from app.main import services
from app.services.diffs import DiffError
from app.viewmodels import diff as vm

STEPS = {"brokering the old grid": 10, "brokering the new grid": 35}  # progress bar positions per step


def diff_view(old: int | None, new: int | None, task: Any, say: Callable[[str], None] | None = None) -> Any:
    """The summary sentence and the table of changed brokerages (or why there is none)."""
    if old is None and new is None:
        return None  # nothing stored to compare: the page says so above
    if old is None or new is None:
        return empty_state("Pick two versions", "Choose the older and the newer grid version above.")
    if old == new:
        return empty_state("The same version twice", f"v{old} against itself has no difference; pick another one.")
    try:
        tid = int(task) if task not in (None, "") else None
        diff = services.diffs.diff(old, new, tid, progress=say)
    except (DiffError, ValueError) as exc:
        return empty_state("Cannot compare", str(exc))
    rows = vm.rows(diff)
    sentence = html.Div(vm.summary(diff), className="small mb-1", id="diff-sentence")
    if not rows:
        return html.Div([sentence, empty_state("No brokerage changed", "Every compared task keeps its top candidate, "
                                                 "its top-10 set and its pending state.")])  # fmt: skip
    cols = [link_col("task", "/task?id=", pinned="left", maxWidth=100), {"field": "broker", "maxWidth": 100},
            {"field": "what", "headerName": "what changed", "flex": 2, "wrapText": True, "autoHeight": True, "tooltipField": "what"},
            {"field": "because", "flex": 5, "wrapText": True, "autoHeight": True, "tooltipField": "because"},
            {"field": "input", "maxWidth": 120}, {"field": "attributed to", "maxWidth": 130}]  # fmt: skip
    return html.Div([sentence, grid(rows, cols, id_=ids.DIFF_GRID, height=560, page_size=50, export_name="diff.csv")])


@callback(
    Output(ids.DIFF_CONTENT, "children"),
    Input(ids.DIFF_FROM, "value"),
    Input(ids.DIFF_TO, "value"),
    Input(ids.DIFF_TASK, "value"),
    background=True,
    progress=[Output(ids.DIFF_PROGRESS, "value"), Output(ids.DIFF_PROGRESS, "label")],
    running=[(Output(ids.DIFF_PROGRESS_BOX, "style"), {"display": "block"}, {"display": "none"})],
    interval=300,
)
@guarded("Grid diff")
def update_diff(set_progress: Callable[[tuple[int, str]], None], old: Any, new: Any, task: Any) -> Any:
    """Background job: the diff of the two picked versions (kept on disk once computed)."""

    def say(step: str) -> None:
        set_progress((STEPS.get(step, 70), step))

    return diff_view(old, new, task, say)


url_sync(
    ids.DIFF_URL_SINK,
    {"from": (ids.DIFF_FROM, "value"), "to": (ids.DIFF_TO, "value"), "task": (ids.DIFF_TASK, "value")},
)
