"""Network page: site-to-nucleus heatmap of weight, queued files, throughput or closeness."""

from __future__ import annotations

from typing import Any

import dash
from dash import dcc, html

from app import ids
from app.components.guard import guarded
from app.components.layout import card, empty_state, loading, page_header, url_notice
from app.viewmodels import network as vm
from app.viewmodels.common import unusable_choice

dash.register_page(__name__, path="/network", title="Network · PanDA brokerage", name="Network")


@guarded("Network page")
def layout(metric: str | None = None, **_: Any) -> html.Div:
    """Metric switch, heatmap and the clicked link's panel; ?metric= preselects."""
    return html.Div(
        [
            page_header("Network", "Links from every site (rows) to every nucleus (columns). Red ✕ = blocked link; orange ▲ = over NQUEUED_SAT_CAP (job brokerage skips it); ○ = metric missing. Click a cell."),
            url_notice(unusable_choice("metric", metric, list(vm.METRICS), vm.metric_or_default(metric))),
            html.Div(
                [html.Div([html.Label("metric"), dcc.RadioItems(id=ids.NETWORK_METRIC, options=[{"label": f" {v}", "value": k} for k, v in vm.METRICS.items()],
                                                              value=vm.metric_or_default(metric), inline=True, inputClassName="me-1", labelClassName="me-3")])],
                className="controls",
            ),
            card("Heatmap", loading(dcc.Graph(id=ids.NETWORK_HEATMAP, config={"displaylogo": False}))),
            card("Link", html.Div(empty_state("No link picked", "Click a cell of the heatmap to see the link's numbers and weight rule."), id=ids.NETWORK_DETAIL)),
            dcc.Store(id=ids.NETWORK_URL_SINK),
        ]
    )  # fmt: skip
