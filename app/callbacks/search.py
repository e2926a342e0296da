"""Navbar search callbacks: typing lists the matching names; Enter opens the one page meant, or asks to pick."""

from __future__ import annotations

from typing import Any

from dash import Input, Output, State, callback, ctx, dcc, html, no_update
from dash.exceptions import PreventUpdate

from app import ids
from app.main import services
from app.viewmodels import search as vm

SHOWN = 10  # matches listed under the box


def match_list(text: str | None) -> list[Any]:
    """Links to the pages of the names matching TEXT (those starting with it first), and how many more there are."""
    if len((text or "").strip()) < 2:
        return []
    found = vm.matches(services.state.snapshot(), text, limit=SHOWN + 1)
    if not found:
        return [html.Div(f"nothing is named like {text.strip()!r}", className="nav-search-more")]
    items: list[Any] = [dcc.Link(label, href=href, className="nav-search-hit") for href, label in found[:SHOWN]]
    if len(found) > SHOWN:
        items.append(html.Div("more match: type more of the name", className="nav-search-more"))
    return items


@callback(
    Output(ids.NAV_SEARCH_LIST, "children"),
    Input(ids.NAV_SEARCH, "value"),
    Input("url", "pathname"),
    prevent_initial_call=True,
)
def on_type(text: str | None, _path: str | None) -> list[Any]:
    """The names matching what is typed, those starting with it first; a new page closes the list."""
    return [] if ctx.triggered_id == "url" else match_list(text)


# Enter has a callback of its own: Dash drops a callback's answer when the same callback fires again, and the
# typed value arrives with the Enter
@callback(
    Output(ids.NAV_SEARCH_GO, "href"),
    Output(ids.NAV_SEARCH, "invalid"),
    Output(ids.NAV_SEARCH_BOX, "title"),
    Output(ids.NAV_SEARCH_LIST, "children", allow_duplicate=True),
    Input(ids.NAV_SEARCH, "n_submit"),
    State(ids.NAV_SEARCH, "value"),
    prevent_initial_call=True,
)
def on_search(_: int | None, text: str | None) -> tuple[Any, bool, str, Any]:
    """Enter opens the page of an exact name or of the only match, lists the matches when there are several (never
    silently the first), and turns the box red when nothing matches."""
    if not (text or "").strip():
        raise PreventUpdate
    hit = vm.resolve(services.state.snapshot(), text)
    if hit is not None:
        return hit[0], False, f"opened {hit[1]}", []
    listed = match_list(text)
    if vm.matches(services.state.snapshot(), text, limit=1):
        return no_update, False, "several names match: pick one below", listed
    return no_update, True, f"nothing in this snapshot is named {text.strip()!r}", listed
