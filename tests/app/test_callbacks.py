"""Callbacks called directly as plain functions return the right trees, and failures render inline."""

from __future__ import annotations

import json

import plotly.io as pio
import pytest
from dash.exceptions import PreventUpdate


def _text(tree) -> str:
    return json.dumps(
        tree.to_plotly_json(),
        ensure_ascii=False,
        default=lambda o: o.to_plotly_json() if hasattr(o, "to_plotly_json") else str(o),
    )


def test_decision_callback_fills_the_panel(app_client) -> None:
    """The queues decision callback returns headline, ranked rows and criteria-filtered skips for a task; the figures
    callback its funnel and weight-factor charts."""
    from app.callbacks.queues import DECISION_OUTPUTS, update_decision, update_decision_figures

    out = update_decision(2, ["-cpucore"])
    assert len(out) == len(DECISION_OUTPUTS)
    head, ranked, _cols, _notes, skipped, title = out
    assert "pending" in _text(head)
    assert ranked == [] and title == "Skipped queues (criteria -cpucore): 6"
    assert {r["criteria"] for r in skipped} == {"-cpucore"}
    ok = update_decision(1, None)
    assert ok[1][0]["rank"] == 1 and ok[2][1]["field"] == "queue"
    funnel, factors = update_decision_figures([], 1)
    assert funnel["data"][0]["type"] == "funnel" and factors["data"][0]["name"] == "weight"
    assert update_decision_figures([], None) == ({}, {}) and update_decision_figures([], 12345) == ({}, {})


def test_decision_callback_empty_and_error_states(app_client) -> None:
    """No task gives an explaining empty state; an unknown task gives an inline alert, not a traceback."""
    from app.callbacks.queues import update_decision

    assert "No task picked" in _text(update_decision(None, None)[0])
    err = _text(update_decision(12345, None)[0])
    assert "Job brokerage: " in err and "unknown task 12345" in err and "Traceback" not in err and "KeyError" not in err


def test_export_needs_a_click(app_client) -> None:
    """CSV export fires only on a click."""
    from app.callbacks.queues import on_export

    assert on_export(1) is True
    with pytest.raises(PreventUpdate):
        on_export(None)


def test_criteria_options_callback(app_client) -> None:
    """Criteria options list the task's codes; an unknown task gives none."""
    from app.callbacks.queues import update_criteria_options

    assert {o["value"] for o in update_criteria_options(2)} == {"-status", "-link_unusable", "-cpucore", "-lowmemory"}
    assert update_criteria_options("x") == []


def test_network_callbacks(app_client) -> None:
    """The heatmap callback returns a figure and a cell click shows the link panel."""
    from app.callbacks.network import update_detail, update_heatmap

    fig = update_heatmap("closeness")
    assert pio.to_json(fig)
    out = _text(update_detail({"points": [{"x": "BNL-ATLAS", "y": "AGLT2"}]}, "weight"))
    assert "AGLT2 → BNL-ATLAS" in out and "BLOCKED" in out
    assert "No link picked" in _text(update_detail(None, "weight"))


def test_stabilizer_tasks_overview_nuclei_callbacks(app_client) -> None:
    """The remaining page callbacks render without error alerts."""
    from app.callbacks.nuclei import update_nucleus_decision
    from app.callbacks.overview import census_view
    from app.callbacks.stabilizer import update_stabilizer
    from app.callbacks.tasks import update_tasks

    for out in (update_stabilizer("alice", None), update_tasks("all", None), census_view(), update_nucleus_decision(1)):
        assert "failed:" not in _text(out)
    assert "waiting tasks analysed" in _text(census_view())


def test_task_search_callback(app_client) -> None:
    """Typing in the task picker returns matching options; an empty search changes nothing."""
    from app.callbacks.queues import search_task_options

    assert [o["value"] for o in search_task_options("fourth", 1)] == [4, 1]
    with pytest.raises(PreventUpdate):
        search_task_options("", 1)
