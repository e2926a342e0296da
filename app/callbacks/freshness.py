"""Offer a reload when the database holds a newer grid version than the one the page shows."""

from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, html

from app.main import services
from app.viewmodels.freshness import newer_version_text

SHOWN_KEY = "grid-shown-key"  # dcc.Store: the snapshot key the page was built from
CHECK = "grid-freshness-check"  # dcc.Interval
NEWER = "grid-newer"  # where the offer appears

CHECK_EVERY_MS = 60_000


@callback(Output(NEWER, "children"), Input(CHECK, "n_intervals"), State(SHOWN_KEY, "data"))
def offer_reload(_n: int | None, shown_key: str | None) -> Any:
    """An alert with a reload link when the stored grid is not the one shown (nothing when the grid is a file)."""
    from brokerage.store import repository

    engine = services.state.engine()
    if engine is None:
        return None
    try:
        stored = repository.snapshot_meta(engine)
    except Exception:  # an unreachable database is not news: keep showing the loaded grid
        return None
    text = newer_version_text(shown_key, stored)
    if text is None:
        return None
    return dbc.Alert(
        [html.Span(text + " "), html.A("Reload", href="", id="grid-reload", className="alert-link")],
        color="info",
        className="py-1 small mb-2",
    )
