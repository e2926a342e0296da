"""Tuning page component trees: the parameter editor, before/after tables, grid impact, save/history, reports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dash_ag_grid as dag
import dash_bootstrap_components as dbc
from dash import html

from app import ids
from app.components.layout import empty_state, figure, grid
from app.ids_levers import LEVERS_PICK
from app.viewmodels import impact as ivm
from app.viewmodels import tuning as vm
from brokerage.model.gdpconfig import Config, Value
from brokerage.model.words import count
from brokerage.whatif.compare import TaskDiff
from brokerage.whatif.impact import GridImpact

EDITOR_COLUMNS: list[dict[str, Any]] = [
    {"field": "key", "headerName": "key", "pinned": "left", "minWidth": 200, "tooltipField": "description",
     "cellClass": "tune-key-cell", "filter": "agTextColumnFilter"},
    {"field": "value", "headerName": "value ✎", "editable": True, "cellDataType": False, "minWidth": 110,
     "maxWidth": 130, "singleClickEdit": True,
     "cellEditorSelector": {"function": "tuneEditor(params)"},
     "cellRendererSelector": {"function": "tuneRenderer(params)"},
     "cellClassRules": {"tune-invalid": "params.data.error !== ''", "tune-edited": "params.data.edited"},
     "tooltipField": "error", "filter": False, "sortable": False},
    {"field": "unit", "maxWidth": 100, "filter": False},
    {"field": "current", "headerName": "stored", "maxWidth": 100, "filter": False},
    {"field": "default", "maxWidth": 100, "filter": False},
    {"field": "allowed", "minWidth": 170, "tooltipField": "allowed", "filter": False},
    {"field": "used_by", "headerName": "used by", "minWidth": 200, "tooltipField": "used_by"},
    {"field": "component", "maxWidth": 140},
    {"field": "description", "minWidth": 380, "tooltipField": "description"},
]  # fmt: skip


def param_editor(rows: list[dict[str, Any]]) -> html.Div:
    """Every broker parameter in one editable grid (edit the value cell; search filters every column)."""
    editor = dag.AgGrid(
        id=ids.TUNE_EDITOR,
        rowData=rows,
        columnDefs=EDITOR_COLUMNS,
        defaultColDef={"resizable": True, "sortable": True, "filter": True, "floatingFilter": False},
        getRowId="params.data.key",
        dashGridOptions={
            "animateRows": False,
            "tooltipShowDelay": 300,
            "stopEditingWhenCellsLoseFocus": True,
            "suppressRowVirtualisation": True,  # 80 rows: every control stays in the page (tests, find-in-page)
            "rowClassRules": {"tune-row-edited": "params.data.edited", "tune-row-invalid": "params.data.error !== ''"},
        },
        columnSize="autoSize",
        className="ag-theme-alpine compact-grid",
        style={"height": "72vh", "width": "100%"},
    )
    return html.Div(
        [
            dbc.Input(
                id=ids.TUNE_SEARCH,
                placeholder="search key, meaning or filter (e.g. link_queued)",
                size="sm",
                type="search",
                className="mb-1",
            ),
            editor,
            html.Div(
                "Click a value to edit it; Enter applies it at once. Hover a key for its meaning.",
                className="small text-muted mt-1",
            ),
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
    refused = [html.Div(f"refused: {errors[k]}", className="text-danger tune-refused") for k in sorted(errors)]
    version = "defaults" if not config.version else f"stored version {config.version}"
    if not overrides and not errors:
        return html.Div(f"No edits: showing {version}. Edit a value to see the what-if.", className="small text-muted")
    return html.Div(
        [html.Span(f"{count(len(overrides), 'edit')} on {version}: ", className="small me-1"), *chips, *refused],
        className="small",
    )


# ---------------------------------------------------------------- one task


def _side_table(rows: Sequence[Mapping[str, Any]], title: str, label: str, after: bool) -> html.Div:
    head = ["#", label, "weight", "share"] + (["move", "Δ share"] if after else [])
    body = []
    for r in rows:
        pick = {"type": LEVERS_PICK, "kind": label, "side": "after" if after else "before", "name": str(r["name"])}
        cells = [
            html.Td(r["rank"]),
            html.Td(
                html.Span(r["name"], id=pick, n_clicks=0, className="lever-pick", title="its levers"),
                className="text-truncate",
            ),
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
                # side by side from 1400 px; below, one above the other so neither table scrolls sideways
                dbc.Col(
                    _side_table(left, f"Before (stored config) · {diff.status_before}", label, False), xs=12, xxl=5
                ),
                dbc.Col(_side_table(right, f"After (what-if) · {diff.status_after}", label, True), xs=12, xxl=7),
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
    sections = (
        ("Filter verdicts that changed", vm.filter_rows(diff), [("change", "change"), ("criteria", "criteria"), ("reason", "reason")]),
        ("Weight factors that changed", vm.factor_rows(diff), [("factor", "factor"), ("before", "before"), ("after", "after")]),
    )  # fmt: skip
    for title, rows, columns in sections:
        if rows:
            parts.append(html.Div(f"{title} ({len(rows)})", className="small fw-semibold mt-2"))
            parts.append(html.Div(_small_table(rows, [("name", label), *columns]), className="scroll-box"))
    return html.Div(
        parts, className="task-diff", **{"data-task": str(diff.task), "data-changed": str(diff.changed).lower()}
    )


# ---------------------------------------------------------------- the whole grid


def grid_impact_view(
    im: GridImpact,
    names: Mapping[int, str],
    seconds: float,
    recomputed: int,
    reused: int,
    task_link: str,
    moved: list[dict[str, Any]] | None = None,
) -> html.Div:
    """Headline counts, expected-load shift charts per queue and nucleus, and the tasks that moved (TASK_LINK + id
    opens a task under the same edits). MOVED (``impact.moved_rows``) adds old → new top and why to each task."""
    kpis = [
        dbc.Col(
            html.Div([html.Div(v, className="kpi-value"), html.Div(k, className="kpi-label")], className="kpi"),
            xs=6,
            md=True,
        )
        for k, v in vm.impact_kpis(im)
    ]
    rows = moved if moved is not None else vm.changed_task_rows(im, names)
    cols = [
        {"field": "task", "cellRenderer": "Link", "cellRendererParams": {"prefix": task_link}, "maxWidth": 110},
        {"field": "brokerage", "maxWidth": 120},
        {"field": "what", "headerName": "what moved"},
        {"field": "taskname", "headerName": "task name"},
    ]
    if moved is not None:  # old → new and why need the width: the task name moves into the task's tooltip
        cols = [{**cols[0], "tooltipField": "taskname", "minWidth": 95}, {**cols[1], "minWidth": 90, "maxWidth": 100},
                {"field": "top", "headerName": "top: old → new", "flex": 2, "minWidth": 150, "wrapText": True, "autoHeight": True},
                {"field": "why", "headerName": "moved by", "flex": 3, "minWidth": 160, "wrapText": True, "autoHeight": True},
                {**cols[2], "flex": 1, "minWidth": 110, "wrapText": True, "autoHeight": True}]  # fmt: skip
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
                    dbc.Col(
                        [
                            figure(vm.load_figure(im.queue_load, "queue", "jobs")),
                            html.Div(
                                ivm.totals_text(im.queue_load, "expected jobs"), className="small text-muted load-total"
                            ),
                        ],
                        xs=12,
                        xxl=7,
                    ),
                    dbc.Col(
                        [
                            figure(vm.load_figure(im.nucleus_load, "nucleus", "tasks")),
                            html.Div(
                                ivm.totals_text(im.nucleus_load, "expected tasks"),
                                className="small text-muted load-total",
                            ),
                        ],
                        xs=12,
                        xxl=5,
                    ),
                ],
                className="g-2",
            ),
            html.Div(f"Tasks whose brokerage moved ({len(rows)} shown)", className="small fw-semibold mt-1"),
            grid(rows, cols, height=320, export_name="whatif_tasks.csv", url_param="i")
            if rows
            else empty_state("No task moved", "Every waiting task keeps its top candidate, its top 10 and its status."),
        ]
    )


def grid_starting(overrides: Mapping[str, Any]) -> html.Div:
    """What the grid card shows when the page opens with edits, until their whole-grid job answers."""
    edits = ", ".join(f"{k}={v}" for k, v in sorted(overrides.items()))
    return html.Div(f"Starting the whole-grid run under {edits}…", id="tune-grid-waiting",
                    className="alert alert-info py-1 mb-0 small")  # fmt: skip


def grid_placeholder() -> html.Div:
    """What the grid card shows before any edit."""
    return empty_state(
        "No edits yet",
        "Change a parameter: the card then counts the waiting tasks whose top candidate, top 10 or pending status "
        "changes, and charts how the expected load moves between queues and nuclei.",
    )
