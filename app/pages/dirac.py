"""DIRAC page: task queues, a pilot's match with every queue's chance, and why not for every other queue."""

from __future__ import annotations

import json
from typing import Any

import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids_dirac as ids
from app.components.guard import guarded
from app.components.layout import loading, page_header, url_notice
from app.main import services
from app.viewmodels import dirac as vm

dash.register_page(__name__, path=vm.PATH, title="DIRAC · PanDA brokerage", name="DIRAC")


def _field(label: str, control: Any, width: int) -> dbc.Col:
    return dbc.Col([html.Label(label, className="small mb-0"), control], md=width)


@guarded("DIRAC page")
def layout(pilot: str | None = None, seed: str | None = None, **query: Any) -> html.Div:
    """Pilot form (or a pilot from a site) and editors of the buckets, selection switches and group shares."""
    overrides, problems = vm.overrides_from_query(query)
    config = services.state.effective_config(overrides)
    snap = services.state.snapshot()
    try:
        seed_value = int(seed) if seed else 0
    except ValueError:
        problems.append(f"seed: {seed!r} is not an integer; using 0")
        seed_value = 0
    shares = vm.group_share_rows(snap.tables["dirac_group_shares"], config)
    presets = vm.bucket_presets()
    return html.Div(
        [
            page_header(
                "DIRAC task-queue matching",
                "Waiting jobs grouped into task queues by exactly equal requirements (CPU time rounded up to a "
                "bucket); a pilot is matched against every queue: every failing rule is listed, the queues that "
                "pass are drawn by RAND()/Priority (the seed keeps the highest CPU bucket first).",
            ),
            *[url_notice(p) for p in problems],
            dbc.Row(
                [
                    _field("pilot from a site", dcc.Dropdown(id=ids.DIRAC_CE, options=vm.ce_options(
                        snap.tables["dirac_ces"]), placeholder="pick a CE to fill the pilot"), 4),
                    _field("pilot (Field=value, lists a;b)", dcc.Input(id=ids.DIRAC_PILOT, value=pilot or vm.DEFAULT_PILOT,
                           debounce=True, className="form-control form-control-sm"), 6),
                    _field("seed", dcc.Input(id=ids.DIRAC_SEED, type="number", value=seed_value, min=0, step=1,
                           debounce=True, className="form-control form-control-sm"), 2),
                ],
                className="g-2 mb-2",
            ),
            dbc.Row(
                [
                    _field("CPU buckets, s (DIRAC_CPU_BUCKETS)", html.Div([
                        dcc.Input(id=ids.DIRAC_BUCKETS, value=json.dumps(config["DIRAC_CPU_BUCKETS"]), debounce=True,
                                  className="form-control form-control-sm"),
                        dbc.Button("seed buckets", id=ids.DIRAC_BUCKETS_SEED, size="sm", color="link",
                                   value=presets["seed buckets"]),
                        dbc.Button("DIRAC's 13 buckets", id=ids.DIRAC_BUCKETS_CODE, size="sm", color="link",
                                   value=presets["DIRAC's 13 buckets"]),
                    ]), 5),
                    _field("seed's CPU ordering", dbc.Switch(id=ids.DIRAC_CPU_ORDER, value=bool(config["DIRAC_CPU_ORDER"])), 2),
                    _field("jobs per try", dcc.Input(id=ids.DIRAC_PER_TRY, type="number", min=1, step=1,
                           value=config["DIRAC_JOBS_PER_TRY"], debounce=True, className="form-control form-control-sm"), 2),
                    _field("job weight", dcc.Dropdown(id=ids.DIRAC_JOB_WEIGHT, options=["UserPriority", "RealPriority"],
                           value=config["DIRAC_JOB_WEIGHT"], clearable=False), 3),
                ],
                className="g-2 mb-2",
            ),
            dbc.Row(
                [
                    _field(f"{r['group']} JobShare{' (JobSharing)' if r['JobSharing'] else ''}",
                           dcc.Input(id={"type": ids.DIRAC_SHARE, "group": r["group"]}, type="number", min=0,
                                     value=r["share"], debounce=True, className="form-control form-control-sm"), 2)
                    for r in shares
                ],
                className="g-2 mb-2",
            ),
            loading(html.Div(id=ids.DIRAC_CONTENT)),
            dcc.Store(id=ids.DIRAC_URL_SINK),
            dcc.Store(id=ids.DIRAC_URL_DONE),
        ]
    )  # fmt: skip
