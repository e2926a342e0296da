"""DIRAC callbacks: a pilot or an edit re-matches at once; the URL follows (permalink)."""

from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
from dash import ALL, Input, Output, State, callback, clientside_callback, ctx, html
from dash.exceptions import PreventUpdate

from app import ids_dirac as ids
from app.components.guard import guarded
from app.components.layout import card, figure, grid
from app.main import services
from app.viewmodels import dirac as vm
from brokerage.dirac.pilot import PilotError
from brokerage.model.gdpconfig import ConfigError

COLUMNS = ["id", "verdict", "probability", "Priority", "jobs", "CPUTime", "Owner", "OwnerGroup", "rules", "why",
           *vm.SETS]  # fmt: skip


@callback(Output(ids.DIRAC_PILOT, "value"), Input(ids.DIRAC_CE, "value"), prevent_initial_call=True)
def pilot_from_site(pilot: str | None) -> str:
    """Picking a CE fills the pilot with what a pilot there sends."""
    if not pilot:
        raise PreventUpdate
    return pilot


@callback(
    Output(ids.DIRAC_BUCKETS, "value"),
    Input(ids.DIRAC_BUCKETS_SEED, "n_clicks"),
    Input(ids.DIRAC_BUCKETS_CODE, "n_clicks"),
    State(ids.DIRAC_BUCKETS_SEED, "value"),
    State(ids.DIRAC_BUCKETS_CODE, "value"),
    prevent_initial_call=True,
)
def bucket_preset(_a: Any, _b: Any, seed_buckets: str, code_buckets: str) -> str:
    """The seed's four buckets or DIRAC's thirteen, one click away."""
    return seed_buckets if ctx.triggered_id == ids.DIRAC_BUCKETS_SEED else code_buckets


def _verdict_style() -> dict[str, Any]:
    return {"styleConditions": [
        {"condition": f"params.value === '{v}'", "style": {"color": c, "fontWeight": "600"}}
        for v, c in vm.VERDICT_COLOURS.items()
    ]}  # fmt: skip


@callback(
    Output(ids.DIRAC_CONTENT, "children"),
    Output(ids.DIRAC_URL_SINK, "data"),
    Input(ids.DIRAC_PILOT, "value"),
    Input(ids.DIRAC_SEED, "value"),
    Input(ids.DIRAC_BUCKETS, "value"),
    Input(ids.DIRAC_CPU_ORDER, "value"),
    Input(ids.DIRAC_PER_TRY, "value"),
    Input(ids.DIRAC_JOB_WEIGHT, "value"),
    Input({"type": ids.DIRAC_SHARE, "group": ALL}, "value"),
    State({"type": ids.DIRAC_SHARE, "group": ALL}, "id"),
)
def rematch(pilot: str | None, seed: Any, buckets: str | None, cpu_order: bool | None, per_try: Any,
            job_weight: str | None, share_values: list[Any], share_ids: list[dict[str, str]]) -> tuple[Any, str]:  # fmt: skip
    """Match the pilot under the edited buckets, switches and shares; say what is wrong with a bad edit."""
    base = services.state.config()
    shares_table = services.state.snapshot().tables["dirac_group_shares"]
    table = {r["group"]: r["share"] for r in vm.group_share_rows(shares_table, base)}
    shares = {i["group"]: v for i, v in zip(share_ids, share_values, strict=True)
              if v is not None and float(v) != table.get(i["group"])}  # fmt: skip
    overrides, problems = vm.edits(buckets, cpu_order, per_try, job_weight, shares, base)
    seed_value = int(seed) if isinstance(seed, (int, float)) else 0
    link = vm.permalink(pilot, seed_value, overrides)
    return _content(pilot or "", seed_value, overrides, problems), link


@guarded("DIRAC matching")
def _content(pilot: str, seed: int, overrides: dict[str, Any], problems: list[str]) -> Any:
    alerts = [dbc.Alert(p, color="danger", className="py-1 small mb-2") for p in problems]
    try:
        result = services.dirac.run_match(pilot, overrides, seed)
    except (PilotError, ConfigError) as exc:  # the pilot or an edit refused: its own sentence, naming the field
        return html.Div([*alerts, dbc.Alert(exc.line(), color="danger", className="py-1 small")])
    out = result.to_dict()
    tqs = result.tqs
    rows = vm.tq_rows(out, [tqs.definition(i) for i in range(len(tqs))])
    cols = [{"field": c} for c in COLUMNS]
    cols[1]["cellStyle"] = _verdict_style()
    cols[0]["pinned"] = "left"
    cols[COLUMNS.index("why")]["minWidth"] = 360
    cols[COLUMNS.index("rules")]["minWidth"] = 140
    funnel = [
        html.Li(f"{f['filter']}: {f['before']} → {f['after']}") for f in out["funnel"] if f["before"] != f["after"]
    ]
    counts = vm.rule_counts(out)
    failing = html.Ul([html.Li(f"{rule}: {n} task queues") for rule, n in counts.items()], className="small mb-0")
    matched = out["matched"]
    job = (html.Div([html.Div(f"job {matched['job']} from the {len(matched['candidates'][str(matched['job_priority'])])} "
                              f"lowest JobIDs of user priority {matched['job_priority']}", className="small"),
                     html.Ul([html.Li(f"priority {p['priority']}: {p['jobs']} jobs, chance {p['probability']:.4f}")
                              for p in matched["priorities"]], className="small mb-0")])
           if matched else html.Div("no job", className="small"))  # fmt: skip
    return html.Div(
        [
            *alerts,
            dbc.Alert(vm.summary(out), color="success" if matched else "secondary", className="py-1 mb-2",
                      id="dirac-summary"),
            dbc.Row([
                dbc.Col(card("Chance of each task queue that can be drawn", figure(vm.probability_figure(out))), md=6),
                dbc.Col(card("Funnel (first failing rule)", html.Ul(funnel, className="small mb-0")), md=2),
                dbc.Col(card("Every failing rule", failing), md=2),
                dbc.Col(card("Job inside the queue", job), md=2),
            ], className="g-2"),
            card(f"Task queues: {len(rows)} ({int(tqs.njobs.sum())} waiting jobs, buckets {list(tqs.buckets)} s)",
                 grid(rows, cols, id_="dirac-grid", height=420, export_name="dirac_taskqueues.csv", row_id="id", url_param="d")),
        ]
    )  # fmt: skip


clientside_callback(
    """function(link) {
        const kept = link && window.gridUrlState ? window.gridUrlState.keep(link) : link;  // the tables' filters stay
        if (kept && window.location.pathname + window.location.search !== kept) {
            window.history.replaceState(window.history.state, "", kept);
        }
        return link || "";
    }""",
    Output(ids.DIRAC_URL_DONE, "data"),
    Input(ids.DIRAC_URL_SINK, "data"),
)
