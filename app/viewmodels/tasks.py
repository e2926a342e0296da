"""Task states page: JEDI state transitions over a time window, time spent per state, one task's history."""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from app.viewmodels.common import PALETTE, bar, records, style

WINDOWS = {"6h": 6, "24h": 24, "7d": 168, "30d": 720, "all": None}


def window_or_default(w: Any) -> str:
    """A known window name (all when unknown)."""
    return w if w in WINDOWS else "all"


def window_start(taken_at: Any, window: str) -> pd.Timestamp | None:
    """The start of WINDOW before the snapshot time (None for "all")."""
    hours = WINDOWS[window_or_default(window)]
    return None if hours is None else pd.Timestamp(taken_at) - pd.Timedelta(hours=hours)


def tasks_in_window(tasks: pd.DataFrame, log: pd.DataFrame, since: pd.Timestamp | None) -> pd.DataFrame:
    """The tasks that changed state at or after SINCE (every task when SINCE is None)."""
    if since is None:
        return tasks
    moved = set(log.loc[log["modificationtime"] >= since, "jeditaskid"].astype(int))
    return tasks[tasks["jeditaskid"].astype(int).isin(moved)]


def _ordered(log: pd.DataFrame) -> pd.DataFrame:
    return log.sort_values(["jeditaskid", "modificationtime"], kind="stable")


def transitions(log: pd.DataFrame, taken_at: Any, window: str = "all") -> pd.DataFrame:
    """(from, to, n) counts of state changes whose arrival time lies within WINDOW before TAKEN_AT."""
    if log.empty:
        return pd.DataFrame(columns=["source", "target", "n"])
    d = _ordered(log).copy()
    d["source"] = d.groupby("jeditaskid")["status"].shift(1)
    d = d.dropna(subset=["source"])
    since = window_start(taken_at, window)
    if since is not None:
        d = d[d["modificationtime"] >= since]
    out = d.groupby(["source", "status"]).size().reset_index(name="n").rename(columns={"status": "target"})
    return out.sort_values("n", ascending=False, ignore_index=True)


def durations(log: pd.DataFrame, taken_at: Any) -> pd.DataFrame:
    """Hours each task spent in each state it entered (the current state runs until TAKEN_AT)."""
    if log.empty:
        return pd.DataFrame(columns=["jeditaskid", "status", "entered", "hours", "current"])
    d = _ordered(log).copy()
    nxt = d.groupby("jeditaskid")["modificationtime"].shift(-1)
    d["current"] = nxt.isna()
    end = nxt.fillna(pd.Timestamp(taken_at))
    d["hours"] = (end - d["modificationtime"]).dt.total_seconds() / 3600.0
    return d.rename(columns={"modificationtime": "entered"})[["jeditaskid", "status", "entered", "hours", "current"]]


def time_in_state(dur: pd.DataFrame, since: pd.Timestamp | None = None) -> pd.DataFrame:
    """Median and mean hours per state over finished stays (those that ended at or after SINCE, when given),
    plus tasks currently there."""
    if dur.empty:
        return pd.DataFrame(columns=["status", "stays", "median_h", "mean_h", "now"])
    done = dur[~dur["current"]]
    if since is not None:
        done = done[done["entered"] + pd.to_timedelta(done["hours"], unit="h") >= since]
    g = done.groupby("status")["hours"]
    out = pd.DataFrame({"stays": g.size(), "median_h": g.median().round(2), "mean_h": g.mean().round(2)})
    out["now"] = dur[dur["current"]].groupby("status").size()
    return (
        out.fillna({"stays": 0, "now": 0})
        .astype({"stays": int, "now": int})
        .reset_index()
        .sort_values("median_h", ascending=False)
    )


def time_figure(tis: pd.DataFrame) -> go.Figure:
    """Median hours spent per state."""
    d = tis.dropna(subset=["median_h"])
    return bar(d["status"].tolist(), d["median_h"].tolist(), "Median hours spent per state", 300, PALETTE[4])


def history(log: pd.DataFrame, taken_at: Any, task_id: int) -> list[dict[str, Any]]:
    """One task's states in order with how long it stayed in each."""
    d = durations(log[log["jeditaskid"] == task_id], taken_at) if not log.empty else durations(log, taken_at)
    d = d.copy()
    d["hours"] = d["hours"].round(2)
    return records(d)


def status_counts(tasks: pd.DataFrame) -> dict[str, int]:
    """Tasks per current status."""
    return {str(k): int(v) for k, v in tasks["status"].value_counts().items()} if len(tasks) else {}


def status_figure(counts: dict[str, int]) -> go.Figure:
    """Tasks per current status."""
    return style(bar(list(counts), list(counts.values()), "Tasks by current status", 300), 300)
