"""Tuning page component trees: the parameter editor, before/after tables, grid impact, save/history, reports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from app.components.layout import empty_state, figure, grid
from app.viewmodels import tuning as vm
from brokerage.gdpconfig import Config, Param, Value
from brokerage.whatif import GridImpact, TaskDiff


def _control(p: Param, value: Value, edited: bool) -> Any:
    cid = {"type": ids.TUNE_INPUT, "key": p.key}
    kind = vm.input_kind(p)
    if kind == "switch":
        return dbc.Switch(id=cid, value=bool(value), className="mb-0")
    if kind == "select":
        return dbc.Select(id=cid, options=[{"label": c, "value": c} for c in p.choices or ()], value=value, size="sm")
    if kind == "number":
        return dcc.Input(
            id=cid,
            type="number",
            value=value,
            debounce=True,
            step="any" if p.type == "float" else 1,
            className="form-control form-control-sm tune-number" + (" edited" if edited else ""),
        )
    return dcc.Input(
        id=cid,
        type="text",
        value="" if value is None else str(value),
        debounce=True,
        className="form-control form-control-sm",
    )


def param_editor_row(row: Mapping[str, Any], param: Param) -> html.Div:
    """One parameter: key, control, unit, then what it means, its current/default/allowed values and its users."""
    meta = [
        html.Span(["current ", html.B(row["current"])]),
        html.Span(["default ", html.B(row["default"])]),
        html.Span(["allowed: ", row["allowed"]]),
    ]
    if not row["in_panda_config"]:
        meta.append(html.Span("hard-coded in PanDA, tunable here", className="text-warning"))
    return html.Div(
        [
            html.Div(
                [
                    html.Code(row["key"], className="tune-key"),
                    html.Div(_control(param, row["value"], row["edited"]), className="tune-control"),
                    html.Span(row["unit"], className="tune-unit text-muted"),
                ],
                className="tune-head",
            ),
            html.Div(id={"type": ids.TUNE_FEEDBACK, "key": row["key"]}, className="tune-feedback"),
            html.Div(row["description"], className="tune-descr"),
            html.Div(meta, className="tune-meta"),
            html.Div(
                [html.Span(u, className="badge text-bg-light me-1") for u in row["used_by"]], className="tune-used"
            ),
        ],
        id={"type": ids.TUNE_ROW, "key": row["key"]},
        className="tune-row" + (" edited" if row["edited"] else ""),
    )


def param_editor(config: Config, edited: Mapping[str, Value]) -> html.Div:
    """Every broker parameter grouped by component, with a search box and an 'edited only' switch."""
    items = []
    for component, title, params in vm.components():
        rows = [param_editor_row(vm.param_row(p, config, edited), p) for p in params]
        n_edit = sum(1 for p in params if p.key in edited)
        label = f"{title} · {len(params)}" + (f" · {n_edit} edited" if n_edit else "")
        items.append(dbc.AccordionItem(rows, title=label, item_id=component))
    open_items = [c for c, _, ps in vm.components() if any(p.key in edited for p in ps)] or ["jobbroker"]
    return html.Div(
        [
            html.Div(
                [
                    dbc.Input(
                        id=ids.TUNE_SEARCH,
                        placeholder="search key, meaning or filter (e.g. link_queued)",
                        size="sm",
                        type="search",
                        debounce=True,
                    ),
                    dbc.Switch(id=ids.TUNE_ONLY_EDITED, label="edited only", value=False, className="ms-2 mb-0 small"),
                ],
                className="d-flex align-items-center mb-2",
            ),
            dbc.Accordion(items, always_open=True, active_item=open_items, className="tune-accordion"),
        ]
    )


def edit_summary(overrides: Mapping[str, Value], errors: Mapping[str, str], config: Config) -> html.Div:
    """'N edits on version V' with each edit as a chip, and refused edits in red."""
    chips = [
        html.Span(
            [html.Code(k), f" {vm.shown(vm.stored_value(config, k))} → ", html.B(vm.shown(v))],
            className="badge text-bg-warning me-1 edit-chip",
        )
        for k, v in sorted(overrides.items())
    ]
    refused = [html.Span(f"refused: {k}", className="badge text-bg-danger me-1") for k in sorted(errors)]
    version = "defaults" if not config.version else f"stored version {config.version}"
    if not overrides and not errors:
        return html.Div(f"No edits: showing {version}. Edit a value to see the what-if.", className="small text-muted")
    return html.Div(
        [html.Span(f"{len(overrides)} edit(s) on {version}: ", className="small me-1"), *chips, *refused],
        className="small",
    )


# ---------------------------------------------------------------- one task


def _side_table(rows: Sequence[Mapping[str, Any]], title: str, label: str, after: bool) -> html.Div:
    head = ["#", label, "weight", "share"] + (["move", "Δ share"] if after else [])
    body = []
    for r in rows:
        cells = [
            html.Td(r["rank"]),
            html.Td(r["name"], className="text-truncate"),
            html.Td(r["weight"]),
            html.Td(r["share"]),
        ]
        if after:
            move = r["move"]
            cls = "move-up" if move.startswith("▲") or move == "new" else "move-down" if move.startswith("▼") else ""
            cells += [html.Td(move, className=cls), html.Td(r["share_delta"])]
        body.append(html.Tr(cells))
    if not body:
        body = [html.Tr(html.Td("no candidates: the task would be pending", colSpan=len(head), className="text-muted"))]
    return html.Div(
        [
            html.Div(title, className="small fw-semibold mb-1"),
            html.Table(
                [html.Thead(html.Tr([html.Th(h) for h in head])), html.Tbody(body)],
                className="table table-sm table-hover detail-table mb-0 side-table",
            ),
        ]
    )


def _small_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]], cls: str = "") -> html.Table:
    return html.Table(
        [
            html.Thead(html.Tr([html.Th(h) for _, h in columns])),
            html.Tbody([html.Tr([html.Td(r.get(k, "")) for k, _ in columns]) for r in rows]),
        ],
        className=f"table table-sm detail-table mb-1 {cls}",
    )


def task_diff_view(diff: TaskDiff, title: str) -> html.Div:
    """Before and after side by side, then what changed: filters passed/failed, weight factors, dropped candidates."""
    left, right = vm.side_rows(diff)
    label = diff.label
    parts: list[Any] = [
        html.Div(
            [html.Span(title, className="fw-semibold me-2"), html.Span(vm.headline(diff), className="diff-headline")],
            className="mb-1",
        ),
        dbc.Row(
            [
                dbc.Col(_side_table(left, f"Before (stored config) · {diff.status_before}", label, False), md=5),
                dbc.Col(_side_table(right, f"After (what-if) · {diff.status_after}", label, True), md=7),
            ],
            className="g-2",
        ),
    ]
    dropped = vm.out_rows(diff)
    if dropped:
        parts.append(html.Div(f"Left the top {label} candidates", className="small fw-semibold mt-2"))
        parts.append(
            _small_table(
                dropped, [("name", label), ("rank_before", "rank before"), ("criteria", "criteria"), ("reason", "why")]
            )
        )
    filters = vm.filter_rows(diff)
    if filters:
        parts.append(html.Div(f"Filter verdicts that changed ({len(filters)})", className="small fw-semibold mt-2"))
        parts.append(
            html.Div(
                _small_table(
                    filters, [("name", label), ("change", "change"), ("criteria", "criteria"), ("reason", "reason")]
                ),
                className="scroll-box",
            )
        )
    factors = vm.factor_rows(diff)
    if factors:
        parts.append(html.Div(f"Weight factors that changed ({len(factors)})", className="small fw-semibold mt-2"))
        parts.append(
            html.Div(
                _small_table(
                    factors, [("name", label), ("factor", "factor"), ("before", "before"), ("after", "after")]
                ),
                className="scroll-box",
            )
        )
    return html.Div(
        parts, className="task-diff", **{"data-task": str(diff.task), "data-changed": str(diff.changed).lower()}
    )


# ---------------------------------------------------------------- the whole grid


def grid_impact_view(
    im: GridImpact, names: Mapping[int, str], seconds: float, recomputed: int, reused: int, task_link: str
) -> html.Div:
    """Headline counts, expected-load shift charts per queue and nucleus, and the tasks that moved (TASK_LINK + id
    opens a task under the same edits)."""
    kpis = [
        dbc.Col(
            html.Div([html.Div(v, className="kpi-value"), html.Div(k, className="kpi-label")], className="kpi"),
            xs=6,
            md=True,
        )
        for k, v in vm.impact_kpis(im)
    ]
    rows = vm.changed_task_rows(im, names)
    cols = [
        {"field": "task", "cellRenderer": "Link", "cellRendererParams": {"prefix": task_link}, "maxWidth": 110},
        {"field": "brokerage", "maxWidth": 120},
        {"field": "what", "headerName": "what moved"},
        {"field": "taskname", "headerName": "task name"},
    ]
    return html.Div(
        [
            dbc.Row(kpis, className="g-2"),
            html.Div(
                f"{recomputed:,} brokerage runs recomputed, {reused:,} reused (their brokers read no edited key) "
                f"in {seconds:.2f} s.",
                className="small text-muted mb-1",
                id="tune-grid-timing",
            ),
            dbc.Row(
                [
                    dbc.Col(figure(vm.load_figure(im.queue_load, "queue", "jobs")), md=7),
                    dbc.Col(figure(vm.load_figure(im.nucleus_load, "nucleus", "tasks")), md=5),
                ],
                className="g-2",
            ),
            html.Div(f"Tasks whose brokerage moved ({len(rows)} shown)", className="small fw-semibold mt-1"),
            grid(rows, cols, height=220, export_name="whatif_tasks.csv")
            if rows
            else empty_state("No task moved", "Every waiting task keeps its top candidate, its top 10 and its status."),
        ]
    )


def grid_placeholder() -> html.Div:
    """What the grid card shows before any edit."""
    return empty_state(
        "No edits yet",
        "Change a parameter: the card then counts the waiting tasks whose top candidate, top 10 or pending status "
        "changes, and charts how the expected load moves between queues and nuclei.",
    )
