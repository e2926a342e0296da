"""Task states as JEDI's state diagram: fixed positions, edges by transitions (logged past, simulated future), stuck tasks."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from app.viewmodels import state_layout as lay
from app.viewmodels.common import empty_figure, style
from brokerage.sim.task_states import FINAL_STATUSES

PAST, FUTURE = "#475569", "#ea580c"  # logged transitions, simulated ones
ARROW = 0.18  # length (x units) of the arrowhead's segment at the end of an edge


def _edge_traces(frame: pd.DataFrame, color: str, what: str, top: int, extra: dict[str, Any]) -> list[Any]:
    """One line per transition along its route (width by count, half transparent: where edges share a lane the
    bundle darkens), its count on hover at the middle of its longest segment."""
    traces = []
    for src, dst, n in frame[["source", "target", "n"]].itertuples(index=False):
        if str(src) == str(dst):
            continue
        pts = lay.route(str(src), str(dst), extra)
        mx, my = lay.midpoint(pts)
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        width = 1 + 5 * math.log1p(n) / math.log1p(top)
        label = f"{src} → {dst}: {n:,} {what}"
        traces.append(go.Scatter(x=xs, y=ys, mode="lines", line={"color": color, "width": width, "shape": "linear"},
                                 opacity=0.55, hoverinfo="skip", showlegend=False))  # fmt: skip
        traces.append(go.Scatter(x=[mx], y=[my], mode="markers", marker={"size": 8, "color": color, "opacity": 0},
                                 hovertext=[label], hoverinfo="text", showlegend=False))  # fmt: skip
    return traces


def _arrowheads(frame: pd.DataFrame, color: str, top: int, extra: dict[str, Any]) -> list[dict[str, Any]]:
    """An arrowhead at the end of each edge's last segment."""
    notes = []
    for src, dst, n in frame[["source", "target", "n"]].itertuples(index=False):
        if str(src) == str(dst):
            continue
        (xa, ya), (xb, yb) = lay.route(str(src), str(dst), extra)[-2:]
        length = math.hypot(xb - xa, yb - ya) or 1.0
        k = min(1.0, ARROW / length)
        notes.append({"x": xb, "y": yb, "ax": xb - (xb - xa) * k, "ay": yb - (yb - ya) * k, "xref": "x", "yref": "y",
                      "axref": "x", "ayref": "y", "text": "", "showarrow": True, "arrowhead": 2, "arrowsize": 0.9,
                      "arrowcolor": color, "arrowwidth": 1 + 3 * math.log1p(n) / math.log1p(top), "opacity": 0.9})  # fmt: skip
    return notes


def _groups() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The shaded boxes of the side states, the final statuses and the command band, with their captions."""
    shapes, notes = [], []
    for label, (x0, y0, x1, y1) in lay.GROUPS.items():
        shapes.append({"type": "rect", "x0": x0, "y0": y0, "x1": x1, "y1": y1, "xref": "x", "yref": "y",
                       "fillcolor": "#f1f5f9", "line": {"width": 0}, "layer": "below"})  # fmt: skip
        notes.append({"x": x0 + 0.05, "y": y1, "xref": "x", "yref": "y", "text": label, "showarrow": False,
                      "xanchor": "left", "yanchor": "bottom", "font": {"size": 10, "color": "#64748b"}})  # fmt: skip
    return shapes, notes


def diagram(
    past: pd.DataFrame, future: pd.DataFrame, counts: Mapping[str, int], title: str, hide_empty: bool = False
) -> go.Figure:
    """The main flow left to right, the side states (pending, throttled, paused, exhausted, tobroken, broken)
    grouped above it, final statuses in the last column, command and preparation statuses below; node size and
    label: tasks there now. Each transition runs along a shared lane (bundled, never across the figure), its width
    by how many happened: logged ones in slate, simulated ones in orange; its count shows on hover. A status with
    no task now and no transition is dimmed (HIDE_EMPTY: left out).

    Usage: ``diagram(transitions(log, taken_at, "24h"), future, status_counts(tasks), "last 24h")``
    """
    if past.empty and future.empty and not counts:
        return empty_figure("no task states to draw")
    extra: dict[str, Any] = {}
    top = max([1, *past.get("n", pd.Series(dtype=int)).tolist(), *future.get("n", pd.Series(dtype=int)).tolist()])
    shown = set(lay.POSITIONS) | {str(s) for f in (past, future) for c in ("source", "target") for s in f.get(c, [])}
    shown |= set(counts)
    names = list(lay.POSITIONS) + sorted(shown - set(lay.POSITIONS))  # the whole chart, then statuses it does not know
    moved = {str(s) for f in (past, future) for c in ("source", "target") for s in f.get(c, [])}
    empty = {s for s in names if not counts.get(s, 0) and s not in moved}
    if hide_empty:
        names = [s for s in names if s not in empty]
    xs, ys = zip(*(lay.position(s, extra) for s in names), strict=True)
    now = [int(counts.get(s, 0)) for s in names]
    final = [s in FINAL_STATUSES for s in names]
    dim = [s in empty for s in names]
    edges = [*_edge_traces(past, PAST, "logged", top, extra), *_edge_traces(future, FUTURE, "simulated", top, extra)]
    nodes = go.Scatter(
        x=xs, y=ys, mode="markers+text", text=[f"{s}<br><b>{n:,}</b>" for s, n in zip(names, now, strict=True)],
        textposition="middle center", textfont={"size": 10, "color": ["#9ca3af" if d else "#1f2937" for d in dim]},
        marker={"size": [30 + 12 * math.log1p(n) / math.log1p(max(1, *now)) for n in now],
                "color": ["#f8fafc" if d else "#e2e8f0" if f else "#dbeafe" for f, d in zip(final, dim, strict=True)],
                "line": {"color": ["#e5e7eb" if d else "#64748b" if f else "#2563eb" for f, d in zip(final, dim, strict=True)],
                         "width": 1.5}},
        hovertext=[f"{s} · {n:,} tasks now" for s, n in zip(names, now, strict=True)], hoverinfo="text",
        showlegend=False,
    )  # fmt: skip
    fig = go.Figure([*edges, nodes])
    for name, color in (("logged transitions", PAST), ("simulated transitions", FUTURE)):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line={"color": color, "width": 3}, name=name))
    shapes, captions = _groups()
    heads = [*_arrowheads(past, PAST, top, extra), *_arrowheads(future, FUTURE, top, extra)]
    fig.update_layout(annotations=captions + heads, shapes=shapes, legend={"orientation": "h", "y": -0.02, "x": 0},
                      hovermode="closest")  # fmt: skip
    right = max([lay.FINAL_X, 9.3, *(x for x, _ in extra.values())]) + 0.6
    fig.update_xaxes(visible=False, range=[-0.5, right])
    fig.update_yaxes(visible=False, range=[-2.9, 3.05])
    return style(fig, 500, title={"text": title, "x": 0, "font": {"size": 13}})


def future_transitions(task_changes: list[dict[str, Any]]) -> pd.DataFrame:
    """(source, target, n) counted from a simulation run's task_changes.

    Usage: ``future_transitions(result["task_changes"])``
    """
    if not task_changes:
        return pd.DataFrame(columns=["source", "target", "n"])
    d = pd.DataFrame(task_changes)
    d = d[d["from"] != d["to"]]
    out = d.groupby(["from", "to"]).size().reset_index(name="n").rename(columns={"from": "source", "to": "target"})
    return out.sort_values("n", ascending=False, ignore_index=True)


STATUS_REASONS = {
    "throttled": "throttled: JEDI generates no jobs until the throttle is released (many attempts: 120·n² min)",
    "exhausted": "exhausted: waits for an operator's retry or finish; finished automatically after 48 h",
    "paused": "paused: by an operator or the failure-rate pause; activated jobs are throttled",
    "assigning": "assigning: waits for TaskBroker to choose a nucleus (tried every 30 min)",
    "scouting": "scouting: its scout jobs have not all ended",
    "finishing": "finishing: waits for its running jobs to end",
    "defined": "defined: waits for the ContentsFeeder",
    "ready": "ready: waits for JobGenerator to make its next jobs, within the job throttler's limits of its work "
    "queue (THROTTLE_THRESHOLD, NQUEUELIMIT, NRUNNINGCAP)",
    "running": "running: its jobs are queued or running at the queues its brokerage chose; it ends when they have "
    "and no input is left to generate",
    "scouted": "scouted: its scouts ended; JobGenerator makes the rest of its jobs with the scouts' ramCount and "
    "cpuTime",
    "registered": "registered: waits for the TaskRefiner to define it",
    "pending": "pending: its brokerage finds a place now; WatchDog retries pending tasks after 60 min (production at "
    "priority >= 900: 30 min, >= 950: 10 min); exhausted after PENDING_TIMEOUT_<label> (7 d)",
}


PLACED_WAIT = ("ready", "running", "scouting", "scouted")  # statuses whose wait the job brokerage's places explain


def placed_sentence(status: str, top: Sequence[str], shown: int = 3) -> str:
    """What a task whose job brokerage found queues waits for, naming the best of them, e.g. "ready: waits for
    JobGenerator; its next jobs go to ANALY_A, ANALY_B (2 queues ranked)"."""
    names = ", ".join(top[:shown]) + (" …" if len(top) > shown else "")
    head = STATUS_REASONS.get(status, status).split(";")[0].split(" (")[0]
    if not top:
        return head
    wait = head.partition(": ")[2]
    return f"{status}: its next jobs go to {names} ({len(top)} queues ranked); {wait}"


def stuck_rows(
    tasks: pd.DataFrame, durations: pd.DataFrame, reasons: Mapping[int, str], limit: int = 500
) -> list[dict[str, Any]]:
    """Every task not in a final status with the hours since it entered its current status (the open stay counted),
    longest first, and the reason it is there: the brokerage's for a task it found no place for, else its status'.

    Usage: ``stuck_rows(snap.tasks, durations(log, taken_at), {1234: "All 700 queues skipped; ..."})``
    """
    cur = durations[durations["current"]].set_index("jeditaskid") if len(durations) else pd.DataFrame()
    live = tasks[~tasks["status"].isin(FINAL_STATUSES)]
    rows = []
    for t in live.itertuples(index=False):
        tid = int(t.jeditaskid)
        hours = float(cur.at[tid, "hours"]) if tid in cur.index else math.nan
        entered = cur.at[tid, "entered"] if tid in cur.index else None
        why = reasons.get(tid) or STATUS_REASONS.get(str(t.status), "")
        rows.append({
            "task": tid, "status": str(t.status), "hours_in_status": None if math.isnan(hours) else round(hours, 1),
            "since": entered.isoformat(timespec="minutes") if entered is not None else "",
            "reason": why, "label": str(t.prodsourcelabel), "gshare": str(t.gshare), "taskname": str(t.taskname),
        })  # fmt: skip
    rows.sort(key=lambda r: -(r["hours_in_status"] if r["hours_in_status"] is not None else -1))
    return rows[:limit]
