"""Issue #33 item 11: queued work is visible: the grid card names the edits and the job's place in the queue while
it waits, instead of "No edits yet" or the last answer."""

from __future__ import annotations

from typing import Any

from app.services.jobs import JobState


def _text(tree: Any) -> str:
    if isinstance(tree, str | int | float):
        return str(tree)
    kids = getattr(tree, "children", None)
    if kids is None:
        return ""
    return " ".join(_text(k) for k in (kids if isinstance(kids, list) else [kids]))


def test_a_waiting_grid_job_shows_its_place_outside_the_bar(app_client: Any) -> None:
    """A whole-grid what-if queued behind another long job shows "queued: 1 long job ahead" with its edit in the card
    itself (the bar is empty then); once it works, the card shows its progress; no edits keep the placeholder."""
    from app.callbacks.tuning import job_outputs

    queued = JobState("running", 0, "queued: 1 long job ahead")
    view, job, disabled, _box, pct, _label = job_outputs("j1", queued, {"NQUEUED_SAT_CAP": 300})
    text = _text(view)
    assert "queued: 1 long job ahead" in text and "NQUEUED_SAT_CAP=300" in text and "Waiting its turn" in text
    assert "No edits yet" not in text and job == "j1" and disabled is False and pct == 0
    working = _text(job_outputs("j1", JobState("running", 40, "brokering"), {"NQUEUED_SAT_CAP": 300})[0])
    assert "Re-brokering every waiting task (40 %)" in working
