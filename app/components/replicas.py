"""Replicated simulations on the page: the verdict in words, paired intervals as error bars, attribution, sweeps."""

from __future__ import annotations

from typing import Any

from dash import html

from app.components.layout import card, figure, grid
from app.viewmodels import replicas as vm


def verdict(doc: dict[str, Any]) -> html.Div:
    """Which differences are real, in words (each with its 95 % interval), then the measures without one."""
    real, rest = vm.verdict_lines(doc)
    items = [html.Li(s) for s in real]
    return html.Div(
        [html.Div("Real differences (the 95 % interval excludes 0):" if real else "", className="fw-semibold small"),
         html.Ul(items, className="small mb-1") if items else None,
         html.Div(rest, className="small text-muted")],
        id="sim-verdict",
    )  # fmt: skip


def method_note(doc: dict[str, Any]) -> html.Div:
    """How the intervals are made (seeds, method) in one small line."""
    seeds = doc["seeds"]
    return html.Div(f"{doc['replicas']} replicas of {doc['hours']:g} h, seeds {seeds[0]} to {seeds[-1]} for every "
                    f"config; {doc['method']}.", className="small text-muted mb-2", id="sim-method")  # fmt: skip


def compare_view(doc: dict[str, Any], compact: bool = False) -> html.Div:
    """The replicated comparison: verdict, the intervals as error bars with the attribution next to them, and the
    table with every measure (COMPACT: no share chart and a shorter table, for the tuning page)."""
    attribution = vm.attribution_figure(doc)
    bars = figure(vm.interval_figure(doc), id_="sim-intervals")
    pair = html.Div([bars, figure(attribution, id_="sim-attribution")], className="sim-pair") if attribution else bars
    parts: list[Any] = [verdict(doc), method_note(doc)]
    title = "Paired differences with 95 % intervals" + (" and which key made them" if attribution else "")
    _rows, undrawn = vm.drawable(doc)
    note = html.Div(f"Not drawn (a stored mean of 0 has no % change; see the table): {', '.join(undrawn)}.",
                    className="small text-muted") if undrawn else None  # fmt: skip
    parts.append(card(title, [pair, note]))
    if not compact:
        parts.append(card("Global shares: running vs target", figure(vm.share_figure(doc))))
    parts.append(card("Every measure: means, paired difference, 95 % interval" + (", each key alone" if attribution
                                                                                    else ""),
                      grid(vm.interval_rows(doc), vm.interval_columns(doc), height=260 if compact else 420,
                           export_name="simulation_intervals.csv")))  # fmt: skip
    return html.Div(parts, id="sim-replicas-view")


def sweep_view(doc: dict[str, Any]) -> html.Div:
    """The sweep: per headline measure, its mean over the swept values as a line with a 95 % band and the stored
    config's mean dashed; filled markers where the difference from the stored config is real."""
    key = doc["keys"][0]
    charts = [figure(vm.sweep_figure(doc, m)) for m in vm.sweep_measures(doc)]
    note = (f"{key} = {', '.join(map(str, doc['values']))} against the stored config; a filled marker: a real "
            "difference from the stored config (its paired 95 % interval excludes 0).")  # fmt: skip
    return html.Div(
        [method_note(doc), html.Div(note, className="small mb-2"),
         card(f"Sweep of {key}: mean and 95 % interval per value", html.Div(charts, className="sim-grid"))],
        id="sim-sweep-view",
    )  # fmt: skip


def replicas_view(doc: dict[str, Any], compact: bool = False) -> html.Div:
    """A replicated simulation's result, comparison or sweep."""
    return sweep_view(doc) if doc.get("kind") == "sweep" else compare_view(doc, compact)
