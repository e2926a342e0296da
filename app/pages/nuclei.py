"""Nuclei page: every nucleus with storage, work and backlog, and a task's nucleus brokerage."""

from __future__ import annotations

from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids
from app.components.guard import guarded
from app.components.layout import card, figure, grid, loading, page_header, url_notice
from app.components.levers import levers_panel
from app.ids_levers import NUCLEI_LEVERS
from app.main import state
from app.viewmodels import nuclei as vm
from app.viewmodels import queues as qvm

dash.register_page(__name__, path="/nuclei", title="Nuclei · PanDA brokerage", name="Nuclei")


@guarded("Nuclei page")
def layout(task: str | None = None, **_: Any) -> html.Div:
    """Nucleus table and storage chart; task picker for task brokerage (?task= preselects)."""
    snap = state.snapshot()
    cfg = state.config()
    rows = vm.nucleus_rows(state.grid_cache(), cfg)
    cols = [{"field": k} for k in (rows[0] if rows else [])]
    for c in cols:
        if c["field"] == "nucleus":
            c.update(minWidth=160, pinned="left")
        if c["field"] in ("below_threshold", "backlogged"):
            # a flag reads as a red "yes", not as a grey checkbox
            c.update(cellDataType=False, maxWidth=150,
                     valueFormatter={"function": "params.value ? 'yes' : ''"})  # fmt: skip
            c["cellStyle"] = {
                "styleConditions": [
                    {"condition": "params.value === true", "style": {"color": "#dc2626", "fontWeight": "600"}}
                ]
            }
    picked, problem = qvm.url_task(snap, task)
    also = qvm.showcase_candidates(snap, stage="nucleus") if picked is None else []
    return html.Div(
        [
            page_header("Nuclei", f"Nuclei collect task output. Storage below DISK_THRESHOLD ({cfg['DISK_THRESHOLD']} TB) or more than NQUEUED_NUC_CAP ({cfg['NQUEUED_NUC_CAP']}) files queued in is flagged red."),
            dbc.Row([dbc.Col(card("Storage", figure(vm.storage_figure(rows, float(cfg["DISK_THRESHOLD"])))), xs=12, xxl=5),
                     dbc.Col(card(f"Nuclei ({len(rows)})", grid(rows, cols, height=380, export_name="nuclei.csv", url_param="n")), xs=12, xxl=7)], className="g-2"),
            card("Task brokerage of a task (which nucleus gets its output)",
                 [url_notice(problem), html.Div([html.Div([html.Label("task"), dcc.Dropdown(id=ids.NUCLEI_TASK, options=qvm.picker_options(snap, picked, also=also), value=picked, clearable=False)],
                                     style={"minWidth": "520px"})], className="controls"),
                  levers_panel(NUCLEI_LEVERS, "nucleus"),
                  loading(html.Div(id=ids.NUCLEI_DECISION))]),
            dcc.Store(id=ids.NUCLEI_URL_SINK),
            dcc.Store(id=ids.NUCLEI_PICK, data=picked),
        ]
    )  # fmt: skip
