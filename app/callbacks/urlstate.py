"""Clientside URL state: controls write their values into the query string so every view is a permalink.

Table filters and sorts are carried by assets/gridUrlState.js (``grid(..., url_param=)``).
"""

from __future__ import annotations

import json

from dash import Input, Output, clientside_callback

# history.replaceState keeps the page as it is: Dash's page router is not re-run on every pick.
_JS = """
function() {
    const names = %s;
    const params = new URLSearchParams(window.location.search);
    for (let i = 0; i < names.length; i++) {
        const v = arguments[i];
        if (v === null || v === undefined || v === "" || (Array.isArray(v) && v.length === 0)) {
            params.delete(names[i]);
        } else {
            params.set(names[i], Array.isArray(v) ? v.join(",") : String(v));
        }
    }
    const q = params.toString();
    window.history.replaceState(window.history.state, "", window.location.pathname + (q ? "?" + q : ""));
    return q;
}
"""


def url_sync(sink: str, params: dict[str, tuple[str, str]]) -> None:
    """Mirror each (component id, property) in PARAMS into the query parameter named by its key."""
    clientside_callback(
        _JS % json.dumps(list(params)),
        Output(sink, "data"),
        [Input(cid, prop) for cid, prop in params.values()],
    )
