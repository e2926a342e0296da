"""Analysis Stabilizer page: per-queue nQ vs nQ_max and per-user nQ(PQ,user) vs max_q_len, throttled highlighted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from app.viewmodels.common import PALETTE, empty_figure, records, style
from brokerage.model.explain import Decision

THROTTLED = "#dc2626"
STABILIZER_CODE = "-tmp_user_problem"  # the criteria code of the analysis brokerage's Analysis Stabilizer filter
# legends under the axis: above the plot they ran into the chart title at half width
LEGEND_BELOW = {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0}


def per_queue(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (share, VO, PQ): nQ, nQ_max, nR, trr, users and how many users are throttled there (each VO's
    users against its own queue counts)."""
    if df.empty:
        return pd.DataFrame(
            columns=["gshare", "vo", "panda_queue", "nQ", "throttle_from", "nQ_max", "nQ_max_rule", "nR", "trr",
                     "users", "throttled_users"]
        )  # fmt: skip
    g = df.groupby(["gshare", "vo", "panda_queue"] if "vo" in df else ["gshare", "panda_queue"], sort=True)
    out = g.agg(nQ=("nQ", "first"), throttle_from=("throttle_from", "first"), nQ_max=("nQ_max", "first"),
                nQ_max_rule=("nQ_max_rule", "first"), nR=("nR", "first"),
                trr=("trr", "first"), users=("produsername", "nunique"), throttled_users=("throttled", "sum")).reset_index()  # fmt: skip
    out["throttled_users"] = out["throttled_users"].astype(int)
    return out


def users(df: pd.DataFrame) -> list[str]:
    """Users with jobs, most throttled first."""
    if df.empty:
        return []
    t = df.groupby("produsername")["throttled"].sum().sort_values(ascending=False, kind="stable")
    return [str(u) for u in t.index]


def _labels(d: pd.DataFrame) -> list[str]:
    """Queue names, with the global share added when several shares are shown (and the VO when several are)."""
    names = d["panda_queue"].astype(str)
    if d["gshare"].nunique() > 1:
        names = names + " · " + d["gshare"].astype(str).str.split().str[0]
    if "vo" in d and d["vo"].nunique() > 1:
        names = names + " · " + d["vo"].astype(str)
    return names.tolist()


def queue_figure(pq: pd.DataFrame, highlight: str | None = None, top: int = 25) -> go.Figure:
    """nQ bars against nQ_max markers for the queues with most queued jobs; throttled queues in red."""
    if pq.empty:
        return empty_figure("no analysis jobs queued or running")
    d = pq.sort_values("nQ", ascending=False).head(top)
    colors = [THROTTLED if t > 0 else PALETTE[0] for t in d["throttled_users"]]
    lines = [3 if q == highlight else 0 for q in d["panda_queue"]]
    fig = go.Figure()
    y = _labels(d)
    # horizontal bars: queue names stay readable at any width (tilted labels overlapped in a half-width card)
    fig.add_trace(go.Bar(y=y, x=d["nQ"].tolist(), orientation="h", name="nQ (queued jobs)", marker={"color": colors, "line": {"width": lines, "color": "#111827"}},
                         customdata=d[["throttled_users", "gshare"]].to_numpy().tolist(),
                         hovertemplate="%{y}<br>nQ=%{x}<br>throttled users=%{customdata[0]}<extra>%{customdata[1]}</extra>"))  # fmt: skip
    fig.add_trace(go.Scatter(y=y, x=d["throttle_from"].tolist(), mode="markers", name="throttles from (nQ ≥)",
                             marker={"symbol": "line-ns-open", "size": 14, "color": "#9ca3af", "line": {"width": 3, "color": "#9ca3af"}},
                             hovertemplate="%{y}<br>can throttle from nQ=%{x:.0f}<extra></extra>"))  # fmt: skip
    fig.add_trace(go.Scatter(y=y, x=d["nQ_max"].tolist(), mode="markers", name="nQ_max (sets users' max_q_len)",
                             marker={"symbol": "line-ns-open", "size": 14, "color": "#111827", "line": {"width": 3, "color": "#111827"}},
                             hovertemplate="%{y}<br>nQ_max=%{x:.0f}<extra></extra>"))  # fmt: skip
    fig.update_yaxes(type="category", autorange="reversed", automargin=True, tickfont={"size": 10})
    fig.update_xaxes(type="log")  # queue lengths span several orders of magnitude on a real grid
    return style(
        fig, 150 + 20 * len(d), title={"text": "Per queue: nQ, where throttling starts, nQ_max (red = some user throttled)", "x": 0,
                                        "font": {"size": 13}},
        legend=LEGEND_BELOW, margin={"t": 40, "l": 10, "r": 10, "b": 80},
    )  # fmt: skip


def user_figure(df: pd.DataFrame, user: str | None) -> go.Figure:
    """nQ(PQ, user) bars against max_q_len markers for one user; throttled queues in red."""
    if not user:
        return empty_figure("pick a user to see their queue lengths")
    d = df[df["produsername"] == user].sort_values("nQ_user", ascending=False).head(25)
    if d.empty:
        return empty_figure(f"user {user} has no queued or running analysis jobs")
    colors = [THROTTLED if t else PALETTE[1] for t in d["throttled"]]
    fig = go.Figure()
    y = _labels(d)
    fig.add_trace(go.Bar(y=y, x=d["nQ_user"].tolist(), orientation="h", marker_color=colors, name=f"nQ({user}, PQ)"))
    fig.add_trace(go.Scatter(y=y, x=d["max_q_len"].tolist(), mode="markers", name="max_q_len",
                             marker={"symbol": "line-ns-open", "size": 14, "line": {"width": 3, "color": "#111827"}}))  # fmt: skip
    fig.update_yaxes(type="category", autorange="reversed", automargin=True, tickfont={"size": 10})
    fig.update_xaxes(type="log")  # queue lengths span several orders of magnitude on a real grid
    return style(
        fig,
        150 + 20 * len(d),
        title={"text": f"User {user}: queued jobs per PQ vs max_q_len (red = throttled)", "x": 0, "font": {"size": 13}},
        legend=LEGEND_BELOW,
        margin={"t": 40, "l": 10, "r": 10, "b": 80},
    )


def users_by_excess(df: pd.DataFrame, top: int = 20) -> go.Figure:
    """The users furthest over their max_q_len, summed over their queues (the whole-grid view before a user is picked)."""
    if df.empty:
        return empty_figure("no analysis jobs queued or running")
    d = df.assign(excess=(df["nQ_user"] - df["max_q_len"]).clip(lower=0))
    t = d.groupby("produsername")["excess"].sum().sort_values(ascending=False).head(top)
    t = t[t > 0]
    if t.empty:
        return empty_figure("no user is over max_q_len anywhere")
    fig = go.Figure(go.Bar(y=[str(u) for u in t.index], x=t.tolist(), orientation="h", marker_color=THROTTLED,
                           hovertemplate="%{y}: %{x:.0f} jobs over max_q_len<extra></extra>"))  # fmt: skip
    fig.update_yaxes(type="category", autorange="reversed", automargin=True, tickfont={"size": 10})
    return style(
        fig, 120 + 20 * len(t), title={"text": "Users over max_q_len: excess summed over their queues (pick one above)", "x": 0,
                                        "font": {"size": 13}}, margin={"t": 40, "l": 10, "r": 10, "b": 30},
    )  # fmt: skip


def rows(df: pd.DataFrame, user: str | None = None, queue: str | None = None) -> list[dict[str, Any]]:
    """Stabilizer rows filtered by user and/or queue, with excess = nQ_user − max_q_len, largest excess first."""
    d = df
    if user:
        d = d[d["produsername"] == user]
    if queue:
        d = d[d["panda_queue"] == queue]
    d = d.assign(excess=d["nQ_user"] - d["max_q_len"])
    d = d.sort_values(["excess", "nQ_user"], ascending=[False, False])
    return records(d.round(3))


# the table's columns: every number in view (headers wrap instead of being cut), each limit's rule on hover
NUMBER_COLUMNS: tuple[tuple[str, str, str | None, int], ...] = (
    ("excess", "excess", None, 95),
    ("nQ_user", "nQ_user", None, 90),
    ("max_q_len", "max_q_len", "max_q_len_rule", 105),
    ("nQ", "nQ", None, 65),
    ("nQ_max", "nQ_max", "nQ_max_rule", 90),
    ("nR", "nR", None, 55),
    ("nR_user", "nR_user", None, 90),
    ("trr", "trr", None, 55),
    ("percentage", "percentage", "percentage_rule", 100),
)
RULE_COLUMNS = ("max_q_len_rule", "nQ_max_rule", "percentage_rule", "release_rule")


def column_defs() -> list[dict[str, Any]]:
    """AG Grid columns of the (PQ, user) table: the numbers with short, wrapping headers and their rules as tooltips;
    the rule texts and the share as hidden columns (in the API)."""
    wrap = {"wrapHeaderText": True, "autoHeaderHeight": True}
    cols: list[dict[str, Any]] = [
        {"field": "produsername", "headerName": "user", "minWidth": 80, "cellRenderer": "Link",
         "cellRendererParams": {"prefix": "/stabilizer?user="}, **wrap},
        {"field": "throttled", "minWidth": 88, "tooltipField": "release_rule", **wrap,
         "cellStyle": {"styleConditions": [{"condition": "params.value === true",
                                            "style": {"color": "#dc2626", "fontWeight": "600"}}]}},
    ]  # fmt: skip
    for field, header, rule, width in NUMBER_COLUMNS:
        col: dict[str, Any] = {"field": field, "headerName": header, "type": "numericColumn", "minWidth": width, **wrap}
        if rule:
            col["tooltipField"] = rule
            col["headerTooltip"] = f"hover a value for its rule ({rule})"
        cols.append(col)
    cols[2]["sort"] = "desc"
    cols[2]["headerTooltip"] = (
        "excess = nQ_user − max_q_len: how far the user's queued jobs at the PQ are over the limit"
    )
    cols += [{"field": r, "hide": True} for r in ("gshare", "vo", *RULE_COLUMNS)]  # the share is in the queue's tooltip
    return cols


def affected_tasks(
    tasks: pd.DataFrame, waiting: set[int], decide: Callable[[int], Decision], user: str, queue: str
) -> list[dict[str, Any]]:
    """The waiting analysis tasks of USER and where QUEUE stands in each one's job brokerage: removed by the
    Analysis Stabilizer (-tmp_user_problem) or another filter, ranked, or not a candidate.

    Usage: ``affected_tasks(snap.tasks, set(waiting_task_ids(snap)), state.job_decision, "alice", "ANALY_X")``
    """
    mine = tasks[(tasks["username"] == user) & (tasks["prodsourcelabel"] == "user")]
    out: list[dict[str, Any]] = []
    for tid in sorted(int(t) for t in mine["jeditaskid"] if int(t) in waiting):
        d = decide(tid)
        skip = d.skip_of(queue)
        ranked = {c.name: c.rank for c in d.candidates}
        if skip is not None:
            standing = f"removed here by {skip.criteria}: {skip.reason}"
        elif queue in ranked:
            standing = f"ranked {ranked[queue]} here"
        else:
            standing = "not a candidate here"
        out.append({"task": tid, "status": d.status, "standing": standing,
                    "stabilizer": bool(skip is not None and skip.criteria == STABILIZER_CODE)})  # fmt: skip
    return out
