"""Overview page: grid composition counts and the most common skip criteria across waiting tasks."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from app.viewmodels.common import PALETTE, bar, empty_figure, style
from brokerage.brokers.batch import GridRun
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.waiting import WAITING_TASK_STATUSES


def counts(snap: GridSnapshot) -> dict[str, Any]:
    """Headline numbers and breakdowns of the grid."""
    q, s, t, j = snap.queues, snap.sites, snap.tasks, snap.job_counts
    by_status_type = q.groupby(["status", "type"]).size().unstack(fill_value=0) if len(q) else None
    return {
        "queues": len(q),
        "online": int((q["status"] == "online").sum()) if len(q) else 0,
        "sites": len(s),
        "nuclei": int((s["role"] == "nucleus").sum()) if len(s) else 0,
        "tasks": len(t),
        "waiting": int(t["status"].isin(WAITING_TASK_STATUSES).sum()) if len(t) else 0,
        "jobs": int(j["njobs"].sum()) if len(j) else 0,
        "queues_by_status_type": {}
        if by_status_type is None
        else {c: by_status_type[c].to_dict() for c in by_status_type.columns},
        "tasks_by_status": t["status"].value_counts().to_dict() if len(t) else {},
        "jobs_by_state": j.groupby("jobstatus")["njobs"].sum().sort_values(ascending=False).to_dict() if len(j) else {},
    }


def queue_status_figure(c: dict[str, Any]) -> go.Figure:
    """Queues by status, stacked by type."""
    data = c["queues_by_status_type"]
    if not data:
        return empty_figure("no queues in the grid")
    fig = go.Figure()
    for i, (qtype, per_status) in enumerate(sorted(data.items())):
        fig.add_trace(go.Bar(x=list(per_status.values()), y=list(per_status.keys()), orientation="h", name=qtype,
                             marker_color=PALETTE[i % len(PALETTE)]))  # fmt: skip
    fig.update_layout(barmode="stack")
    # the legend under the axis: beside the title it ran into it in a third of a 1100 px page
    return style(fig, 290, title={"text": "Queues by status and type", "x": 0, "font": {"size": 13}},
                 legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0},
                 margin={"l": 10, "r": 10, "t": 40, "b": 50})  # fmt: skip


def census_from_run(run: GridRun) -> dict[str, Any]:
    """The skip census of every waiting task's job brokerage, from a whole-grid run (same shape as skip_census)."""
    per_code: dict[str, int] = {}
    tasks_hit: dict[str, int] = {}
    analysed = pending = 0
    for (broker, _), o in run.outcomes.items():
        if broker == "task":
            continue
        analysed += 1
        pending += o.status != "ok"
        for code, n in o.criteria.items():
            per_code[code] = per_code.get(code, 0) + n
            tasks_hit[code] = tasks_hit.get(code, 0) + 1
    failed = sum(1 for broker, _ in run.errors if broker != "task")
    ranked = sorted(per_code, key=lambda k: (-per_code[k], k))
    return {
        "analysed": analysed,
        "candidates": analysed + failed,
        "failed": failed,
        "pending": pending,
        "elapsed_s": round(run.seconds, 3),
        "criteria": [{"criteria": k, "skips": per_code[k], "tasks": tasks_hit[k]} for k in ranked],
    }


def census_figure(census: dict[str, Any], top: int = 12) -> go.Figure:
    """Most common skip criteria across the analysed waiting tasks."""
    rows = census["criteria"][:top]
    if not rows:
        return empty_figure("no waiting task was analysed" if not census["analysed"] else "no queue was skipped")
    fig = bar(
        [r["criteria"] for r in rows],
        [r["skips"] for r in rows],
        "Queues skipped per criteria (all analysed tasks"
        + (
            f"; the {top} most common of {len(census['criteria'])}, all in the table)"
            if len(census["criteria"]) > top
            else ")"
        ),
        300,
        PALETTE[3],
    )
    fig.update_traces(
        customdata=[r["tasks"] for r in rows], hovertemplate="%{y}: %{x} skips in %{customdata} tasks<extra></extra>"
    )
    return fig


def census_sentence(census: dict[str, Any]) -> str:
    """How many tasks the census covers and how long it took."""
    return (
        f"{census['analysed']} of {census['candidates']} waiting tasks analysed in {census['elapsed_s']:.2f} s; "
        f"{census['pending']} would stay pending (no queue left)"
        + (f"; {census['failed']} could not be brokered" if census["failed"] else "")
        + "."
    )
