"""Tuning page: parameter rows, edit rows, before/after tables and grid-impact figures (edits are parsed and checked
in the core: ``brokerage.model.gdpconfig.parse_edits``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import plotly.graph_objects as go

from app.viewmodels.common import PALETTE, empty_figure, num, style
from app.viewmodels.gridstate import is_grid_param
from brokerage.model.gdpconfig import PARAMS, REGISTRY, Config, Edits, Param, Value, format_value
from brokerage.sim.uses import used_by
from brokerage.whatif.compare import TaskDiff
from brokerage.whatif.impact import GridImpact

COMPONENT_TITLES = {
    "jobbroker": "Production job brokerage (jobbroker)",
    "anal_jobbroker": "Analysis job brokerage (anal_jobbroker)",
    "taskbrokerage": "Task brokerage: nucleus (taskbrokerage)",
    "taskqueuedb": "DIRAC task queues (taskqueuedb)",
    "matcher": "DIRAC matcher (matcher)",
    "network": "Network weights (network)",
    "prio_mgr": "User throttles (prio_mgr)",
    "analy_eval": "User evaluation (analy_eval)",
}
RESERVED_QUERY = {"task"}  # query parameters of the page that are not gdpconfig keys


def tunable_params() -> list[Param]:
    """Every registered parameter, grouped by component in registry order."""
    order = {c: i for i, c in enumerate(COMPONENT_TITLES)}
    return sorted(PARAMS, key=lambda p: order.get(p.component, len(order)))


def components() -> list[tuple[str, str, list[Param]]]:
    """(component, title, params) groups for the editor."""
    groups: dict[str, list[Param]] = {}
    for p in tunable_params():
        groups.setdefault(p.component, []).append(p)
    return [(c, COMPONENT_TITLES.get(c, c), ps) for c, ps in groups.items()]


def used_by_labels(p: Param) -> list[str]:
    """'production: satellite link queue check, weight network' style labels, one per reader (broker, DIRAC or the
    simulator), of the rules that read P: derived from the rules' own declarations."""
    stages: dict[str, list[str]] = {}
    for use in used_by(p.key):
        who, _, what = use.label.partition(": ")
        stages.setdefault(who, []).append(what)
    return [f"{who}: {', '.join(what)}" for who, what in stages.items()]


def input_kind(p: Param) -> str:
    """Which control edits P: switch, select, number or text."""
    if p.type == "bool":
        return "switch"
    if p.choices:
        return "select"
    if p.type in ("int", "float"):
        return "number"
    return "text"


def stored_value(config: Config, key: str) -> Value:
    """The value in force without what-if edits (stored CONFIG row, else the default)."""
    return config.stored[key] if key in config.stored else REGISTRY[key].default


def shown(value: Value) -> str:
    """A value as the editor and tables print it."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    return format_value(value)


def edits_from_query(query: Mapping[str, Any]) -> dict[str, Any]:
    """The raw edits carried by a permalink's query string (every key that is not a page parameter)."""
    return {k: v for k, v in query.items() if k not in RESERVED_QUERY and not is_grid_param(k) and v is not None}


def permalink(task: int | None, overrides: Mapping[str, Value], path: str = "/tuning") -> str:
    """The URL that reopens this what-if: the task and each edited KEY=value."""
    q: dict[str, str] = {}
    if task is not None:
        q["task"] = str(task)
    for k in sorted(overrides):
        q[k] = shown(overrides[k]) if overrides[k] is not None else ""
    return path + ("?" + urlencode(q) if q else "")


SIM_HOURS = 6  # the tuning page's "simulate the next hours" link


def simulation_link(overrides: Mapping[str, Value], compare: bool = True, replicas: int = 1) -> str:
    """The simulation page for these edits: the next SIM_HOURS hours, stored vs what-if side by side (COMPARE
    false: the what-if alone; no edits: the stored config alone).

    Usage: ``simulation_link({"THROTTLE_THRESHOLD": 1.5})``
    """
    q = {"hours": str(SIM_HOURS), **({"compare": "1"} if overrides and compare else {}),
         **({"replicas": str(replicas)} if replicas > 1 else {})}  # fmt: skip
    q.update({k: shown(v) if v is not None else "" for k, v in sorted(overrides.items())})
    return "/simulate?" + urlencode(q)


def param_row(p: Param, config: Config, edited: Mapping[str, Value]) -> dict[str, Any]:
    """Everything the editor shows for one parameter."""
    current = stored_value(config, p.key)
    return {
        "key": p.key,
        "component": p.component,
        "description": p.description,
        "unit": p.unit,
        "default": shown(p.default),
        "current": shown(current),
        "allowed": p.allowed(),
        "used_by": used_by_labels(p),
        "in_panda_config": p.in_panda_config,
        "edited": p.key in edited,
        "value": edited.get(p.key, current),
    }


def editor_rows(config: Config, raw: Mapping[str, Any], edits: Edits) -> list[dict[str, Any]]:
    """One AG Grid row per parameter: the control's value (RAW edit or stored), what it means and any refusal."""
    rows = []
    for p in tunable_params():
        stored = stored_value(config, p.key)
        value = raw.get(p.key, stored)
        rows.append(
            {
                "key": p.key,
                "component": p.component,
                "value": value,
                "stored": stored,
                "current": shown(stored),
                "default": shown(p.default),
                "unit": p.unit,
                "allowed": p.allowed(),
                "used_by": "; ".join(used_by_labels(p)),
                "description": p.description + ("" if p.in_panda_config else " (hard-coded in PanDA; tunable here)"),
                "kind": input_kind(p),
                "choices": list(p.choices or ()),
                "step": 1 if p.type == "int" else None,
                "error": edits.errors.get(p.key, ""),
                "edited": p.key in edits.overrides,
            }
        )
    return rows


def raw_from_rows(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The raw edits held by the editor's rows: every value that differs from the stored one.

    The browser computes the same map for the raw-edits store (app/callbacks/tuning.py).
    """
    raw: dict[str, Any] = {}
    for r in rows:
        v, stored = r.get("value"), r.get("stored")
        if v == stored or (v is not None and stored is not None and str(v) == str(stored)):
            continue
        # an emptied box, or a number the browser cannot hold (1e999 arrives as null), is an edit to refuse
        raw[str(r["key"])] = "" if v is None else v
    return raw


def matches(p: Param, text: str) -> bool:
    """Whether the editor's search TEXT matches P's key, description or the filters using it."""
    t = text.strip().lower()
    if not t:
        return True
    hay = " ".join([p.key, p.description, p.component, *used_by_labels(p)]).lower()
    return all(word in hay for word in t.split())


# ---------------------------------------------------------------- one task


def pct(x: float | None) -> str:
    """A share as a percentage."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x * 100:.1f}%"


def side_rows(diff: TaskDiff) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows of the before and the after ranking (ranked candidates shown in the diff), best first."""
    before = sorted((m for m in diff.moves if m.before is not None), key=lambda m: m.before or 0)
    after = sorted((m for m in diff.moves if m.after is not None), key=lambda m: m.after or 0)
    left = [
        {"rank": m.before, "name": m.name, "weight": num(m.weight_before), "share": pct(m.share_before)} for m in before
    ]
    right = [
        {
            "rank": m.after,
            "name": m.name,
            "weight": num(m.weight_after),
            "share": pct(m.share_after),
            "move": m.arrow,
            "share_delta": _signed_pct(m.share_after - m.share_before),
        }
        for m in after
    ]
    return left, right


def _signed_pct(x: float) -> str:
    if abs(x) < 5e-4:
        return ""
    return f"{x * 100:+.1f} pt"


def out_rows(diff: TaskDiff) -> list[dict[str, Any]]:
    """Candidates that were ranked before and are not any more (top N), with the filter that now removes them."""
    why = {c.name: c for c in diff.filter_changes}
    rows = []
    for m in diff.moves:
        if m.after is None:
            fc = why.get(m.name)
            rows.append(
                {
                    "name": m.name,
                    "rank_before": m.before,
                    "criteria": fc.criteria_after if fc else "",
                    "reason": fc.reason_after if fc else "below the top candidates",
                }
            )
    return rows


def filter_rows(diff: TaskDiff) -> list[dict[str, Any]]:
    """Candidates that newly pass or newly fail a filter, with the criteria before and after."""
    return [
        {
            "name": c.name,
            "change": c.change,
            "criteria": f"{c.criteria_before} → {c.criteria_after}"
            if c.change == "other filter"
            else c.criteria_after or c.criteria_before,
            "reason": c.reason_after or c.reason_before,
        }
        for c in diff.filter_changes
    ]


def factor_rows(diff: TaskDiff) -> list[dict[str, Any]]:
    """Weight factors that changed, per candidate."""
    return [
        {"name": f.name, "factor": f.factor, "before": num(f.before, 4), "after": num(f.after, 4)}
        for f in diff.factor_changes
    ]


def headline(diff: TaskDiff) -> str:
    """One sentence saying what the edit did to this task."""
    if not diff.changed:
        return "No change for this task: same candidates, same order, same weights."
    parts = []
    if diff.status_before != diff.status_after:
        parts.append(f"status {diff.status_before} → {diff.status_after}")
    if diff.top_before != diff.top_after:
        parts.append(f"top {diff.label} {diff.top_before or 'none'} → {diff.top_after or 'none'}")
    moved = sum(1 for m in diff.moves if m.move not in (0,))
    if moved:
        parts.append(f"{moved} of the top {diff.label} candidates moved or changed")
    gained = sum(1 for c in diff.filter_changes if c.change == "newly passes")
    lost = sum(1 for c in diff.filter_changes if c.change == "newly fails")
    if gained or lost:
        parts.append(f"{gained} newly pass, {lost} newly fail a filter")
    if diff.factor_changes:
        parts.append(f"{len(diff.factor_changes)} weight factors changed")
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "."


# ---------------------------------------------------------------- the whole grid


def impact_kpis(im: GridImpact) -> list[tuple[str, str]]:
    """(label, value) headline numbers of the grid impact."""
    compared = sum(im.compared.values())
    nuclei = im.compared.get("task", 0)  # an assigning task is brokered twice: its nucleus and its jobs
    return [
        (f"brokerages compared ({compared - nuclei:,} job, {nuclei:,} nucleus)", f"{compared:,}"),
        ("top candidate changed", f"{len(im.top_changed):,}"),
        ("top-10 set changed", f"{len(im.top10_changed):,}"),
        ("newly pending", f"{len(im.newly_pending):,}"),
        ("no longer pending", f"{len(im.unpending):,}"),
    ]


def load_figure(df: Any, label: str, unit: str, top: int = 15) -> go.Figure:
    """Bars of the largest expected-load shifts (after − before) per queue or nucleus."""
    moved = df[df["delta"] != 0].head(top)
    if moved.empty:
        return empty_figure(f"No {label} changes its expected {unit}", height=200)
    moved = moved.iloc[::-1]
    colors = [PALETTE[1] if d > 0 else PALETTE[3] for d in moved["delta"]]
    hover = [
        f"{n}<br>before {b:,.1f}<br>after {a:,.1f}<br>shift {d:+,.1f} {unit}"
        for n, b, a, d in zip(moved[label], moved["before"], moved["after"], moved["delta"], strict=True)
    ]
    fig = go.Figure(
        go.Bar(
            x=list(moved["delta"]),
            y=list(moved[label]),
            orientation="h",
            marker_color=colors,
            hovertext=hover,
            hoverinfo="text",
            text=[f"{d:+,.0f}" if abs(d) >= 100 else f"{d:+.3g}" for d in moved["delta"]],
            textposition="auto",
        )
    )
    fig.update_yaxes(type="category")
    fig.update_xaxes(title_text=f"{unit}: after − before", zeroline=True)
    n = len(moved)
    return style(
        fig,
        height=max(180, 28 * n + 90),
        title={"text": f"Expected {unit} per {label}: largest shifts", "x": 0, "font": {"size": 13}},
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
        showlegend=False,
    )


def changed_task_rows(im: GridImpact, names: Mapping[int, str], limit: int = 200) -> list[dict[str, Any]]:
    """Tasks whose brokerage moved, with what moved (top candidate, top-10 set, pending)."""
    kinds: dict[tuple[str, int], list[str]] = {}
    for key in im.top10_changed:
        kinds.setdefault(key, []).append("top-10 set")
    for key in im.top_changed:
        kinds.setdefault(key, []).append("top candidate")
    for key in im.newly_pending:
        kinds.setdefault(key, []).append("now pending")
    for key in im.unpending:
        kinds.setdefault(key, []).append("no longer pending")
    rows = [
        {
            "task": tid,
            "brokerage": "nucleus" if broker == "task" else broker,
            "what": ", ".join(sorted(set(what))),
            "taskname": names.get(tid, ""),
        }
        for (broker, tid), what in kinds.items()
    ]
    rows.sort(key=lambda r: (-len(r["what"]), r["task"]))
    return rows[:limit]
