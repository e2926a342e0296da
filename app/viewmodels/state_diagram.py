"""Task states as JEDI's state diagram: fixed positions, edges by transitions (logged past, simulated future), stuck tasks."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from app.viewmodels.common import empty_figure, style
from brokerage.sim.task_states import FINAL_STATUSES

# Layered like seed 003's diagram: the main line left to right, holds above, the exhausted and broken paths below,
# the final statuses in the last column, command hand-over statuses on the bottom row.
POSITIONS: dict[str, tuple[float, float]] = {
    "registered": (0, 0), "defined": (1, 0), "assigning": (2, 1.3), "ready": (2, 0), "scouting": (3, 0),
    "scouted": (4, 0), "running": (5, 0), "prepared": (6.2, 0),
    "pending": (3, 1.3), "throttled": (5, 1.3), "paused": (4, 2.4),
    "tobroken": (3, -1.3), "exhausted": (5, -1.3), "finishing": (6.2, -1.3), "passed": (7.2, -1.3),
    "done": (8.4, 1.2), "finished": (8.4, 0.4), "failed": (8.4, -0.4), "broken": (8.4, -1.2), "aborted": (8.4, -2.0),
    "staging": (1, 1.3), "staged": (1.5, 2.2), "topreprocess": (0, 1.3), "preprocessing": (0, 2.4),
    "toretry": (0.8, -2.6), "toincexec": (1.9, -2.6), "rerefine": (3.0, -2.6), "aborting": (6.2, -2.6),
    "toabort": (7.2, -2.6), "toreassign": (4.1, -2.6), "reassigning": (5.2, -2.6),
}  # fmt: skip
PAST, FUTURE = "#475569", "#ea580c"  # logged transitions, simulated ones


def _position(status: str, extra: dict[str, tuple[float, float]]) -> tuple[float, float]:
    if status in POSITIONS:
        return POSITIONS[status]
    if status not in extra:
        extra[status] = (9.6, 2.0 - 0.8 * len(extra))  # a status the diagram does not know: its own column
    return extra[status]


def diagram(
    past: pd.DataFrame, future: pd.DataFrame, counts: Mapping[str, int], title: str, hide_empty: bool = False
) -> go.Figure:
    """Nodes at fixed places (size and label: tasks there now), an arrow per transition, its width by how many
    happened: logged ones in slate, simulated ones in orange, bent the other way so both show. A status with no
    task now and no transition is dimmed (HIDE_EMPTY: left out); each arrow's count shows on hover.

    Usage: ``diagram(transitions(log, taken_at, "24h"), future, status_counts(tasks), "last 24h")``
    """
    if past.empty and future.empty and not counts:
        return empty_figure("no task states to draw")
    extra: dict[str, tuple[float, float]] = {}
    top = max([1, *past.get("n", pd.Series(dtype=int)).tolist(), *future.get("n", pd.Series(dtype=int)).tolist()])
    notes: list[dict[str, Any]] = []
    for frame, color, bend, what in ((past, PAST, 0.0, "logged"), (future, FUTURE, 0.18, "simulated")):
        for src, dst, n in frame[["source", "target", "n"]].itertuples(index=False):
            (x0, y0), (x1, y1) = _position(str(src), extra), _position(str(dst), extra)
            if (x0, y0) == (x1, y1):
                continue
            # shorten the arrow so it stops at the node's rim, and bend simulated ones off the logged line
            dx, dy = x1 - x0, y1 - y0
            length = math.hypot(dx, dy)
            ox, oy = -dy / length * bend, dx / length * bend
            if abs(dy) < 1e-9 and abs(dx) > 1.5:  # a long edge along a row would cross the nodes between: lift it
                oy += 0.32 if dx > 0 else -0.32
            notes.append({
                "x": x1 - dx * 0.12 / length * 2 + ox, "y": y1 - dy * 0.12 / length * 2 + oy,
                "ax": x0 + dx * 0.12 / length * 2 + ox, "ay": y0 + dy * 0.12 / length * 2 + oy,
                "xref": "x", "yref": "y", "axref": "x", "ayref": "y", "text": "", "showarrow": True,
                "arrowhead": 2, "arrowsize": 0.8, "arrowcolor": color,
                "arrowwidth": 1 + 6 * math.log1p(n) / math.log1p(top),
                "hovertext": f"{src} → {dst}: {n:,} {what}", "opacity": 0.85,
            })  # fmt: skip
    shown = set(POSITIONS) | {str(s) for s in (*past.get("source", []), *past.get("target", []))} | {
        str(s) for s in (*future.get("source", []), *future.get("target", []))} | set(counts)  # fmt: skip
    names = list(POSITIONS) + sorted(shown - set(POSITIONS))  # the whole chart, then statuses it does not know
    moved = {str(s) for f in (past, future) for c in ("source", "target") for s in f.get(c, [])}
    empty = {s for s in names if not counts.get(s, 0) and s not in moved}
    if hide_empty:
        names = [s for s in names if s not in empty]
    xs, ys = zip(*(_position(s, extra) for s in names), strict=True)
    now = [int(counts.get(s, 0)) for s in names]
    final = [s in FINAL_STATUSES for s in names]
    dim = [s in empty for s in names]
    fig = go.Figure(
        go.Scatter(
            x=xs, y=ys, mode="markers+text", text=[f"{s}<br><b>{n:,}</b>" for s, n in zip(names, now, strict=True)],
            textposition="middle center", textfont={"size": 10, "color": ["#9ca3af" if d else "#1f2937" for d in dim]},
            marker={"size": [26 + 14 * math.log1p(n) / math.log1p(max(1, *now)) for n in now],
                    "color": ["#f8fafc" if d else "#e2e8f0" if f else "#dbeafe" for f, d in zip(final, dim, strict=True)],
                    "line": {"color": ["#e5e7eb" if d else "#64748b" if f else "#2563eb" for f, d in zip(final, dim, strict=True)],
                             "width": 1.5}},
            hovertext=[f"{s} · {n:,} tasks now" for s, n in zip(names, now, strict=True)], hoverinfo="text",
            showlegend=False,
        )
    )  # fmt: skip
    for name, color in (("logged transitions", PAST), ("simulated transitions", FUTURE)):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line={"color": color, "width": 3}, name=name))
    fig.update_layout(annotations=notes, legend={"orientation": "h", "y": -0.02, "x": 0})
    fig.update_xaxes(visible=False, range=[-0.6, 10.2 if extra else 9.1])
    fig.update_yaxes(visible=False, range=[-3.1, 2.9])
    return style(fig, 470, title={"text": title, "x": 0, "font": {"size": 13}})


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
