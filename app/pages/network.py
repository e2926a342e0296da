"""Network page: site-to-nucleus heatmap of weight, queued files, throughput or closeness."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from app.components.guard import guarded
from app.components.layout import card, empty_state, grid, loading, page_header, url_notice
from app.main import state
from app.viewmodels import network as vm
from app.viewmodels.common import unusable_choice

dash.register_page(__name__, path="/network", title="Network · PanDA brokerage", name="Network")


@guarded("Network page")
def layout(
    metric: str | None = None, nucleus: str | None = None, link: str | None = None, site: str | None = None, **_: Any
) -> html.Div:
    """Metric and nucleus switches, the heatmap, and beside it (in view) the clicked link and the most congested links."""
    nuc = vm.nuclei(state.snapshot())
    sites = sorted(state.snapshot().sites["site_name"].astype(str))
    bad_nucleus = f"No nucleus is named {nucleus!r}; showing every nucleus." if nucleus and nucleus not in nuc else None
    return html.Div(
        [
            page_header("Network", "Links from every site (rows) to every nucleus (columns). Red ✕ = blocked link; orange ▲ = over NQUEUED_SAT_CAP (job brokerage skips it); ○ = metric missing. Click a cell or a congested link."),
            url_notice(unusable_choice("metric", metric, list(vm.METRICS), vm.metric_or_default(metric)) or bad_nucleus),
            html.Div(
                [html.Div([html.Label("metric"), dcc.RadioItems(id=ids.NETWORK_METRIC, options=[{"label": f" {v}", "value": k} for k, v in vm.METRICS.items()],
                                                              value=vm.metric_or_default(metric), inline=True, inputClassName="me-1", labelClassName="me-3")]),
                 html.Div([html.Label("nucleus", htmlFor=ids.NETWORK_NUCLEUS),
                           dcc.Dropdown(id=ids.NETWORK_NUCLEUS, options=nuc, value=nucleus if nucleus in nuc else None, placeholder="every nucleus")]),
                 html.Div([html.Label("site", htmlFor=ids.NETWORK_SITE),
                           dcc.Dropdown(id=ids.NETWORK_SITE, options=sites, value=site if site in sites else None, placeholder="every site (type to find one)")])],
                className="controls",
            ),
            dbc.Row([
                dbc.Col(card("Heatmap", loading(dcc.Graph(id=ids.NETWORK_HEATMAP, config={"displaylogo": False}))), lg=7),
                dbc.Col(html.Div([
                    card("Link", html.Div(empty_state("No link picked", "Click a cell of the heatmap or a row below to see what the link does to brokerage."), id=ids.NETWORK_DETAIL)),
                    card("Most congested links (files queued to the nucleus)", grid([], vm.CONGESTED_COLUMNS, id_=ids.NETWORK_CONGESTED, height=320, row_id="link", export_name="congested_links.csv", url_param="l",
                                                                                              no_rows="No link reports files queued to a nucleus.")),
                ], className="sticky-side"), lg=5),
            ], className="g-2"),
            dcc.Store(id=ids.NETWORK_LINK, data=link or None),
            dcc.Store(id=ids.NETWORK_URL_SINK),
        ]
    )  # fmt: skip
