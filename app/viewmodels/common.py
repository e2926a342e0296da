"""Shared pure helpers: JSON-safe records, number formatting, figure styling."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

PALETTE = ["#2563eb", "#16a34a", "#f59e0b", "#dc2626", "#7c3aed", "#0891b2", "#db2777", "#65a30d"]


def plain(v: Any) -> Any:
    """A JSON-safe Python value (numpy scalars unwrapped, NaN/NaT to None, times to ISO text)."""
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or v is pd.NaT:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, pd.Timestamp):
        return v.isoformat()
    if isinstance(v, (list, tuple, np.ndarray)):
        return [plain(x) for x in v]
    return v


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """DataFrame rows as JSON-safe dicts."""
    return [{k: plain(v) for k, v in row.items()} for row in df.to_dict("records")]


def num(x: Any, digits: int = 3) -> str:
    """Compact number text ('n/a' for missing)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    x = float(x)
    if x == int(x) and abs(x) < 1e12:
        return f"{int(x):,}"
    return f"{x:.{digits}g}"


def style(fig: go.Figure, height: int = 320, **layout: Any) -> go.Figure:
    """Dense, quiet styling shared by every figure."""
    base: dict[str, Any] = {
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "template": "plotly_white",
        "font": {"size": 12},
        "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 1, "xanchor": "right"},
    }
    fig.update_layout(**{**base, **layout})
    return fig


def empty_figure(text: str, height: int = 240) -> go.Figure:
    """A blank figure that says why it is blank."""
    fig = go.Figure()
    fig.add_annotation(text=text, showarrow=False, font={"size": 14, "color": "#6b7280"})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return style(fig, height)


def bar(labels: list[str], values: list[float], title: str, height: int = 260, color: str = PALETTE[0]) -> go.Figure:
    """A horizontal bar chart, largest on top."""
    if not labels:
        return empty_figure(f"{title}: nothing to show", height)
    fig = go.Figure(go.Bar(x=list(values), y=list(labels), orientation="h", marker_color=color, text=list(values)))
    fig.update_yaxes(autorange="reversed", type="category")
    return style(fig, height, title={"text": title, "x": 0, "font": {"size": 13}})


def unusable_choice(name: str, value: Any, allowed: Sequence[Any], shown: Any) -> str | None:
    """Why a permalink's ?NAME=VALUE was not used (VALUE not among ALLOWED), or None when it was (or is absent).

    Usage: ``unusable_choice("metric", "bogus", ["weight", "queued"], "weight")``
    """
    if value in (None, "") or value in allowed:
        return None
    listed = ", ".join(str(a) for a in list(allowed)[:8]) + (", …" if len(allowed) > 8 else "")
    instead = f"showing {shown}" if shown not in (None, "") else "showing all"
    return f"{name}={value}: not one of {listed}; {instead} instead"
