"""Clientside URL state: controls write their values into the query string so every view is a permalink."""

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


# AG Grid filters as {column: text} under PARAM_f and sorts as "column:asc,..." under PARAM_s
_GRID_JS = """
function(filterModel, columnState) {
    const params = new URLSearchParams(window.location.search);
    const f = {};
    for (const [k, v] of Object.entries(filterModel || {})) {
        if (v && v.filter !== undefined && v.filter !== null && v.filter !== "") { f[k] = v.filter; }
    }
    if (Object.keys(f).length) { params.set(%(f)s, JSON.stringify(f)); } else { params.delete(%(f)s); }
    const s = (columnState || []).filter(c => c.sort).map(c => c.colId + ":" + c.sort).join(",");
    if (s) { params.set(%(s)s, s); } else if (columnState) { params.delete(%(s)s); }
    const q = params.toString();
    window.history.replaceState(window.history.state, "", window.location.pathname + (q ? "?" + q : ""));
    return q;
}
"""


def grid_url_sync(sink: str, grid: str, param: str) -> None:
    """Mirror GRID's column filters into ?PARAM_f= and its sort into ?PARAM_s= (read back by ``gridstate``)."""
    clientside_callback(
        _GRID_JS % {"f": json.dumps(param + "_f"), "s": json.dumps(param + "_s")},
        Output(sink, "data"),
        Input(grid, "filterModel"),
        Input(grid, "columnState"),
        prevent_initial_call=True,
    )
