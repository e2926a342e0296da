"""Issue #33 item 8: the stuck tasks' reason column says what ready and running tasks wait for."""

from __future__ import annotations

from typing import Any

import pandas as pd

from app.viewmodels import state_diagram as sdv


def test_placed_sentence_names_the_wait_and_the_queues() -> None:
    """A ready task whose brokerage ranked queues waits for JobGenerator; the sentence names its best queues."""
    text = sdv.placed_sentence("ready", ["A", "B", "C", "D"])
    assert text == "ready: waits for JobGenerator to make its next jobs, within the job throttler's limits of its " \
                   "work queue; its next jobs go to A, B, C … (4 queues ranked)"  # fmt: skip
    assert sdv.placed_sentence("running", ["A"]).startswith("running: its jobs are queued or running")


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
    assert reasons[1].startswith("ready: waits for JobGenerator") and "its next jobs go to CERN-PROD_Q8" in reasons[1]
    assert reasons[3].startswith("all queues skipped")
