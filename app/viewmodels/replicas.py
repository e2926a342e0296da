"""Replicated simulations: paired differences as error bars, one-key attribution, sweeps as a line with a band."""

from __future__ import annotations

from typing import Any

from app.viewmodels.common import PALETTE
from brokerage.sim.measures import SHARE_PREFIX
from brokerage.sim.replicas import INTERACTIONS, STORED, WHATIF, number, say

REAL, NOT_REAL = "#1f5fa8", "#9aa3ad"
SWEEP_MEASURES = ("jobs_finished", "jobs_failed", "jobs_closed_reassigned", "mean_queued_minutes",
                  "p95_queued_minutes", "share_gap_pp", "tasks_completed", "pending_stay_hours", "retries",
                  "throttled_work_queues")  # fmt: skip


def _layout(title: str, height: int, **extra: Any) -> dict[str, Any]:
    return {
        "height": height, "margin": {"l": 200, "r": 20, "t": 40, "b": 45},
        "title": {"text": title, "x": 0, "font": {"size": 13}},
        "template": {"layout": {"paper_bgcolor": "white", "plot_bgcolor": "white", "font": {"color": "#2a3f5f"}}},
        "font": {"size": 12}, "showlegend": False, **extra,
    }  # fmt: skip


def _relative(row: dict[str, Any], value: float | None) -> float | None:
    """VALUE as % of the stored mean of ROW's measure (None when that mean is 0 or missing)."""
    base = row["means"].get(STORED)
    if value is None or not base:
        return None
    return 100.0 * value / abs(base)


def _headline_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in doc["measures"] if not r["measure"].startswith(SHARE_PREFIX) and r["unit"] != "pp"]


def _bars(
    rows: list[dict[str, Any]], pick: Any, relative: bool, name: str = "", color: str | None = None, offset: float = 0
) -> dict:
    """One error-bar trace: per row the difference PICK(row) gives, with its interval (as % of the stored mean), at
    y = the row's position + OFFSET (traces of one figure side by side)."""
    ys, xs, lo, hi, colors, texts = [], [], [], [], [], []
    for i, row in enumerate(rows):
        part = pick(row)
        if part is None or part["difference"] is None:
            continue
        conv = (lambda v, r=row: _relative(r, v)) if relative else (lambda v: v)
        d, (a, b) = conv(part["difference"]), part["interval"]
        if d is None:
            continue
        a, b = (conv(a), conv(b)) if a is not None else (d, d)
        ys.append(i + offset)
        xs.append(d)
        lo.append(d - a)
        hi.append(b - d)
        colors.append(color or (REAL if part["significant"] else NOT_REAL))
        texts.append(f"{number(part['difference'], row['unit'])} {row['unit']}; 95 %: "
                     f"{number(part['interval'][0])} to {number(part['interval'][1])}"
                     + ("; real" if part["significant"] else "; includes 0: not real"))  # fmt: skip
    return {"type": "scatter", "mode": "markers", "x": xs, "y": ys, "name": name, "text": texts,
            "hovertemplate": "%{text}<extra>" + name + "</extra>",
            "marker": {"color": colors, "size": 9},
            "error_x": {"type": "data", "symmetric": False, "array": hi, "arrayminus": lo, "thickness": 2,
                        "width": 5, "color": "#4a5560"}}  # fmt: skip


def _zero_line(n: int) -> list[dict[str, Any]]:
    return [{"type": "line", "x0": 0, "x1": 0, "y0": -0.5, "y1": n - 0.5, "line": {"color": "#c9302c", "dash": "dot"}}]


def _names_axis(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A y axis with one tick per measure, top down."""
    return {"tickvals": list(range(len(rows))), "ticktext": [r["name"] for r in rows], "autorange": "reversed",
            "range": [len(rows) - 0.5, -0.5], "zeroline": False}  # fmt: skip


def drawable(doc: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The headline measures drawn as % of the stored mean, and the names of those that cannot be (stored mean 0 or
    no value: the table still lists them).

    Usage: ``rows, undrawn = drawable(result)``
    """
    rows, undrawn = [], []
    for r in _headline_rows(doc):
        (rows if _relative(r, r["difference"]) is not None else undrawn).append(r)
    return rows, [r["name"] for r in undrawn]


def interval_figure(doc: dict[str, Any]) -> dict[str, Any]:
    """Each headline measure's paired difference (what-if - stored) as % of the stored mean, with its 95 % interval
    as an error bar; blue where the interval excludes 0 (a real difference), grey where it does not.

    Usage: ``interval_figure(result)["data"][0]["error_x"]``
    """
    rows, _undrawn = drawable(doc)
    trace = _bars(rows, lambda r: r, relative=True, name="what-if - stored")
    title = f"What-if - stored, % of the stored mean, 95 % interval ({doc['replicas']} replicas; blue: real)"
    n = len(rows)
    return {"data": [trace], "layout": _layout(title, 70 + 34 * max(n, 3), shapes=_zero_line(n),
                                               xaxis={"title": {"text": "% of the stored mean"}, "zeroline": False},
                                               yaxis=_names_axis(rows))}  # fmt: skip


def share_figure(doc: dict[str, Any]) -> dict[str, Any]:
    """Per global share, the change of its running share minus its target (percentage points) with its interval.

    Usage: ``share_figure(result)["data"][0]["y"]``
    """
    rows = [r for r in doc["measures"] if r["unit"] == "pp"]
    trace = _bars(rows, lambda r: r, relative=False, name="what-if - stored")
    n = len(rows)
    title = "Global shares: change of running share - target, percentage points, 95 % interval"
    return {"data": [trace], "layout": _layout(title, 70 + 30 * max(n, 3), shapes=_zero_line(n),
                                               xaxis={"title": {"text": "percentage points"}, "zeroline": False},
                                               yaxis=_names_axis(rows))}  # fmt: skip


def attribution_figure(doc: dict[str, Any]) -> dict[str, Any] | None:
    """For an edit of several keys: per headline measure, each key alone and the interactions left over, as % of
    the stored mean with their intervals (None without attribution).

    Usage: ``attribution_figure(result)["data"][0]["name"]``
    """
    keys = [*doc.get("keys", []), INTERACTIONS] if doc.get("kind") == "compare" and doc.get("keys") else []
    if not keys:
        return None
    rows, _undrawn = drawable(doc)
    data = []
    step = 0.7 / len(keys)
    for i, key in enumerate(keys):

        def pick(row: dict[str, Any], key: str = key) -> dict[str, Any] | None:
            return next((p for p in row.get("attribution", []) if p["key"] == key), None)

        trace = _bars(rows, pick, relative=True, name=key, color=PALETTE[i % len(PALETTE)],
                      offset=(i - (len(keys) - 1) / 2) * step)  # fmt: skip
        trace["marker"]["symbol"] = ["circle" if p else "circle-open" for p in _sig(rows, pick)]
        trace["showlegend"] = True
        data.append(trace)
    n = len(rows)
    title = "Which key made it: each key alone vs stored, and what is left to interactions (filled: real)"
    return {"data": data, "layout": _layout(title, 150 + 34 * max(n, 3), shapes=_zero_line(n), showlegend=True,
                                            margin={"l": 200, "r": 20, "t": 40, "b": 105},
                                            legend={"orientation": "h", "yref": "container", "y": 0,
                                                    "yanchor": "bottom", "x": 0, "font": {"size": 11}},
                                            xaxis={"title": {"text": "% of the stored mean"}, "zeroline": False},
                                            yaxis=_names_axis(rows))}  # fmt: skip


def _sig(rows: list[dict[str, Any]], pick: Any) -> list[bool]:
    out = []
    for row in rows:
        part = pick(row)
        if part is None or part["difference"] is None or _relative(row, part["difference"]) is None:
            continue
        out.append(bool(part["significant"]))
    return out


def interval_columns(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's columns: measure, both means, difference, interval, real; then one per attributed key."""
    cols = [{"field": "measure", "minWidth": 260, "pinned": "left"}, {"field": "unit", "maxWidth": 110},
            {"field": STORED, "maxWidth": 130}, {"field": WHATIF, "maxWidth": 130},
            {"field": "difference", "maxWidth": 140}, {"field": "95 % interval", "minWidth": 170},
            {"field": "real?", "maxWidth": 90}]  # fmt: skip
    return cols + [{"field": k, "minWidth": 200} for k in [*doc.get("keys", [])] + ([INTERACTIONS] if doc.get("keys")
                                                                                         else [])]  # fmt: skip


def _part(p: dict[str, Any]) -> str:
    lo, hi = p["interval"]
    span = "" if lo is None else f" [{number(lo)}, {number(hi)}]"
    return f"{number(p['difference'])}{span}" + (" real" if p["significant"] else "")


def interval_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per measure: both means, the paired difference, its interval, real or not, and the attribution.

    Usage: ``interval_rows(result)[0]["real?"]``
    """
    rows = []
    for r in doc["measures"]:
        lo, hi = r["interval"]
        row = {"measure": r["name"], "unit": r["unit"], STORED: number(r["means"].get(STORED)),
               WHATIF: number(r["means"].get(WHATIF)), "difference": number(r["difference"]),
               "95 % interval": "-" if lo is None else f"{number(lo)} to {number(hi)}",
               "real?": "yes" if r["significant"] else "no"}  # fmt: skip
        for p in r.get("attribution", []):
            row[p["key"]] = _part(p)
        rows.append(row)
    return rows


def verdict_lines(doc: dict[str, Any]) -> tuple[list[str], str]:
    """(the sentences of the real differences, the sentence naming the measures without one).

    Usage: ``real, rest = verdict_lines(result)``
    """
    real = [say(r) for r in doc["measures"] if r["significant"]]
    rest = [r["name"] for r in doc["measures"] if not r["significant"]]
    tail = ("No real difference on any measure: every 95 % interval includes 0." if not real
            else "No real difference in: " + ", ".join(rest) + "." if rest else "")  # fmt: skip
    return real, tail


def sweep_figure(doc: dict[str, Any], measure: str) -> dict[str, Any]:
    """One measure over the swept values: each value's mean as a line with its 95 % interval as a band, and the
    stored config's mean as a dashed line.

    Usage: ``sweep_figure(result, "jobs_finished")["data"][2]["y"]``
    """
    row = next(r for r in doc["measures"] if r["measure"] == measure)
    pts = [p for p in row["points"] if p["mean"] is not None]
    xs = [p["value"] for p in pts]
    lo = [p["interval"][0] if p["interval"][0] is not None else p["mean"] for p in pts]
    hi = [p["interval"][1] if p["interval"][1] is not None else p["mean"] for p in pts]
    key = doc["keys"][0]
    data = [
        {"type": "scatter", "x": xs, "y": hi, "mode": "lines", "line": {"width": 0}, "hoverinfo": "skip"},
        {"type": "scatter", "x": xs, "y": lo, "mode": "lines", "line": {"width": 0}, "fill": "tonexty",
         "fillcolor": "rgba(31,95,168,0.18)", "name": "95 % interval", "hoverinfo": "skip"},
        {"type": "scatter", "x": xs, "y": [p["mean"] for p in pts], "mode": "lines+markers", "name": "mean",
         "line": {"color": REAL}, "marker": {"symbol": ["circle" if p["difference"]["significant"] else "circle-open"
                                                        for p in pts], "size": 9},
         "hovertemplate": f"{key}=%{{x}}: %{{y:,.2f}}<extra></extra>"},
    ]  # fmt: skip
    if row["stored"]["mean"] is not None and xs:
        data.append({"type": "scatter", "x": [xs[0], xs[-1]], "y": [row["stored"]["mean"]] * 2, "mode": "lines",
                     "name": "stored", "line": {"color": "#c9302c", "dash": "dash"}})  # fmt: skip
    title = f"{row['name']} ({row['unit']}) by {key}"
    layout = _layout(title, 280, margin={"l": 60, "r": 10, "t": 40, "b": 45},
                     xaxis={"title": {"text": key}, "type": "category" if any(isinstance(x, str) for x in xs) else "-"},
                     yaxis={"gridcolor": "#eef0f3"})  # fmt: skip
    return {"data": data, "layout": layout}


def sweep_measures(doc: dict[str, Any]) -> list[str]:
    """The measures a sweep draws: the headline ones it has."""
    have = {r["measure"] for r in doc["measures"]}
    return [m for m in SWEEP_MEASURES if m in have]
