"""Pending tasks callbacks: the table of pending brokerages and their reasons, from the stored config's grid run (a
job, polled after the page shows)."""

from __future__ import annotations

from typing import Any

from dash import Input, Output, State, callback, ctx, dcc, html, no_update

from app import ids
from app.components.layout import empty_state, error_alert, failure_alert, grid, link_col
from app.main import services
from app.viewmodels import pending as vm
from brokerage.brokers.batch import GridRun, Key
from brokerage.model.explain import Decision

FIRST_WAIT_S = 0.5  # the request that starts (or finds) the run waits this long: a ready run shows without a poll
_SHOW, _HIDE = {"display": "block"}, {"display": "none"}


def decide(key: Key) -> Decision:
    """The memoised decision of one (broker, task) key of a grid run."""
    broker, tid = key
    st = services.state
    return st.nucleus_decision(tid) if broker == "task" else st.job_decision(tid)


def pending_view(run: GridRun | None = None, criteria: str | None = None) -> Any:
    """Counts per kind of reason and the sortable, filterable table of pending tasks (the stored config's grid run
    is waited for when RUN is None); CRITERIA narrows it to the tasks that criteria code removed candidates of."""
    run = run if run is not None else services.whatif.base_run()
    rows = vm.pending_rows(services.state.snapshot(), run, decide, criteria)
    scope = html.Span([f" in which {criteria} removed candidates (", dcc.Link("all pending", href="/pending"), ")"]
                      ) if criteria else ""  # fmt: skip
    if not rows:
        return empty_state(
            "No pending task" + (f" with {criteria}" if criteria else ""),
            "Every waiting task found a queue (and a nucleus where it needs one)." if not criteria
            else f"No pending brokerage had a candidate removed by {criteria}.",
        )  # fmt: skip
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(vm.kind_counts(rows).items(), key=lambda kv: -kv[1]))
    cols = [link_col("task", "/task?id=", pinned="left", maxWidth=110), {"field": "kind", "maxWidth": 170},
            {"field": "reason", "flex": 3, "tooltipField": "reason", "wrapText": True, "autoHeight": True},
            {"field": "taskname", "flex": 2, "tooltipField": "taskname"}, {"field": "broker", "maxWidth": 150},
            {"field": "user", "maxWidth": 130}, {"field": "gshare", "maxWidth": 150}]  # fmt: skip
    if criteria:
        cols.insert(1, {"field": "removed_by_criteria", "headerName": f"removed by {criteria}", "minWidth": 170,
                        "sort": "desc"})  # fmt: skip
    return html.Div(
        [
            html.Div(
                [f"{len(rows)} pending brokerages", scope, f": {counts}."],
                className="small mb-1",
                id="pending-sentence",
            ),
            grid(rows, cols, id_=ids.PENDING_GRID, height=560, page_size=100, export_name="pending.csv", url_param="p"),
        ]
    )


@callback(
    Output(ids.PENDING_CONTENT, "children"),
    Output(ids.PENDING_PROGRESS_BOX, "style"),
    Output(ids.PENDING_PROGRESS, "value"),
    Output(ids.PENDING_PROGRESS, "label"),
    Output(ids.PENDING_POLL, "disabled"),
    Input(ids.PENDING_TRIGGER, "data"),
    Input(ids.PENDING_POLL, "n_intervals"),
    State(ids.PENDING_CRITERIA, "data"),
)
def update_pending(_snap: Any, _tick: int | None, criteria: str | None = None) -> tuple[Any, ...]:
    """Start (or find) the job of the stored config's grid run, show its progress while it runs, then the rows."""
    try:
        state = services.whatif.base_state(0 if ctx.triggered_id == ids.PENDING_POLL else FIRST_WAIT_S)
        if state.state == "running":
            return no_update, _SHOW, max(state.percent, 2), state.label or "starting…", False
        if state.state == "done":
            return pending_view(state.result, criteria), _HIDE, 100, "", True
        return failure_alert("Pending tasks", state.error or state.state), _HIDE, 0, "", True
    except Exception as exc:  # error boundary: say what failed inline
        return error_alert("Pending tasks", exc), _HIDE, 0, "", True
