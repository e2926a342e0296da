"""Auto-refresh of the views with time: the chosen interval goes into the URL and the interval; a tick reloads."""

from __future__ import annotations

from dash import Input, Output, clientside_callback

from app import ids

# The pick is kept in the URL (?refresh=5; none when off) so a refreshed or shared view refreshes too; the interval
# restarts from the pick.
clientside_callback(
    """
    function(minutes) {
        const m = Number(minutes) || 0;
        const params = new URLSearchParams(window.location.search);
        if (m > 0) { params.set("refresh", String(m)); } else { params.delete("refresh"); }
        const q = params.toString();
        window.history.replaceState(window.history.state, "", window.location.pathname + (q ? "?" + q : ""));
        return [Math.max(m, 1) * 60000, m === 0, 0];
    }
    """,
    Output(ids.REFRESH_TICK, "interval"),
    Output(ids.REFRESH_TICK, "disabled"),
    Output(ids.REFRESH_TICK, "n_intervals"),
    Input(ids.REFRESH_EVERY, "value"),
    prevent_initial_call=True,
)

# A tick rebuilds the view from the current grid (the server re-checks the database's newest version): a reload of
# the same URL, so the view's picks and table filters (kept in the URL) stay; a hidden tab waits until it is shown.
clientside_callback(
    """
    function(n) {
        if (!n) { return window.dash_clientside.no_update; }
        const reload = () => window.location.reload();
        if (document.visibilityState === "hidden") {
            document.addEventListener("visibilitychange", reload, {once: true});
        } else {
            reload();
        }
        return n;
    }
    """,
    Output(ids.REFRESH_SINK, "data"),
    Input(ids.REFRESH_TICK, "n_intervals"),
    prevent_initial_call=True,
)
