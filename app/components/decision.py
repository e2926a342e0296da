"""Component trees that show one brokerage Decision: headline, funnel, ranked factors, skips and notes."""

from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
from dash import html

from app.components.layout import card, empty_state, figure, grid, link_col
from app.viewmodels import queues as vm
from brokerage.explain import Decision


def headline(decision: Decision, what: str) -> html.Div:
    """Status badge with counts and the broker's message."""
    s = vm.summary(decision)
    color = "success" if s["status"] == "ok" else "warning"
    parts: list[Any] = [
        dbc.Badge(s["status"], color=color, className="me-2 badge-status"),
        html.Span(
            f"{s['broker']} broker · {s['initial']} {what} considered · {s['final']} kept · {s['skipped']} skipped"
        ),
    ]
    if s["pending_minutes"]:
        parts.append(html.Span(f" · task pending, retried in {s['pending_minutes']} min", className="text-warning"))
    if s["message"]:
        parts.append(html.Div(s["message"], className="small text-muted"))
    if s["config_changed"]:
        parts.append(
            html.Div(
                "config differs from defaults: " + ", ".join(f"{k}={v}" for k, v in s["config_changed"].items()),
                className="small text-muted",
            )
        )
    return html.Div(parts, className="mb-2")


def notes(decision: Decision) -> Any:
    """Checks the broker could not judge, listed below the result."""
    rows = vm.note_rows(decision)
    if not rows:
        return None
    label = decision.label
    shown = rows[:20]
    more = f" … and {len(rows) - 20} more" if len(rows) > 20 else ""
    return html.Details(
        [html.Summary(f"{len(rows)} notes: checks not judged for surviving candidates"),
         html.Ul([html.Li(f"{r[label]}: {r['check']} — {r['text']}") for r in shown], className="note-list mb-0"),
         html.Div(more, className="small")],
        className="mb-2",
    )  # fmt: skip


def skipped_grid(decision: Decision, rows: list[dict[str, Any]], prefix: str) -> Any:
    """Removed candidates with criteria, filter stage and the sentence, filterable by criteria."""
    label = decision.label
    if not decision.skipped:
        return empty_state("Nothing was skipped", "Every candidate passed every filter.")
    cols = [
        link_col(label, prefix, minWidth=180),
        {"field": "criteria", "maxWidth": 150},
        {"field": "stage", "headerName": "filter", "maxWidth": 220},
        {"field": "reason", "flex": 3, "minWidth": 300, "tooltipField": "reason"},
        {"field": "temporary", "maxWidth": 110},
    ]
    return grid(rows, cols, height=320, export_name=f"skipped_{decision.task}.csv", page_size=100)


def ranked_grid(decision: Decision, prefix: str) -> Any:
    """Ranked candidates with weight, factors and the numbers behind them."""
    rows = vm.factor_rows(decision)
    if not rows:
        return empty_state(
            "No candidate left", "Every candidate was removed by a filter; the skipped table says which and why."
        )
    label = decision.label
    cols: list[dict[str, Any]] = [
        {"field": "rank", "maxWidth": 70, "pinned": "left"},
        link_col(label, prefix, pinned="left", minWidth=170),
    ]
    for k in rows[0]:
        if k in ("rank", label):
            continue
        col: dict[str, Any] = {"field": k, "headerName": k.removeprefix("f_") + (" ×" if k.startswith("f_") else "")}
        if isinstance(rows[0][k], float):
            col["valueFormatter"] = {"function": "d3.format('.4~g')(params.value)"}
        cols.append(col)
    return grid(rows, cols, height=min(80 + 28 * len(rows), 360), export_name=f"ranked_{decision.task}.csv")


def job_decision_view(decision: Decision, criteria: list[str] | None) -> html.Div:
    """The whole explained job brokerage of one task."""
    rows = vm.skipped_rows(decision, criteria)
    filt = f" (criteria {', '.join(criteria)})" if criteria else ""
    return html.Div(
        [
            headline(decision, "queues"),
            dbc.Row(
                [
                    dbc.Col(figure(vm.funnel_figure(decision)), md=5),
                    dbc.Col(figure(vm.factor_figure(decision)), md=7),
                ]
            ),
            card("Ranked candidates (best first)", ranked_grid(decision, "/queue?name="), footer=None),
            notes(decision),
            card(f"Skipped queues{filt}: {len(rows)}", skipped_grid(decision, rows, "/queue?name=")),
        ],
        id="job-decision-view",
    )
