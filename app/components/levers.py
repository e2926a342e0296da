"""The levers box: where a clicked queue or nucleus stands and the verified changes that would move it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dash_bootstrap_components as dbc
from dash import dcc, html

from app.viewmodels import levers as vm

HINT = "Click a {what} in the ranked or skipped table: its levers, each verified by brokering again, show here."


def levers_hint(what: str = "queue") -> html.Div:
    """The box before any click."""
    return html.Div(HINT.format(what=what), className="small text-muted levers-hint")


def levers_panel(id_: str, what: str = "queue") -> dbc.Offcanvas:
    """A side panel that slides in over the page's right edge when a candidate is clicked, wherever the table is
    scrolled; the page stays usable (no backdrop), so the next click updates it."""
    return dbc.Offcanvas(
        levers_hint(what), id=id_, title="Levers", placement="end", is_open=False, backdrop=False, scrollable=True,
        className="levers-panel",
    )  # fmt: skip


def levers_view(expl: Mapping[str, Any], edits: Mapping[str, Any] | None = None) -> html.Div:
    """Standing sentence, one line per lever (gdpconfig ones link to the tuning page with the edit), versions."""
    rows = vm.lever_rows(expl, edits)
    name = expl.get("queue") or expl.get("nucleus")
    items: list[Any] = []
    for r in rows:
        link = (
            dcc.Link("open in Tuning →", href=r["href"], className="ms-2 lever-link")
            if r["href"]
            else html.Span("(an input of the grid, not a gdpconfig edit)", className="ms-2 text-muted")
        )
        items.append(html.Li([html.Code(r["change"]), html.Span(f": {r['effect']}"), link]))
    body = html.Ul(items, className="mb-1 levers-list") if items else html.Div(
        "No single gdpconfig or input change found that would move it (e.g. a static filter such as the core count, "
        "or it is already first).", className="small text-muted")  # fmt: skip
    return html.Div(
        [
            html.Div(f"Levers for {name} · task {expl['task']}", className="fw-semibold"),
            html.Div(vm.standing(expl), className="small mb-1"),
            body,
            html.Div(vm.versions(expl), className="small text-muted"),
        ],
        className="levers-box",
        id="levers-of",
        **{"data-name": str(name)},
    )
