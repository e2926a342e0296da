"""Tuning after save or restore: the task stays, restore is confirmed with a comment, diffs show defaults."""

from __future__ import annotations

import json

from tests.app.test_tuning import db_app  # noqa: F401  the fixture: the app on a fresh SQLite database


def _text(tree) -> str:
    return json.dumps(
        tree.to_plotly_json(), default=lambda o: o.to_plotly_json() if hasattr(o, "to_plotly_json") else str(o)
    )


def test_diff_and_history_name_the_default_instead_of_unset() -> None:
    """A key a version leaves unset reads as its default, e.g. "150 (default) → 300"."""
    from app.viewmodels import history as hvm

    assert hvm.diff_rows({"NQUEUED_SAT_CAP": (None, 300)}) == [
        {"key": "NQUEUED_SAT_CAP", "a": "150 (default)", "b": "300"}
    ]
    assert hvm._change_text("NQUEUED_SAT_CAP", None, "300") == "NQUEUED_SAT_CAP: 150 (default) → 300"


def test_save_and_restore_come_back_to_the_same_task() -> None:
    """The redirect after a save or restore keeps the task the operator was looking at."""
    from app.callbacks.tuning import keep_task

    assert keep_task("/tuning?restored=2", 7) == "/tuning?restored=2&task=7"
    assert keep_task("/tuning?saved=1", None) == "/tuning?saved=1" and keep_task(None, 7) is None


def test_restore_records_the_operators_comment_once(db_app) -> None:  # noqa: F811
    """A restore's history line is "restore version 0: <comment>", never the version repeated as its own comment."""
    from app.callbacks.tuning import on_restore_comment, restore, save_edits
    from brokerage.store.config_store import history

    save_edits({"NQUEUED_SAT_CAP": 300}, "alice", "s3cret", "more queued files", 0)
    assert on_restore_comment("  ") is True and on_restore_comment("undo") is False
    restore(0, "alice", "s3cret", "back to the defaults after the test")
    assert history(db_app)[0].comment == "restore version 0: back to the defaults after the test"
