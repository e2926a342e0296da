"""The navbar's JSON link: the /api/… answer of the page shown, kept in step with the address bar."""

from __future__ import annotations

from urllib.parse import parse_qsl

from dash import Input, Output, callback

from app import ids
from app.viewmodels.apilink import api_url


@callback(Output(ids.NAV_API, "href"), Output(ids.NAV_API, "style"), Input("url", "pathname"), Input("url", "search"))
def update_api_link(path: str | None, search: str | None) -> tuple[str, dict[str, str]]:
    """The JSON answer of PATH?SEARCH (hidden on a page without one)."""
    url = api_url(path or "/", dict(parse_qsl((search or "").lstrip("?"))))
    return (url, {}) if url else ("/api/overview", {"display": "none"})
