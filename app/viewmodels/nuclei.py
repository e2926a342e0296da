"""Nuclei page: storage, remaining work and transfer backlog per nucleus, and the task-brokerage view."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from app.viewmodels.common import PALETTE, empty_figure, style
from brokerage.model.cache import GridCache
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config
from brokerage.model.network import link_table

FINAL_TASK_STATUSES = ("done", "finished", "failed", "broken", "aborted", "aborting", "finishing", "paused", "toabort")
GB_PER_TB = 1000.0


def nucleus_rows(grid: GridCache, config: Config) -> list[dict[str, Any]]:
    """One row per nucleus: state, bare-nucleus mode, disk storage in TB, active tasks and files queued in."""
    snap = grid.snap
    s = snap.sites
    if s.empty:
        return []
    ep = snap.ddm_endpoints
    disk = ep[~ep["is_tape"].astype(bool)] if len(ep) else ep
    t = snap.tasks
    active = t[~t["status"].isin(FINAL_TASK_STATUSES)] if len(t) else t
    threshold = float(config["DISK_THRESHOLD"])
    cap = float(config["NQUEUED_NUC_CAP"])
    rows = []
    for r in s[s["role"] == "nucleus"].sort_values("site_name").to_dict("records"):
        name = r["site_name"]
        mine = disk[disk["site_name"] == name] if len(disk) else disk
        total = float(mine["space_total"].sum()) / GB_PER_TB if len(mine) else 0.0
        free = float(mine["space_free"].sum()) / GB_PER_TB if len(mine) else 0.0
        expired = float(mine["space_expired"].sum()) / GB_PER_TB if len(mine) else 0.0
        queued = link_table(grid, name).total_queued
        rows.append(
            {
                "nucleus": name,
                "state": r.get("state", ""),
                "below_threshold": (free + expired) < threshold,
                "backlogged": queued > cap,
                "cloud": r.get("cloud", ""),
                "bare_nucleus": r.get("bare_nucleus") or "no",
                "endpoints": len(mine),
                "total_TB": round(total, 1),
                "free_TB": round(free, 1),
                "expired_TB": round(expired, 1),
                "usable_TB": round(free + expired, 1),
                "active_tasks": int((active["nucleus"] == name).sum()) if len(active) else 0,
                "files_queued_in": round(queued, 0),
            }
        )
    return rows


def storage_figure(rows: list[dict[str, Any]], threshold_tb: float) -> go.Figure:
    """Free + expired space per nucleus (what the space check compares) against the DISK_THRESHOLD line.

    A log axis, because storages span 100 TB to 20 PB and the threshold would otherwise sit flat on the axis;
    nuclei below the threshold are drawn red. Used and total space are in the hover and the table.
    """
    if not rows:
        return empty_figure("no nucleus in the grid")
    names = [r["nucleus"] for r in rows]
    short = [r["free_TB"] + r["expired_TB"] < threshold_tb for r in rows]
    hover = [f"total {r['total_TB']:g} TB · free {r['free_TB']:g} · expired {r['expired_TB']:g}" for r in rows]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(x=names, y=[max(r["free_TB"], 1e-3) for r in rows], name="free", customdata=hover,
               marker_color=[PALETTE[3] if s else PALETTE[1] for s in short],
               hovertemplate="%{x}: %{customdata}<extra></extra>")
    )  # fmt: skip
    fig.add_trace(
        go.Bar(x=names, y=[r["expired_TB"] for r in rows], name="expired (reclaimable)", customdata=hover,
               marker_color=PALETTE[2], hovertemplate="%{x}: %{customdata}<extra></extra>")
    )  # fmt: skip
    # a line trace, not add_hline: on a log axis an hline's annotation is placed in log units (y=100 -> 1e100)
    fig.add_trace(
        go.Scatter(x=names, y=[threshold_tb] * len(names), mode="lines", name=f"DISK_THRESHOLD {threshold_tb:g} TB",
                   line={"dash": "dash", "color": PALETTE[3], "width": 1.5}, hoverinfo="skip")
    )  # fmt: skip
    fig.update_layout(barmode="stack")
    fig.update_xaxes(type="category", automargin=True)
    fig.update_yaxes(title_text="free + expired, TB (log)", type="log")
    return style(
        fig,
        380,
        title={"text": "Space for output per nucleus (red: below the threshold)", "x": 0, "font": {"size": 13}},
        # the legend goes under the names: above the plot it ran into the title
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0},
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
    )


def probability_figure(decision: Decision) -> go.Figure:
    """Weight and selection probability of each kept nucleus (the nucleus is drawn at random by weight)."""
    c = decision.candidates
    if not c:
        return empty_figure("no nucleus survived the filters")
    names = [x.name for x in c]
    probs = [float(x.details.get("probability", 0.0) or 0.0) for x in c]
    if not any(probs):
        total = sum(x.weight for x in c) or 1.0
        probs = [x.weight / total for x in c]
    fig = go.Figure(go.Bar(x=names, y=probs, marker_color=PALETTE[0], text=[f"{p:.0%}" for p in probs], textposition="auto",
                           customdata=[x.weight for x in c], hovertemplate="%{x}: p=%{y:.1%}, weight=%{customdata:.4g}<extra></extra>"))  # fmt: skip
    chosen = decision.extra.get("nucleus") or decision.extra.get("chosen")
    if chosen in names:
        fig.add_annotation(x=chosen, y=probs[names.index(chosen)], text="drawn", showarrow=True, arrowhead=2)
    fig.update_xaxes(type="category", automargin=True)
    # a probability never exceeds 100 %: the axis stops there (room above the tallest bar for its label)
    fig.update_yaxes(tickformat=".0%", range=[0, min(1.0, max(probs) * 1.2)])
    return style(
        fig, 300, title={"text": "Selection probability (weight / sum of weights)", "x": 0, "font": {"size": 13}}
    )


def draw_sentence(decision: Decision) -> str | None:
    """Which nucleus the weighted draw picked and how likely it was; None when no nucleus was kept.

    Usage: ``draw_sentence(state.nucleus_decision(42))``
    """
    chosen = decision.extra.get("chosen")
    if not chosen or not decision.candidates:
        return None
    p = next((float(c.details.get("probability", 0.0) or 0.0) for c in decision.candidates if c.name == chosen), 0.0)
    top = decision.candidates[0].name
    tail = "" if chosen == top else f" (the highest weight is {top}'s)"
    return (f"Drawn nucleus: {chosen}, with probability {p:.0%}{tail}. The nucleus is a weighted random draw among "
            f"the {len(decision.candidates)} kept nuclei, not simply the top-ranked one.")  # fmt: skip
