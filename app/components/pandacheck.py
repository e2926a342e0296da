"""The task page's PanDA 1.0.4 panel: its card (status line, result, Cancel / Run again) and the result's view."""

from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids_pandacheck as ids
from app.components.layout import card
from app.viewmodels import pandacheck as vm

POLL_MS = 400  # the crosscheck job is polled this often while it runs (PanDA takes 1-3 s on a 700-queue grid)
SHOWN: dict[str, str] = {}
HIDDEN = {"display": "none"}
STARTING = "Starting PanDA 1.0.4's brokers and ours on this task…"  # until the callback's first answer


def panda_card(hidden: bool = False) -> html.Div:
    """The panel: filled by the callback (app/callbacks/pandacheck.py) after the page shows, never before; HIDDEN
    keeps its ids on a page without a task."""
    # no wrapper around the buttons: with both hidden and no status the line takes no height
    status = [
        html.Span(STARTING, id=ids.PANDA_STATUS, className="small text-muted"),
        dbc.Button("Cancel", id=ids.PANDA_CANCEL, size="sm", color="secondary", outline=True, style=HIDDEN,
                   className="py-0 ms-2"),
        dbc.Button("Run again", id=ids.PANDA_RUN, size="sm", color="secondary", outline=True, style=HIDDEN,
                   className="py-0 ms-2"),
    ]  # fmt: skip
    body = [
        html.Div(status),
        html.Div(id=ids.PANDA_BODY),
        dcc.Store(id=ids.PANDA_JOB, data=None),
        dcc.Interval(id=ids.PANDA_POLL, interval=POLL_MS, disabled=True),
    ]
    return html.Div(card("PanDA 1.0.4 crosscheck", body), id=ids.PANDA_CARD, style=HIDDEN if hidden else SHOWN)


def missing_view(why: str) -> dbc.Alert:
    """PanDA's source is not set up: the panel's inline error, with the sentence saying where it was looked for."""
    return dbc.Alert(
        [html.Strong(vm.MISSING_HEADLINE), html.Div(why, className="small text-muted")],
        color="secondary",
        className="py-1 px-2 mb-0 small panda-missing",
    )


def running_line(task_id: Any, label: str) -> html.Span:
    """The status line while the job runs, with what it waits for (a worker, a free PanDA process) if it waits."""
    wait = f" ({label})" if label.startswith("waiting") else ""
    return html.Span([dbc.Spinner(size="sm", spinner_class_name="me-1"),
                      f"Running PanDA 1.0.4's brokers and ours on task {task_id}…{wait}"])  # fmt: skip


def _table(rows: list[dict[str, str]], names: str) -> html.Div:
    head = html.Tr([html.Th(names), html.Th("ours"), html.Th("PanDA's"), html.Th("differing field")])
    body = [
        html.Tr(
            [html.Td(r["name"]), html.Td(r["ours"]), html.Td(r["panda"]), html.Td(r["field"], title=r["why"] or None)]
        )
        for r in rows
    ]
    return html.Div(
        html.Table([html.Thead(head), html.Tbody(body)], className="table table-sm small mb-1 panda-diff-table"),
        className="panda-diff-scroll",
        style={"maxHeight": "11rem", "overflowY": "auto"},  # many differences scroll: the card never grows long
    )


def verdict_view(result: dict[str, Any]) -> html.Div:
    """A finished crosscheck: "PanDA 1.0.4 agrees" or the differing names in a compact table, a line per broker and
    which rule profile both sides ran under."""
    v = vm.verdict(result)
    color = "text-success" if v.agrees else ("text-danger" if v.failure else "text-warning-emphasis")
    parts: list[Any] = [html.Div(html.Strong(v.headline), className=f"{color} panda-headline")]
    if v.failure:
        parts.append(html.Div(v.failure, className="small text-danger"))
    if v.rows:
        names = "nucleus" if all(r["broker"] == "nucleus" for r in v.rows) else "queue"
        parts.append(_table(v.rows, names))
    parts += [html.Div(line, className="small") for line in v.lines]
    parts.append(html.Div(v.profile, className="small text-muted panda-profile"))
    return html.Div(parts, className="panda-verdict", **{"data-agrees": "1" if v.agrees else "0"})
