"""Component trees that show one brokerage Decision: headline, funnel, ranked factors, skips and notes."""

from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from app import ids_levers as lids
from app.components.layout import card, empty_state, figure, grid
from app.components.levers import levers_panel
from app.viewmodels import answer as avm
from app.viewmodels import pending as pvm
from app.viewmodels import queues as vm
from brokerage.model.explain import Decision


def headline(decision: Decision, what: str) -> html.Div:
    """Status badge with counts and the broker's message."""
    s = vm.summary(decision)
    color = "success" if s["status"] == "ok" else "warning"
    held = pvm.throttle_sentence(decision)
    if held:  # no filter ran: the throttle is the whole answer, counts of zero would only mislead
        return html.Div(
            [dbc.Alert([dbc.Badge(s["status"], color=color, className="me-2 badge-status"), html.Strong("Throttled. "), held,
                       html.Div(f"{s['broker']} broker · no queue was considered", className="small text-muted")],
                      color="warning", className="py-2 mb-0 throttle-headline")],
            className="mb-2",
        )  # fmt: skip
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


def pending_answer(decision: Decision, page: str = "/queues") -> html.Div | None:
    """For a brokerage whose filters left nothing: the numbered funnel step that emptied the list, then the skipped
    candidates per criteria code (most first, `-test` last) with examples, a link that narrows the skipped table
    to the code (PAGE's ?criteria=) and one to the pending tasks the code also holds; None for other decisions."""
    sentence = avm.pending_sentence(decision)
    if sentence is None:
        return None
    rows = []
    for g in avm.skip_groups(decision):
        code = g["criteria"]
        more = " …" if g["count"] > len(g["names"]) else ""
        rows.append(html.Tr([
            html.Td(html.A(html.Code(code), href=f"{page}?task={decision.task}&criteria={code}",
                           title=f"only the candidates {code} removed, in the skipped table")),
            html.Td(f"{g['count']:,}", className="text-end"), html.Td(g["filter"]),
            html.Td(", ".join(g["names"]) + more, className="small"),
            html.Td(dcc.Link("pending tasks →", href=f"/pending?criteria={code}", className="small",
                             title=f"every pending task {code} removed candidates of")),
        ], **{"data-criteria": code}))  # fmt: skip
    what = "nuclei" if decision.label == "nucleus" else "queues"
    head = html.Tr([html.Th("criteria"), html.Th(what, className="text-end"), html.Th("filter"), html.Th("e.g."),
                    html.Th("")])  # fmt: skip
    return html.Div(
        [html.Div(sentence, className="fw-semibold mb-1", id="pending-step"),
         html.Div(f"Why each {what[:-1] if what == 'queues' else 'nucleus'} was removed, by criteria code:",
                  className="small text-muted"),
         html.Table([html.Thead(head), html.Tbody(rows)], className="table table-sm mb-0 skip-groups")],
        className="pending-answer alert alert-warning py-2 mb-2", id="pending-answer",
    )  # fmt: skip


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


def skipped_grid(
    decision: Decision,
    rows: list[dict[str, Any]],
    prefix: str,
    id_: dict[str, str] | None = None,
    url_param: str | None = None,
) -> Any:
    """Removed candidates with criteria, filter stage and the sentence, filterable by criteria (ID_: to click them;
    URL_PARAM: the table's filters and sort kept in the URL under that name)."""
    if not decision.skipped:
        return empty_state("Nothing was skipped", "Every candidate passed every filter.")
    cols = vm.skipped_column_defs(decision.label, prefix)
    return grid(rows, cols, id_=id_, height=320, export_name=f"skipped_{decision.task}.csv", page_size=100,
                row_id=decision.label, url_param=url_param)  # fmt: skip


def ranked_grid(
    decision: Decision, prefix: str, id_: dict[str, str] | None = None, url_param: str | None = None
) -> Any:
    """Ranked candidates with weight, factors and the numbers behind them (ID_: to click them)."""
    rows = vm.factor_rows(decision)
    if not rows:
        return empty_state(
            "No candidate left", "Every candidate was removed by a filter; the skipped table says which and why."
        )
    cols = vm.ranked_column_defs(rows, decision.label, prefix)
    return grid(rows, cols, id_=id_, height=min(80 + 28 * len(rows), 360), export_name=f"ranked_{decision.task}.csv",
                row_id=decision.label, url_param=url_param)  # fmt: skip


def job_decision_panel(why: str | None = None) -> html.Div:
    """The mounted skeleton of the job-brokerage view; callbacks only swap data into it (no remount).

    WHY refills the "why is this queue (not) in the list?" box from a shared link.
    """
    return html.Div(
        [
            html.Div(id=ids.QUEUES_HEADLINE, className="mb-2"),
            html.Div([html.Label("why is this queue (not) in the list?", htmlFor=ids.QUEUES_WHY, className="small text-muted me-2"),
                      dcc.Input(id=ids.QUEUES_WHY, type="text", debounce=True, value=why or None, placeholder="queue name, e.g. ANALY_CERN",
                                className="form-control form-control-sm d-inline-block why-input"),
                      html.Div(id=ids.QUEUES_WHY_ANSWER, className="small why-answer")], className="mb-2"),
            levers_panel(lids.QUEUES_LEVERS, "queue"),
            html.Div([dbc.Row([dbc.Col(figure({}, ids.QUEUES_FUNNEL), md=5), dbc.Col(figure({}, ids.QUEUES_FACTORS), md=7)]),
            card("Ranked candidates (best first)",
                 grid([], vm.ranked_column_defs([], "queue", "/queue?name="), id_=ids.QUEUES_RANKED, height=330, export_name="ranked.csv", row_id="queue", url_param="r",
                      no_rows="No candidate left: every queue was removed by a filter; the skipped queues below say which and why.")),
            html.Div(id=ids.QUEUES_NOTES),
            card(html.Span("Skipped queues", id=ids.QUEUES_SKIPPED_TITLE),
                 grid([], vm.skipped_column_defs("queue", "/queue?name="), id_=ids.QUEUES_SKIPPED, height=360, page_size=100, export_name="skipped.csv", row_id="queue", url_param="k",
                      no_rows="No queue skipped (for the chosen criteria): every candidate passed every filter.")),
                      ], id=ids.QUEUES_DECISION_BODY),
        ],
        id="job-decision-view",
    )  # fmt: skip


def job_decision_props(decision: Decision, criteria: list[str] | None) -> tuple[Any, ...]:
    """Values for the panel: headline, ranked rows + columns, notes, skipped rows, skipped title (the charts come
    from ``job_decision_figures`` in a callback of their own, so the answer is painted without waiting for plotly)."""
    rows = vm.skipped_rows(decision, criteria)
    filt = f" (criteria {', '.join(criteria)})" if criteria else ""
    ranked = vm.factor_rows(decision)
    head = headline(decision, "queues")
    if (answer := pending_answer(decision)) is not None:
        head.children.append(answer)
    head.children.append(html.Span(str(decision.task), id="decision-task", hidden=True))
    return (
        head,
        ranked,
        vm.ranked_column_defs(ranked, decision.label, "/queue?name="),
        notes(decision),
        rows,
        f"Skipped queues{filt}: {len(rows)}",
    )


def job_decision_figures(decision: Decision) -> tuple[dict[str, Any], dict[str, Any]]:
    """The panel's funnel and weight-factor charts.

    Usage: ``funnel, factors = job_decision_figures(decision)``
    """
    return vm.funnel_figure(decision), vm.factor_figure(decision)


def body_style(decision: Decision) -> dict[str, str]:
    """Style of the panel below the headline: hidden for a task a throttle held, whose empty tables would contradict each other."""
    return {"display": "none"} if pvm.throttle_sentence(decision) else {}
