"""Composition root: builds the process's state and services, and THE one Dash app; exposes ``server`` for gunicorn."""

from __future__ import annotations

import os
from pathlib import Path

import dash
import dash_bootstrap_components as dbc
from dash import Dash, dcc, html
from flask_compress import Compress

from app.components.layout import navbar
from app.security import harden
from app.services import Services
from app.state import AppState
from app.viewmodels.freshness import age_text
from brokerage.model.versions import config_version, snapshot_version

ROOT = Path(__file__).resolve().parent.parent

# the one state and its services of this process; callbacks and routes reach them through this module
services = Services.build(AppState())
state = services.state

app = Dash(
    "app",
    use_pages=True,
    pages_folder=str(Path(__file__).parent / "pages"),
    assets_folder=str(ROOT / "assets"),
    # True: Dash would otherwise ship every page's layout with every page (500 KB) to check callback ids in the
    # browser; tests/app/test_callback_ids.py checks them against the page layouts instead
    suppress_callback_exceptions=True,
    title="PanDA brokerage",
    update_title=None,
    # no background callback manager: long work goes to the Dask cluster through services.jobs, polled by ordinary
    # callbacks (dcc.Interval), so nothing is ever forked from a threaded server
)
server = app.server
harden(server, app.csp_hashes)  # 413 above BROKERAGE_MAX_BODY, CSP / frame / nosniff headers, trusted proxies
Compress(server)  # gzip/brotli for HTML, JSON and callback responses (the tables and figures are repetitive JSON)
if os.environ.get("BROKERAGE_SECRET_KEY"):
    server.secret_key = os.environ["BROKERAGE_SECRET_KEY"]
state.answers.init_app(server)  # flask-caching: Redis with REDIS_URL, else a bounded cache per process


def serve_layout() -> html.Div:
    """The shell: navbar, a load problem if any, and the page container."""
    src = state.source()
    problem = (
        dbc.Alert(
            f"The grid could not be loaded: {src.problem}. Pages show empty states.",
            color="warning",
            className="py-2 small",
        )
        if src.problem
        else None
    )
    return html.Div(
        [
            dcc.Location(id="url", refresh="callback-nav"),
            navbar(
                # the versions first: the line is cut at narrow widths and a screenshot must name what it shows
                f"{snapshot_version(src.snap)} · gdpconfig {config_version(src.config)} · VO {src.config.vo} · {src.origin} · "
                f"{len(src.snap.queues)} queues · {len(src.snap.tasks)} tasks · {age_text(src.snap.taken_at)}"
            ),
            # a newer stored grid version is offered for reload (app/callbacks/freshness.py)
            dcc.Store(id="grid-shown-key", data=src.snap.key),
            dcc.Interval(id="grid-freshness-check", interval=60_000),
            dbc.Container([problem, html.Div(id="grid-newer"), dash.page_container], fluid=True, className="page"),
        ]
    )


app.layout = serve_layout

from app import callbacks as _callbacks  # noqa: E402,F401  registers every callback on this one app
from app.api import register as _register_api  # noqa: E402
from app.api_cache import register as _register_api_cache  # noqa: E402
from app.api_diff import register as _register_diff_api  # noqa: E402
from app.api_dirac import register as _register_dirac_api  # noqa: E402
from app.api_sim import register as _register_sim_api  # noqa: E402
from app.reports import register as _register_reports  # noqa: E402

_register_api_cache(server, state)  # after Compress: its hooks see the plain JSON before it is compressed
_register_api(server, services)
_register_reports(server, services.reports)
_register_dirac_api(server, services)
_register_diff_api(server, services)
_register_sim_api(server, services)
