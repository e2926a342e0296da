"""Levers boxes: a click on a ranked or skipped queue (Queues, Tuning) or nucleus (Nuclei, Tuning) shows its levers."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from dash import ALL, Input, Output, State, callback, ctx
from dash.exceptions import PreventUpdate

from app import ids
from app.components.layout import error_alert
from app.components.levers import levers_hint, levers_view
from app.ids_levers import LEVERS_GRID, LEVERS_PICK, NUCLEI_LEVERS, QUEUES_LEVERS, TUNE_LEVERS
from app.main import services
from app.viewmodels import queues as qvm
from brokerage.model.errors import BrokerageError

log = logging.getLogger(__name__)


def levers_box(task: Any, name: str | None, kind: str, edits: Mapping[str, Any] | None = None) -> Any:
    """The levers of NAME for TASK (or the hint when nothing is picked); errors inline."""
    tid = qvm.parse_task(task)
    if tid is None or not name:
        return levers_hint(kind)
    try:
        return levers_view(services.levers.explain(tid, name, kind, edits), edits)
    except BrokerageError as exc:  # an unknown task or queue, a refused edit: said in its own sentence
        return error_alert("Levers", exc)
    except Exception as exc:  # error boundary: one candidate's levers must not break the page
        log.exception("levers of %s for task %s failed", name, task)
        return error_alert("Levers", exc)


def _clicked(event: Mapping[str, Any] | None) -> str | None:
    return str(event["rowId"]) if event and event.get("rowId") is not None else None


@callback(
    Output(QUEUES_LEVERS, "children"),
    Output(QUEUES_LEVERS, "is_open"),
    Input(ids.QUEUES_RANKED, "cellClicked"),
    Input(ids.QUEUES_SKIPPED, "cellClicked"),
    Input(ids.QUEUES_TASK, "value"),
    prevent_initial_call=True,
)
def queue_levers(ranked: dict[str, Any] | None, skipped: dict[str, Any] | None, task: Any) -> tuple[Any, bool]:
    """The clicked queue's levers for the picked task; a new task clears and closes the panel, and nothing but a
    click on a row opens it (a redrawn table with no click leaves it shut)."""
    event = ranked if ctx.triggered_id == ids.QUEUES_RANKED else skipped
    name = None if ctx.triggered_id == ids.QUEUES_TASK else _clicked(event)
    if not name:
        return levers_hint("queue"), False
    return levers_box(task, name, "queue"), True


@callback(
    Output(NUCLEI_LEVERS, "children"),
    Output(NUCLEI_LEVERS, "is_open"),
    Input({"type": LEVERS_GRID, "table": ALL}, "cellClicked"),
    Input(ids.NUCLEI_TASK, "value"),
    prevent_initial_call=True,
)
def nucleus_levers(events: list[dict[str, Any] | None], task: Any) -> tuple[Any, bool]:
    """The clicked nucleus' levers for the picked task; a new task clears and closes the panel, and tables that
    appear with a task pick (their cellClicked fires empty) leave it shut: only a click on a row opens it."""
    if ctx.triggered_id == ids.NUCLEI_TASK or not isinstance(ctx.triggered_id, Mapping):
        return levers_hint("nucleus"), False
    table = ctx.triggered_id.get("table")
    ordered = [e for e, spec in zip(events, ctx.inputs_list[0], strict=False) if spec["id"].get("table") == table]
    name = _clicked(ordered[0] if ordered else None)
    if not name:
        return levers_hint("nucleus"), False
    return levers_box(task, name, "nucleus"), True


@callback(
    Output(TUNE_LEVERS, "children"),
    Output(TUNE_LEVERS, "is_open"),
    Input({"type": LEVERS_PICK, "kind": ALL, "side": ALL, "name": ALL}, "n_clicks"),
    State(ids.TUNE_TASK, "value"),
    State(ids.TUNE_RAW, "data"),
    prevent_initial_call=True,
)
def tuning_levers(clicks: list[int | None], task: Any, raw: dict[str, Any] | None) -> tuple[Any, bool]:
    """The clicked candidate's levers under the current edits; each link adds its edit to them."""
    picked = ctx.triggered_id
    if not isinstance(picked, Mapping) or not ctx.triggered[0].get("value") or not any(clicks):
        raise PreventUpdate  # the tables were redrawn, nothing was clicked
    edits = services.whatif.edits(raw).overrides
    kind = "nucleus" if picked["kind"] == "nucleus" else "queue"
    return levers_box(task, str(picked["name"]), kind, edits), True
