"""404 page: says the page does not exist and links back."""

from __future__ import annotations

import dash
from dash import dcc, html

from app.components.layout import empty_state

dash.register_page(__name__, path="/404", title="Not found · PanDA brokerage")


def layout(**_: object) -> html.Div:
    """Explain and link home."""
    return html.Div(
        [
            empty_state("No such page", "The address does not match a dashboard page."),
            dcc.Link("Back to the overview", href="/"),
        ]
    )
