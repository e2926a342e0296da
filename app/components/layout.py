"""Shared component trees: navbar, page header, inline errors, empty states, AG Grid and figure wrappers."""

from __future__ import annotations

from typing import Any

import dash_ag_grid as dag
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from brokerage.model.errors import (
    BrokerageError,
    ConfigError,
    InputError,
    SimulationError,
    StoreError,
    status_of,
)

NAV = [
    ("Overview", "/"),
    ("Queues", "/queues"),
    ("Nuclei", "/nuclei"),
    ("Network", "/network"),
    ("Stabilizer", "/stabilizer"),
    ("Task states", "/tasks"),
    ("DIRAC", "/dirac"),
    ("Tuning", "/tuning"),
    ("Simulate", "/simulate"),
    ("Diff", "/diff"),
]


def navbar(origin: str) -> dbc.Navbar:
    """Top bar with the page links and where the data comes from; the data's age never gives way (at narrow widths
    the rest of the origin line does, its full text in the tooltip), and a link to the page's JSON answer."""
    rest, sep, age = origin.rpartition(" · snapshot taken ")
    when, _, ago = age.partition(" (")
    age_parts: list[Any] = (
        [html.Span("snapshot taken ", className="age-label"), html.Span(when + " ", className="age-date"), f"({ago}"]
        if sep else []
    )  # fmt: skip
    rest = rest if sep else origin
    links = [dbc.NavItem(dbc.NavLink(label, href=href, active="exact")) for label, href in NAV]
    return dbc.Navbar(
        dbc.Container(
            [
                dbc.NavbarBrand("PanDA brokerage", href="/", className="fw-semibold"),
                dbc.Nav(links, navbar=True, className="me-2"),
                html.Div(
                    [
                        dbc.Input(
                            id=ids.NAV_SEARCH,
                            type="search",
                            size="sm",
                            className="nav-search",
                            placeholder="task, queue, site, user…",
                            autoComplete="off",
                        ),
                        html.Div(id=ids.NAV_SEARCH_LIST, className="nav-search-list"),
                    ],
                    id=ids.NAV_SEARCH_BOX,
                    className="me-2 nav-search-box",
                    title="a task id or name, queue, site, nucleus or user; Enter opens its page",
                ),
                dcc.Location(id=ids.NAV_SEARCH_GO, refresh="callback-nav"),
                html.Span(
                    [html.Span(rest, className="origin-rest"), html.Span(age_parts, className="origin-age ms-1")],
                    className="navbar-text small text-light opacity-75",
                    id="data-origin",
                    title=origin,
                ),
                html.A(
                    "JSON",
                    id=ids.NAV_API,
                    href="/api/overview",
                    className="nav-api small ms-2",
                    title="this view's data as JSON (/api/…)",
                ),
            ],
            fluid=True,
        ),
        color="dark",
        dark=True,
        className="py-1 mb-2",
    )


def page_header(title: str, subtitle: str = "", aside: Any = None) -> html.Div:
    """Page title with a one-line explanation; ASIDE (e.g. the auto-refresh control) sits at its right."""
    head = html.Div([html.H4(title, className="mb-0"), html.Div(subtitle, className="text-muted small")])
    if aside is None:
        return html.Div(head, className="mb-2")
    return html.Div([head, aside], className="mb-2 d-flex justify-content-between align-items-start gap-3")


# how a page says each error of the core's tree (brokerage/model/errors.py), nearest class first: what the person
# gave or asked for is a warning they can act on; a database that cannot answer is an error of the deployment
ALERT_COLORS: dict[type[BaseException], str] = {
    InputError: "warning",  # an unknown task or queue, a malformed request
    ConfigError: "warning",  # a refused gdpconfig edit, with the allowed range
    SimulationError: "warning",
    StoreError: "danger",
    BrokerageError: "warning",
}


def error_alert(where: str, exc: BaseException) -> dbc.Alert:
    """An inline error naming what failed and the message, never a traceback.

    An error of the core's tree is said plainly in its own sentence, coloured by its class (ALERT_COLORS); anything
    else is a failure, said with the exception's name.
    """
    if isinstance(exc, BrokerageError):
        color = status_of(exc, ALERT_COLORS, "warning")
        return dbc.Alert([html.Strong(f"{where}: "), html.Span(exc.line())], color=color, className="py-2 small")
    text = str(exc)
    return dbc.Alert(
        [html.Strong(f"{where} failed: "), html.Span(f"{type(exc).__name__}: {text}")],
        color="danger",
        className="py-2 small",
    )


def failure_alert(where: str, error: str) -> dbc.Alert:
    """An inline error for a job that failed, with the error text the job recorded ("Type: message")."""
    return dbc.Alert([html.Strong(f"{where} failed: "), html.Span(error or "no reason was recorded")],
                     color="danger", className="py-2 small")  # fmt: skip


def url_notice(problem: str | None) -> dbc.Alert | None:
    """A warning that a permalink's parameter was not usable (None when it was)."""
    return dbc.Alert(problem, color="warning", className="py-1 small mb-2 url-notice") if problem else None


def empty_state(title: str, explanation: str) -> html.Div:
    """A placeholder that says why there is nothing and what to do."""
    return html.Div(
        [html.Div(title, className="fw-semibold"), html.Div(explanation, className="small")], className="empty-state"
    )


def card(title: Any, body: Any, footer: Any = None) -> dbc.Card:
    """A dense card with a small header."""
    parts = [dbc.CardHeader(title, className="py-1 small fw-semibold"), dbc.CardBody(body, className="p-2")]
    if footer is not None:
        parts.append(dbc.CardFooter(footer, className="py-1 small"))
    return dbc.Card(parts, className="mb-2 shadow-sm")


def kpi(label: str, value: Any, href: str | None = None) -> dbc.Col:
    """A big number with a label; links into a page when HREF is given."""
    inner = html.Div(
        [html.Div(str(value), className="kpi-value"), html.Div(label, className="kpi-label")], className="kpi"
    )
    return dbc.Col(dcc.Link(inner, href=href) if href else inner, xs=6, md=2)


def figure(fig: Any, id_: str | None = None, **kw: Any) -> dcc.Graph:
    """A plotly figure without the mode bar clutter."""
    extra = {"id": id_} if id_ else {}
    return dcc.Graph(figure=fig, config={"displaylogo": False, "displayModeBar": False}, **extra, **kw)


def grid(
    rows: list[dict[str, Any]],
    columns: list[dict[str, Any]] | None = None,
    id_: str | dict[str, str] | None = None,
    height: int = 360,
    page_size: int = 50,
    export_name: str | None = None,
    row_id: str | None = None,
    fit: bool = True,
    no_rows: str | None = None,
    url_param: str | None = None,
) -> dag.AgGrid:
    """An AG Grid with sorting, filtering, resizing and pagination; columns inferred from the rows if not given.

    NO_ROWS is the sentence shown when the grid is empty (say why, not just "No Rows To Show"). With URL_PARAM
    ("p"), the grid's filters and sort live in the address bar as ?p_f= and ?p_s= (assets/gridUrlState.js).
    """
    if columns is None:
        columns = [{"field": k} for k in (rows[0].keys() if rows else [])]
    # keep PanDA's own column names: AG Grid would otherwise split and capitalise them
    columns = [{"headerName": c["field"], **c} if "field" in c else c for c in columns]
    kw: dict[str, Any] = {}
    classes = "ag-theme-alpine compact-grid"
    if url_param:
        classes += f" url-state-{url_param}"
        id_ = id_ or f"{url_param}-url-grid"
    if id_:
        kw["id"] = id_
    if row_id:
        kw["getRowId"] = f"params.data.{row_id}"
    options: dict[str, Any] = {
        "pagination": len(rows) > page_size,
        "paginationPageSize": page_size,
        "animateRows": False,
    }
    if no_rows:
        options["noRowsOverlayComponent"] = "EmptyMessage"
        options["noRowsOverlayComponentParams"] = {"message": no_rows}
    return dag.AgGrid(
        rowData=rows,
        columnDefs=columns,
        defaultColDef={"sortable": True, "filter": True, "resizable": True, "floatingFilter": True, "minWidth": 95},
        dashGridOptions=options,
        csvExportParams={"fileName": export_name or "table.csv"},
        columnSize="responsiveSizeToFit" if fit else "autoSize",
        className=classes,
        style={"height": f"{height}px", "width": "100%"},
        **kw,
    )


def link_col(field: str, prefix: str, header: str | None = None, **kw: Any) -> dict[str, Any]:
    """A column whose cells link to PREFIX + value (a detail page)."""
    return {
        "field": field,
        "headerName": header or field,
        "cellRenderer": "Link",
        "cellRendererParams": {"prefix": prefix},
        **kw,
    }


def loading(child: Any, id_: str | None = None) -> dcc.Loading:
    """A spinner over slow parts."""
    return dcc.Loading(child, type="dot", delay_show=200, **({"id": id_} if id_ else {}))
