"""Queue detail page (/queue?name=): attributes, job counts and Stabilizer rows of one queue."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from app.components.guard import guarded
from app.components.layout import card, empty_state, grid, loading, page_header
from app.main import state
from app.viewmodels import detail

dash.register_page(__name__, path="/queue", title="Queue · PanDA brokerage", name="Queue")


@guarded("Queue page")
def layout(name: str | None = None, **_: Any) -> html.Div:
    """One queue: its CRIC attributes, job counts per VO (when several VOs have jobs there) and per share, and (from a
    callback) the Stabilizer rows at it."""
    if not name:
        return html.Div(
            [
                empty_state("No queue given", "Open a queue from a table, or add ?name=<panda_queue> to the address."),
                dcc.Store(id=ids.QUEUE_NAME, data=None),  # the Stabilizer callback's input exists on every queue page
                html.Div(id=ids.QUEUE_STAB),
            ]
        )
    snap = state.snapshot()
    attrs = detail.queue_attributes(snap, name)
    counts = detail.queue_job_counts(snap, name)
    per_vo = detail.queue_vo_counts(snap, name)  # [] unless jobs of several VOs are here
    roll = detail.rollup(snap, name)
    return html.Div(
        [
            page_header(f"Queue {name}", f"site {dict(attrs).get('atlas_site', '')}"),
            dbc.Row(
                [
                    dbc.Col(card("Attributes", html.Table(html.Tbody([html.Tr([html.Th(k), html.Td(str(v))]) for k, v in attrs]),
                                                          className="table table-sm detail-table mb-0")), md=5),
                    dbc.Col([card("Totals at its site and cloud (click a level for its queues)",
                                  html.Table([html.Thead(html.Tr([html.Th(k) for k in roll[0] if k != "href"])),
                                              html.Tbody([html.Tr([html.Td(dcc.Link(r["level"], href=r["href"]))] + [html.Td(f"{r[k]:,}") for k in r if k not in ("level", "href")])
                                                          for r in roll])], className="table table-sm detail-table mb-0 rollup-table")) if roll else None,
                             card("Jobs per VO and status (each VO's brokerage counts its own)",
                                  grid(per_vo, height=60 + 42 * len(per_vo), id_=ids.QUEUE_VO_COUNTS)) if per_vo else None,
                             card("Jobs per share and status", grid(counts, height=200) if counts else empty_state("No jobs", "No job counts for this queue.")),
                             card("Analysis Stabilizer at this queue", loading(html.Div(id=ids.QUEUE_STAB))),  # filled by a callback
                             dcc.Link("Stabilizer page for this queue →", href=f"/stabilizer?queue={name}")], md=7),
                ],
                className="g-2",
            ),
            dcc.Store(id=ids.QUEUE_NAME, data=name),
        ]
    )  # fmt: skip
