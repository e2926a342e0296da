"""Queue detail page (/queue?name=): attributes, job counts and Stabilizer rows of one queue."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app.components.guard import guarded
from app.components.layout import card, empty_state, grid, page_header
from app.main import state
from app.viewmodels import detail
from app.viewmodels import stabilizer as svm

dash.register_page(__name__, path="/queue", title="Queue · PanDA brokerage", name="Queue")


# who is throttled here comes first; the queue-wide terms repeat on every row, so they go last
STAB_COLUMNS = ("produsername", "throttled", "nQ_user", "max_q_len", "max_q_len_rule", "nR_user", "percentage",
                "gshare", "nQ", "throttle_from", "nQ_max", "can_throttle")  # fmt: skip


@guarded("Queue page")
def layout(name: str | None = None, **_: Any) -> html.Div:
    """One queue: its CRIC attributes, job counts per share and the Stabilizer rows at it."""
    if not name:
        return empty_state("No queue given", "Open a queue from a table, or add ?name=<panda_queue> to the address.")
    snap = state.snapshot()
    attrs = detail.queue_attributes(snap, name)
    counts = detail.queue_job_counts(snap, name)
    stab = svm.rows(state.stabilizer_frame(), queue=name)
    return html.Div(
        [
            page_header(f"Queue {name}", f"site {dict(attrs).get('atlas_site', '')}"),
            dbc.Row(
                [
                    dbc.Col(card("Attributes", html.Table(html.Tbody([html.Tr([html.Th(k), html.Td(str(v))]) for k, v in attrs]),
                                                          className="table table-sm detail-table mb-0")), md=5),
                    dbc.Col([card("Jobs per share and status", grid(counts, height=200) if counts else empty_state("No jobs", "No job counts for this queue.")),
                             card("Analysis Stabilizer at this queue", grid(stab, [{"field": c} for c in STAB_COLUMNS], height=220) if stab else empty_state("No analysis users", "No user has analysis jobs here.")),
                             dcc.Link("Stabilizer page for this queue →", href=f"/stabilizer?queue={name}")], md=7),
                ],
                className="g-2",
            ),
        ]
    )  # fmt: skip
