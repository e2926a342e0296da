"""Every callback's components exist in a page layout (the check Dash would do in the browser, done here once)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dash
from dash.development.base_component import Component


def _ids(tree: Any) -> Iterator[str]:
    """Every string id in a component tree."""
    if isinstance(tree, Component):
        cid = getattr(tree, "id", None)
        if isinstance(cid, str):
            yield cid
        for value in tree.to_plotly_json().get("props", {}).values():
            yield from _ids(value)
    elif isinstance(tree, list | tuple):
        for item in tree:
            yield from _ids(item)


def _callback_ids(app: Any) -> set[str]:
    """String component ids named by the callbacks' inputs, outputs and states (pattern-matching ids aside)."""
    out: set[str] = set()
    for cb in app.callback_map.values():
        for dep in [*cb.get("inputs", []), *cb.get("state", [])]:
            if not str(dep["id"]).startswith("{"):
                out.add(str(dep["id"]))
    for key in app.callback_map:
        for part in key.strip(".").split("..."):
            cid = part.split(".")[0]
            if cid and not cid.startswith("{"):
                out.add(cid)
    return out


def test_every_callback_component_is_in_a_layout(app_client: Any) -> None:
    """With callback validation moved out of the page, each id a callback names is in the shell or a page layout."""
    from app.main import app, serve_layout

    app_client.get("/")  # the first request registers the callbacks on the app
    layouts: list[Any] = [serve_layout()]
    for page in dash.page_registry.values():
        layout = page["layout"]
        layouts.append(layout() if callable(layout) else layout)
    present = set(_ids(layouts))
    named = _callback_ids(app)
    assert len(named) > 30  # the check sees the app's callbacks
    missing = sorted(named - present)
    assert missing == [], f"callback ids in no layout: {missing}"


def test_pages_do_not_ship_every_layout(app_client: Any) -> None:
    """A page's HTML carries its own shell only, not the validation layout of every page (it was 500 KB)."""
    html = app_client.get("/queues").data
    assert b"validation_layout" not in html
    assert len(html) < 60_000
