"""Nuclei callbacks: the explained task-to-nucleus brokerage of the picked task."""

from __future__ import annotations

from typing import Any

import dash_bootstrap_components as dbc
from dash import Input, Output, callback, html

from app import ids
from app.callbacks.urlstate import url_sync
from app.components.decision import headline, ranked_grid, skipped_grid
from app.components.guard import guarded
from app.components.layout import card, empty_state, figure
from app.ids_levers import LEVERS_GRID
from app.main import services
from app.viewmodels import nuclei as vm
from app.viewmodels import queues as qvm
from brokerage.model.explain import Decision


def nucleus_view(decision: Decision) -> html.Div:
    """Headline, probabilities, funnel, ranked nuclei with factors and skipped nuclei with sentences."""
    return html.Div(
        [
            headline(decision, "nuclei"),
            html.Div(vm.draw_sentence(decision), className="draw-headline fw-semibold mb-1", id="nuclei-drawn")
            if vm.draw_sentence(decision)
            else None,
            dbc.Row(
                [
                    dbc.Col(figure(vm.probability_figure(decision)), md=6),
                    dbc.Col(figure(qvm.funnel_figure(decision)), md=6),
                ]
            ),
            dbc.Row([dbc.Col(figure(qvm.factor_figure(decision)), md=12)]) if decision.candidates else None,
            card(
                "Kept nuclei",
                ranked_grid(decision, "/network?nucleus=", {"type": LEVERS_GRID, "table": "ranked"}, url_param="nr"),
            ),
            card(
                f"Skipped nuclei: {len(decision.skipped)}",
                skipped_grid(
                    decision,
                    qvm.skipped_rows(decision),
                    "/network?nucleus=",
                    {"type": LEVERS_GRID, "table": "skipped"},
                    url_param="nk",
                ),
            ),
        ]
    )


@callback(Output(ids.NUCLEI_TASK, "value"), Input(ids.NUCLEI_PICK, "data"))
def pick_default_task(picked: int | None) -> int | None:
    """The task of the URL; when it names none (first load), a task whose nucleus ranking has a few candidates."""
    return picked if picked is not None else services.whatif.showcase_task("nucleus")


@callback(Output(ids.NUCLEI_DECISION, "children"), Input(ids.NUCLEI_TASK, "value"))
@guarded("Task brokerage")
def update_nucleus_decision(task: Any) -> Any:
    """Run (memoised) task brokerage for the picked task."""
    tid = qvm.parse_task(task)
    if tid is None:
        return empty_state("No task picked", "Choose a task above.")
    return nucleus_view(services.state.nucleus_decision(tid))


url_sync(ids.NUCLEI_URL_SINK, {"task": (ids.NUCLEI_TASK, "value")})
