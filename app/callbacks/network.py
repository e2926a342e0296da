"""Network page callbacks: heatmap per metric and nucleus, the picked link in a sentence, the most congested links."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from dash import Input, Output, callback, html
from dash.exceptions import PreventUpdate

from app import ids
from app.callbacks.urlstate import url_sync
from app.components.guard import guarded
from app.components.layout import empty_state, error_alert
from app.main import services
from app.viewmodels import common
from app.viewmodels import network as vm

NO_LINK = (
    "No link picked",
    "Click a cell of the heatmap or a row of the congested links to see what the link does to brokerage.",
)


@callback(
    Output(ids.NETWORK_HEATMAP, "figure"),
    Input(ids.NETWORK_METRIC, "value"),
    Input(ids.NETWORK_NUCLEUS, "value"),
    Input(ids.NETWORK_SITE, "value"),
)
def update_heatmap(metric: str, nucleus: str | None = None, site: str | None = None) -> go.Figure:
    """The site x nucleus matrix of the chosen metric (one column when a nucleus is chosen, one row for a site)."""
    try:
        m = vm.matrix(services.state.grid_cache(), services.state.config(), vm.metric_or_default(metric))
        return vm.heatmap(vm.only_site(vm.only_nucleus(m, nucleus), site))
    except Exception as exc:  # a figure output cannot hold an alert: say it inside the figure
        return common.empty_figure(f"cannot build the heatmap: {type(exc).__name__}: {exc}")


@callback(
    Output(ids.NETWORK_CONGESTED, "rowData"), Input(ids.NETWORK_NUCLEUS, "value"), Input(ids.NETWORK_SITE, "value")
)
def update_congested(nucleus: str | None, site: str | None = None) -> list[dict[str, Any]]:
    """Links with the most files queued to their nucleus, with their share of NQUEUED_SAT_CAP (a site's only)."""
    queued = vm.matrix(services.state.grid_cache(), services.state.config(), "queued")
    return vm.congested_rows(vm.only_site(vm.only_nucleus(queued, nucleus), site))


@callback(
    Output(ids.NETWORK_LINK, "data"),
    Input(ids.NETWORK_HEATMAP, "clickData"),
    Input(ids.NETWORK_CONGESTED, "cellClicked"),
    prevent_initial_call=True,
)
def on_pick_link(click: dict[str, Any] | None, cell: dict[str, Any] | None) -> str:
    """The link the operator clicked last (a heatmap cell or a congested link's row), as "SITE>NUCLEUS"."""
    from dash import ctx

    if ctx.triggered_id == ids.NETWORK_HEATMAP and click and click.get("points"):
        p = click["points"][0]
        return f"{p['y']}>{p['x']}"
    if cell and cell.get("rowId"):
        site, _, nuc = str(cell["rowId"]).partition(" → ")
        return f"{site}>{nuc}"
    raise PreventUpdate


@callback(Output(ids.NETWORK_DETAIL, "children"), Input(ids.NETWORK_LINK, "data"))
@guarded("Link detail")
def update_link_detail(link: str | None) -> Any:
    """The picked link: a sentence saying what its numbers do to brokerage, then every number."""
    picked = vm.parse_link(link)
    if picked is None:
        return empty_state(*NO_LINK)
    site, nucleus = picked
    try:
        d = vm.link_detail(services.state.grid_cache(), services.state.config(), site, nucleus)
    except Exception as exc:
        return error_alert("Link detail", exc)
    rows = [html.Tr([html.Th(k), html.Td(v)]) for k, v in vm.detail_rows(d)]
    flag = (
        html.Div("BLOCKED: queues at this site are skipped for tasks of this nucleus (-link_unusable)", className="text-danger small")
        if d["blocked"]
        else None
    )  # fmt: skip
    return html.Div([html.Div(f"{site} → {nucleus}", className="fw-semibold", id="link-title"), flag,
                     html.Div(vm.link_sentence(d), className="link-sentence mb-1", id="link-sentence"),
                     html.Details([html.Summary("every number of the link"),
                                   html.Table(html.Tbody(rows), className="table table-sm detail-table mb-0")])])  # fmt: skip


def update_detail(click: dict[str, Any] | None, metric: str) -> Any:
    """The link panel of a heatmap click (CLICK as plotly's clickData); METRIC does not change it."""
    if not click or not click.get("points"):
        return empty_state(*NO_LINK)
    p = click["points"][0]
    return update_link_detail(f"{p['y']}>{p['x']}")


url_sync(ids.NETWORK_URL_SINK, {"metric": (ids.NETWORK_METRIC, "value"), "nucleus": (ids.NETWORK_NUCLEUS, "value"),
                                "site": (ids.NETWORK_SITE, "value"),
                                "link": (ids.NETWORK_LINK, "data")})  # fmt: skip
