"""Issue #33 item 8: the stuck tasks' reason column says what ready and running tasks wait for."""

from __future__ import annotations

from typing import Any

import pandas as pd

from app.viewmodels import state_diagram as sdv


def test_placed_sentence_names_the_wait_and_the_queues() -> None:
    """A ready task whose brokerage ranked queues waits for JobGenerator; the sentence names its best queues."""
    text = sdv.placed_sentence("ready", ["A", "B", "C", "D"])
    assert text == "ready: its next jobs go to A, B, C … (4 queues ranked); waits for JobGenerator to make its " \
                   "next jobs, within the job throttler's limits of its work queue"  # fmt: skip
    assert sdv.placed_sentence("running", ["A"]).endswith(
        "its jobs are queued or running at the queues its brokerage chose"
    )


def test_every_live_status_has_a_reason() -> None:
    """A ready or running task with no brokerage reason still gets its status' sentence, never an empty cell."""
    tasks = pd.DataFrame({"jeditaskid": [1, 2], "status": ["ready", "running"], "prodsourcelabel": ["managed"] * 2,
                          "gshare": ["MC"] * 2, "taskname": ["a", "b"]})  # fmt: skip
    rows = sdv.stuck_rows(tasks, pd.DataFrame(), {})
    assert all(r["reason"] for r in rows)


def test_stuck_reasons_name_where_ready_tasks_jobs_go(app_client: Any) -> None:
    """On the sample grid, ready task 1 (ranked, top CERN-PROD_Q8) gets the JobGenerator sentence with its queues;
    pending task 3 keeps the brokerage's reason."""
    from app.callbacks.tasks import _reasons
    from app.main import services

    services.whatif.base_run()  # the stored config's grid run, which the reasons are read from
    reasons = _reasons()
    assert reasons is not None
    assert reasons[1].startswith("ready: its next jobs go to CERN-PROD_Q8") and "waits for JobGenerator" in reasons[1]
    assert reasons[3].startswith("all queues skipped")


def test_diagram_dims_or_hides_the_empty_states() -> None:
    """A status with no task now and no transition is dimmed, or left out when asked; the others stay, and each
    arrow's count is in its hover text."""
    past = pd.DataFrame({"source": ["defined"], "target": ["ready"], "n": [3]})
    counts = {"ready": 3, "running": 1}
    none = pd.DataFrame({"source": [], "target": [], "n": []})
    dimmed = _nodes(sdv.diagram(past, none, counts, "t"))
    names = [t.split("<br>")[0] for t in dimmed.text]
    colors = dict(zip(names, dimmed.textfont.color, strict=True))
    assert colors["paused"] == "#9ca3af" and colors["ready"] == "#1f2937" and colors["defined"] == "#1f2937"
    fig = sdv.diagram(past, none, counts, "t", hide_empty=True)
    assert sorted(t.split("<br>")[0] for t in _nodes(fig).text) == ["defined", "ready", "running"]
    hovers = [t.hovertext[0] for t in fig.data if t.mode == "markers" and t.hovertext is not None]
    assert hovers == ["defined → ready: 3 logged"]


def _nodes(fig: Any) -> Any:
    """The diagram's node trace (markers with their labels)."""
    return next(t for t in fig.data if t.mode == "markers+text")
