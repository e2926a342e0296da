"""Levers boxes: the clicked candidate's levers, each gdpconfig lever a link to the tuning page with its edit."""

from __future__ import annotations

import json
from typing import Any

from app.viewmodels import levers as vm


def _text(tree: Any) -> str:
    return json.dumps(
        tree.to_plotly_json(),
        default=lambda o: o.to_plotly_json() if hasattr(o, "to_plotly_json") else str(o),
        ensure_ascii=False,
    )


def test_tuning_href_keeps_the_edits_and_adds_the_lever() -> None:
    """The link carries the task, the operator's edits and the lever's KEY=VALUE (booleans as the page reads them)."""
    assert vm.tuning_href(7, {"NW_ACTIVE": False}, "NQUEUED_SAT_CAP", 151) == (
        "/tuning?task=7&NW_ACTIVE=false&NQUEUED_SAT_CAP=151"
    )


def test_memory_levers_of_a_skipped_queue(app_client: Any) -> None:
    """Task 1 on the sample grid: MWT2_Q7 is removed by -lowmemory; its levers are MEMORY_COMPENSATION (a tuning link)
    and maxrss (an input of the grid, no link), with the versions named."""
    from app.callbacks.levers import levers_box

    app_client.get("/")
    view = _text(levers_box(1, "MWT2_Q7", "queue"))
    assert "Levers for MWT2_Q7" in view and "memory check (-lowmemory)" in view
    assert "/tuning?task=1&MEMORY_COMPENSATION=0.5" in view
    assert "queues.maxrss of MWT2_Q7 = 1800" in view and "not a gdpconfig edit" in view
    assert "grid test@0 · gdpconfig defaults" in view


def test_levers_under_tuning_edits_and_errors(app_client: Any) -> None:
    """On the tuning page the levers are found under the edits (what-if on the stored version) and the links keep
    them; an unknown queue is named inline; no task or queue gives the hint."""
    from app.callbacks.levers import levers_box

    app_client.get("/")
    view = _text(levers_box(1, "MWT2_Q7", "queue", {"NQUEUED_SAT_CAP": 300}))
    assert "what-if on defaults (NQUEUED_SAT_CAP=300)" in view
    assert "/tuning?task=1&NQUEUED_SAT_CAP=300&MEMORY_COMPENSATION=0.5" in view
    assert "unknown queue 'NOPE'" in _text(levers_box(1, "NOPE", "queue"))
    assert "Click a queue" in _text(levers_box(None, None, "queue"))


def test_nucleus_levers_box(app_client: Any) -> None:
    """A nucleus of the sample grid ranked second for task 4 gets its standing sentence (rank and weight)."""
    from app.callbacks.levers import levers_box

    app_client.get("/")
    view = _text(levers_box(4, "CERN-PROD", "nucleus"))
    assert "Levers for CERN-PROD" in view and "is ranked 2" in view
