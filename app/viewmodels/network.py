"""Network page: site x nucleus matrices of weight, queued files, throughput or closeness, and one link's numbers."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from app.viewmodels.common import empty_figure, num, plain, style
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.network import link_table, network_weights, over_sat_cap
from brokerage.model.snapshot import GridSnapshot

METRICS = {
    "weight": "network weight",
    "queued": "files queued (Production Output_queued)",
    "throughput": "throughput, MB/s (dashb_mbps)",
    "closeness": "closeness (AGIS_closeness)",
}


def metric_or_default(metric: Any) -> str:
    """A known metric name (weight when unknown)."""
    return metric if metric in METRICS else "weight"


def nuclei(snap: GridSnapshot) -> list[str]:
    """Nucleus site names."""
    s = snap.sites
    return sorted(s.loc[s["role"] == "nucleus", "site_name"]) if len(s) else []


def matrix(grid: GridCache, config: Config, metric: str) -> dict[str, Any]:
    """Rows = source sites, columns = nuclei: METRIC values (None when missing) plus blocked and missing masks."""
    snap = grid.snap
    metric = metric_or_default(metric)
    nuc = nuclei(snap)
    sites = np.array(sorted(snap.sites["site_name"]) if len(snap.sites) else [], dtype=object)
    z = np.full((len(sites), len(nuc)), np.nan)
    blocked = np.zeros(z.shape, dtype=bool)
    missing = np.zeros(z.shape, dtype=bool)
    over_cap = np.zeros(z.shape, dtype=bool)
    cap = float(config["NQUEUED_SAT_CAP"])
    for j, n in enumerate(nuc):
        nw = network_weights(grid, sites, n, config)
        links = link_table(grid, n)
        has_link = links.lookup(sites) >= 0
        col = {
            "weight": nw.weight,
            "queued": np.where(has_link, nw.nqueued, np.nan),
            "throughput": nw.mbps,
            "closeness": nw.closeness,
        }[metric]
        z[:, j] = col
        blocked[:, j] = nw.blocked
        same = sites == n
        missing[:, j] = (~has_link | np.isnan(col)) & ~same
        # job brokerage skips these links (-link_unusable) before any weight is used
        over_cap[:, j] = has_link & over_sat_cap(nw.nqueued, cap, same)
    return {"metric": metric, "sites": [str(s) for s in sites], "nuclei": nuc, "z": [[plain(v) for v in r] for r in z],
            "blocked": blocked.tolist(), "missing": missing.tolist(), "over_cap": over_cap.tolist(),
            "cap": cap}  # fmt: skip


def _cell_labels(m: dict[str, Any], over: np.ndarray) -> list[list[str]]:
    """Each cell's hover line: the value, or why the cell has none (a gap would read "NaN")."""
    out = []
    for i, site in enumerate(m["sites"]):
        row = []
        for j, nuc in enumerate(m["nuclei"]):
            v = m["z"][i][j]
            if site == nuc:
                row.append("the nucleus itself")
            elif m["blocked"][i][j]:
                row.append("BLOCKED (closeness -1): -link_unusable")
            elif over[i][j] and m["metric"] == "weight":
                row.append(f"over NQUEUED_SAT_CAP={m['cap']:g} files: skipped (-link_unusable)")
            elif v is None or (isinstance(v, float) and np.isnan(v)):
                row.append(f"no {m['metric']} data")
            else:
                row.append(f"{m['metric']}={v:.4g}")
        out.append(row)
    return out


def heatmap(m: dict[str, Any]) -> go.Figure:
    """Heatmap with blocked links marked by a red ✕ and missing metrics left grey with a dot."""
    if not m["sites"] or not m["nuclei"]:
        return empty_figure("no sites or no nuclei in the grid")
    z = np.array([[np.nan if v is None else v for v in r] for r in m["z"]], dtype=float)
    # blocked links carry closeness -1: left out of the colour scale so they cannot pass for "very close"
    z[np.array(m["blocked"], dtype=bool)] = np.nan
    over = np.array(m["over_cap"], dtype=bool)
    if m["metric"] == "weight":
        # 2 - n/cap goes negative past the cap, where the link is skipped anyway: keep the scale for usable links
        z[over] = np.nan
    scale = "Blues" if m["metric"] != "queued" else "YlOrRd"
    if m["metric"] == "closeness":
        scale = "Blues_r"
    # queued files: the scale ends at the cap, so moderate congestion is coloured instead of fading next to outliers
    bounds = {"zmin": 0, "zmax": float(m["cap"])} if m["metric"] == "queued" and m.get("cap") else {}
    fig = go.Figure(
        go.Heatmap(z=z, x=m["nuclei"], y=m["sites"], colorscale=scale, hoverongaps=True, xgap=1, ygap=1, **bounds,
                   colorbar={"title": {"text": m["metric"], "side": "right"}, "thickness": 12, "lenmode": "pixels", "len": 300, "y": 1, "yanchor": "top"},
                   text=_cell_labels(m, over), hovertemplate="%{y} → %{x}<br>%{text}<extra></extra>")
    )  # fmt: skip
    bx, by, mx, my, sx, sy, ox, oy = [], [], [], [], [], [], [], []
    for i, site in enumerate(m["sites"]):
        for j, nuc in enumerate(m["nuclei"]):
            if site == nuc:
                sx.append(nuc)
                sy.append(site)
            elif m["blocked"][i][j]:
                bx.append(nuc)
                by.append(site)
            elif over[i][j] and m["metric"] in ("weight", "queued"):
                ox.append(nuc)
                oy.append(site)
            elif m["missing"][i][j]:
                mx.append(nuc)
                my.append(site)
    if bx:
        fig.add_trace(go.Scatter(x=bx, y=by, mode="markers", name="blocked link (closeness -1)",
                                 marker={"symbol": "x-thin", "size": 10, "color": "#dc2626", "line": {"width": 2, "color": "#dc2626"}},
                                 hovertemplate="%{y} → %{x}: BLOCKED<extra></extra>"))  # fmt: skip
    if ox:
        fig.add_trace(go.Scatter(x=ox, y=oy, mode="markers", name=f"over NQUEUED_SAT_CAP={m['cap']:g} files (link skipped)",
                                 marker={"symbol": "triangle-up", "size": 8, "color": "#f59e0b", "line": {"width": 1, "color": "#92400e"}},
                                 hovertemplate="%{y} → %{x}: over NQUEUED_SAT_CAP, skipped (-link_unusable)<extra></extra>"))  # fmt: skip
    if mx:
        missing_label = "metrics missing (weight from fallbacks)" if m["metric"] == "weight" else "metric missing"
        fig.add_trace(go.Scatter(x=mx, y=my, mode="markers", name=missing_label,
                                 marker={"symbol": "circle-open", "size": 6, "color": "#6b7280"},
                                 hovertemplate="%{y} → %{x}: no " + m["metric"] + " data<extra></extra>"))  # fmt: skip
    if sx:
        fig.add_trace(go.Scatter(x=sx, y=sy, mode="markers", name="same site (nucleus itself)",
                                 marker={"symbol": "diamond", "size": 8, "color": "#111827"},
                                 hovertemplate="%{y} is the nucleus itself<extra></extra>"))  # fmt: skip
    # fixed ranges: the marker overlays would otherwise pad the category axes with empty bands
    n, k = len(m["sites"]), len(m["nuclei"])
    fig.update_yaxes(
        type="category", range=[n - 0.5, -0.5], tickmode="array", tickvals=m["sites"], tickfont={"size": 10}
    )
    fig.update_xaxes(type="category", side="top", range=[-0.5, k - 0.5], tickmode="array", tickvals=m["nuclei"])
    if n > 40:
        # a tall map: name the nuclei below it too, so a column can be read at the bottom
        fig.add_trace(go.Scatter(x=m["nuclei"], y=[m["sites"][-1]] * k, xaxis="x2", mode="markers",
                                 marker={"opacity": 0}, showlegend=False, hoverinfo="skip"))  # fmt: skip
        fig.update_layout(xaxis2={"type": "category", "side": "bottom", "overlaying": "x", "matches": "x",
                                  "tickmode": "array", "tickvals": m["nuclei"], "tickangle": -90, "showgrid": False})  # fmt: skip
    height = max(320, (18 if n < 60 else 13) * n + 140)
    legend: dict[str, Any] = {"orientation": "h", "y": -0.02, "yanchor": "top"}
    extra: dict[str, Any] = {}
    if n > 40:  # room below for the second row of nucleus names, and the legend under them
        height += 180
        extra["margin"] = {"l": 10, "r": 10, "t": 50, "b": 190}
        legend = {"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom"}
    return style(fig, height, plot_bgcolor="#e5e7eb", legend=legend, **extra)


def link_detail(grid: GridCache, config: Config, site: str, nucleus: str) -> dict[str, Any]:
    """Every number of one link and the rule that gave its throughput weight."""
    nw = network_weights(grid, np.array([site], dtype=object), nucleus, config)
    links = link_table(grid, nucleus)
    i = int(links.lookup(np.array([site], dtype=object))[0])
    return {
        "src": site,
        "nucleus": nucleus,
        "weight": plain(nw.weight[0]),
        "queued_weight": plain(nw.queued_weight[0]),
        "throughput_weight": plain(nw.throughput_weight[0]),
        "rule": str(nw.rule[0]),
        "blocked": bool(nw.blocked[0]),
        "closeness": plain(nw.closeness[0]),
        "nqueued": plain(nw.nqueued[0]),
        "mbps": plain(nw.mbps[0]),
        "mbps_source": str(links.mbps_source[i]) if i >= 0 else "",
        "has_link_data": i >= 0,
        "NW_QUEUE_IMPORTANCE": config["NW_QUEUE_IMPORTANCE"],
        "NQUEUED_SAT_CAP": config["NQUEUED_SAT_CAP"],
        "MAX_CLOSENESS": config["MAX_CLOSENESS"],
    }


def detail_rows(d: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) pairs for the link panel."""
    return [(k, num(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)) for k, v in d.items()]


def only_nucleus(m: dict[str, Any], nucleus: str | None) -> dict[str, Any]:
    """The matrix M restricted to one nucleus column (M itself when NUCLEUS is empty or unknown).

    Usage: ``heatmap(only_nucleus(matrix(cache, cfg, "queued"), "CERN-PROD"))``
    """
    if not nucleus or nucleus not in m["nuclei"]:
        return m
    j = m["nuclei"].index(nucleus)
    cut = {k: [[r[j]] for r in m[k]] for k in ("z", "blocked", "missing", "over_cap")}
    return {**m, **cut, "nuclei": [nucleus]}


def only_site(m: dict[str, Any], site: str | None) -> dict[str, Any]:
    """The matrix M restricted to one site's row (M itself when SITE is empty or unknown).

    Usage: ``heatmap(only_site(matrix(cache, cfg, "weight"), "AGLT2"))``
    """
    if not site or site not in m["sites"]:
        return m
    i = m["sites"].index(site)
    cut = {k: [m[k][i]] for k in ("z", "blocked", "missing", "over_cap")}
    return {**m, **cut, "sites": [site]}


CONGESTED_COLUMNS = [
    {"field": "link", "flex": 3, "minWidth": 150, "tooltipField": "link"},
    {"field": "queued", "type": "numericColumn", "minWidth": 95, "maxWidth": 100, "sort": "desc"},
    {"field": "pct_of_cap", "headerName": "% cap", "type": "numericColumn", "minWidth": 75, "maxWidth": 85},
    {"field": "skipped", "headerName": "skipped", "minWidth": 80, "maxWidth": 95, "tooltipField": "skipped_by"},
]


def congested_rows(queued: dict[str, Any], top: int = 100) -> list[dict[str, Any]]:
    """Links with the most files queued to their nucleus, most first, against NQUEUED_SAT_CAP (a "queued" matrix)."""
    cap = float(queued["cap"])
    rows = []
    for i, site in enumerate(queued["sites"]):
        for j, nuc in enumerate(queued["nuclei"]):
            v = queued["z"][i][j]
            if v is None or site == nuc or queued["blocked"][i][j]:
                continue
            rows.append({"link": f"{site} → {nuc}", "site": site, "nucleus": nuc, "queued": float(v),
                         "pct_of_cap": round(100 * float(v) / cap, 1) if cap else None,
                         "skipped": "yes" if queued["over_cap"][i][j] else "",
                         "skipped_by": "-link_unusable: over NQUEUED_SAT_CAP" if queued["over_cap"][i][j] else ""})  # fmt: skip
    rows.sort(key=lambda r: (-r["queued"], r["link"]))
    return rows[:top]


def link_sentence(d: dict[str, Any]) -> str:
    """One sentence saying what the link's numbers do to brokerage (a link_detail dict).

    Usage: ``link_sentence(link_detail(cache, cfg, "AGLT2", "CERN-PROD"))``
    """
    src, nuc, cap, nq = d["src"], d["nucleus"], float(d["NQUEUED_SAT_CAP"]), d["nqueued"]
    if src == nuc:
        return f"{src} is the nucleus itself: its queues get the full network weight for this nucleus's tasks."
    if d["blocked"]:
        return (f"closeness {num(d['closeness'])} marks the link {src} → {nuc} blocked: "
                f"queues at {src} are skipped by -link_unusable for tasks of {nuc}.")  # fmt: skip
    if nq is not None and bool(over_sat_cap(np.array([nq], dtype=float), cap, np.array([False]))[0]):
        return f"queued files {num(nq)} > NQUEUED_SAT_CAP {num(cap)}: the link is skipped by -link_unusable."
    queued = f"queued files {num(nq)} ≤ NQUEUED_SAT_CAP {num(cap)}" if nq is not None else "no queued-files figure"
    q = float(d.get("NW_QUEUE_IMPORTANCE", 0.5))
    how = f" (2 − {num(nq)}/{num(cap)})" if nq is not None else ""
    return (f"{queued}: network weight {num(d['weight'])} = {num(q)} × queued {num(d['queued_weight'])}{how} "
            f"+ {num(1 - q)} × throughput {num(d['throughput_weight'])} ({d['rule']}); "
            f"{num(q)} is NW_QUEUE_IMPORTANCE.")  # fmt: skip


def parse_link(value: Any) -> tuple[str, str] | None:
    """(site, nucleus) of a "SITE>NUCLEUS" URL value, or None."""
    site, sep, nuc = str(value or "").partition(">")
    return (site.strip(), nuc.strip()) if sep and site.strip() and nuc.strip() else None
