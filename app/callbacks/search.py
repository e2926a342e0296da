"""Navbar search callback: Enter in the search box opens the page of the task, queue, site, nucleus or user."""

from __future__ import annotations

from typing import Any

from dash import Input, Output, State, callback, no_update
from dash.exceptions import PreventUpdate

from app import ids
from app.main import services
from app.viewmodels import search as vm


@callback(
    Output(ids.NAV_SEARCH_GO, "href"),
    Output(ids.NAV_SEARCH, "invalid"),
    Output(ids.NAV_SEARCH_BOX, "title"),
    Input(ids.NAV_SEARCH, "n_submit"),
    State(ids.NAV_SEARCH, "value"),
    prevent_initial_call=True,
)
def on_search(_: int | None, text: str | None) -> tuple[Any, bool, str]:
    """The page for what the operator typed; the box turns red and says so when nothing has that name."""
    if not (text or "").strip():
        raise PreventUpdate
    hit = vm.resolve(services.state.snapshot(), text)
    if hit is None:
        return no_update, True, f"nothing in this snapshot is named {text.strip()!r}"
    return hit[0], False, f"opened {hit[1]}"
