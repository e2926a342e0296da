"""Network page callbacks: heatmap per metric and the clicked link's numbers."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from dash import Input, Output, State, callback, html

from app import ids
from app.callbacks.urlstate import url_sync
from app.components.guard import guarded
from app.components.layout import empty_state, error_alert
from app.main import services
from app.viewmodels import common
from app.viewmodels import network as vm


@callback(Output(ids.NETWORK_HEATMAP, "figure"), Input(ids.NETWORK_METRIC, "value"))
def update_heatmap(metric: str) -> go.Figure:
    """The site x nucleus matrix of the chosen metric."""
    try:
        return vm.heatmap(vm.matrix(services.state.grid_cache(), services.state.config(), vm.metric_or_default(metric)))
    except Exception as exc:  # a figure output cannot hold an alert: say it inside the figure
        return common.empty_figure(f"cannot build the heatmap: {type(exc).__name__}: {exc}")


@callback(
    Output(ids.NETWORK_DETAIL, "children"), Input(ids.NETWORK_HEATMAP, "clickData"), State(ids.NETWORK_METRIC, "value")
)
@guarded("Link detail")
def update_detail(click: dict[str, Any] | None, metric: str) -> Any:
    """Numbers of the clicked link and which weight rule applied."""
    if not click or not click.get("points"):
        return empty_state("No link picked", "Click a cell of the heatmap to see the link's numbers and weight rule.")
    p = click["points"][0]
    site, nucleus = str(p["y"]), str(p["x"])
    try:
        d = vm.link_detail(services.state.grid_cache(), services.state.config(), site, nucleus)
    except Exception as exc:
        return error_alert("Link detail", exc)
    rows = [html.Tr([html.Th(k), html.Td(v)]) for k, v in vm.detail_rows(d)]
    flag = (
        html.Div(
            "BLOCKED: queues at this site are skipped for tasks of this nucleus (-link_unusable)",
            className="text-danger small",
        )
        if d["blocked"]
        else None
    )
    return html.Div([html.Div(f"{site} → {nucleus}", className="fw-semibold", id="link-title"), flag,
                     html.Table(html.Tbody(rows), className="table table-sm detail-table mb-0", style={"maxWidth": "560px"})])  # fmt: skip


url_sync(ids.NETWORK_URL_SINK, {"metric": (ids.NETWORK_METRIC, "value")})
