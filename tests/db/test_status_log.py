"""TASK_STATUS_LOG in the database: only allowed transitions are appended, and the task follows its log."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from brokerage.model.snapshot import GridSnapshot
from brokerage.sim.task_states import TransitionError
from brokerage.store import errors, repository
from tests.db.helpers import edge_grid


@pytest.fixture
def stored(engine: Any) -> Any:
    """The edge grid stored: task 7 is running, task 8 is defined (both with simulated histories)."""
    repository.save_snapshot(engine, edge_grid())
    return engine


def _last_time(engine: Any, tid: int) -> Any:
    return repository.task_history(engine, tid)[-1][1]


def test_allowed_status_is_appended_and_becomes_the_task_status(stored: Any) -> None:
    """An allowed next status is logged, set on JEDI_TASKS and bumps the grid version."""
    before = repository.snapshot_key(stored)
    when = _last_time(stored, 7) + timedelta(hours=3)
    repository.append_status(stored, 7, "prepared", when)
    history = repository.task_history(stored, 7)
    assert history[-1] == ("prepared", when)
    snap = repository.load_snapshot(stored)
    task = snap.tables["tasks"].set_index("jeditaskid").loc[7]
    assert task["status"] == "prepared" and task["modificationtime"] == when
    assert repository.snapshot_key(stored) != before


def test_illegal_status_is_refused_with_both_statuses_named(stored: Any) -> None:
    """A status that may not follow the last logged one is refused, naming both and the allowed next statuses."""
    before = repository.table_contents(stored)
    with pytest.raises(TransitionError) as err:
        repository.append_status(stored, 8, "done", _last_time(stored, 8) + timedelta(minutes=5))
    text = str(err.value)
    assert "'defined' cannot change to 'done'" in text and "allowed next statuses" in text and "assigning" in text
    assert repository.table_contents(stored) == before


def test_unknown_status_is_refused(stored: Any) -> None:
    """A status JEDI does not know is refused."""
    with pytest.raises(TransitionError, match="unknown task status 'merging'"):
        repository.append_status(stored, 8, "merging", _last_time(stored, 8) + timedelta(minutes=5))


def test_first_entry_must_be_registered(engine: Any) -> None:
    """A task without log entries can only start its log with registered."""
    snap = edge_grid()
    empty_log = snap.tables["task_status_log"].iloc[0:0]
    tasks = snap.tables["tasks"].copy()
    repository.save_snapshot(engine, GridSnapshot({**snap.tables, "task_status_log": empty_log, "tasks": tasks},
                                                  snap.taken_at, "nolog", 0))  # fmt: skip
    with pytest.raises(TransitionError, match="must start as 'registered'"):
        repository.append_status(engine, 7, "running", snap.taken_at)
    repository.append_status(engine, 7, "registered", snap.taken_at)
    assert [s for s, _ in repository.task_history(engine, 7)] == ["registered"]


def test_time_may_not_go_backwards(stored: Any) -> None:
    """An entry older than the task's last entry is refused."""
    with pytest.raises(TransitionError, match="earlier than the last entry"):
        repository.append_status(stored, 7, "prepared", _last_time(stored, 7) - timedelta(seconds=1))


def test_resume_returns_to_the_paused_in_status(stored: Any) -> None:
    """After paused, only the status the task was paused in may follow (besides kill and finish commands)."""
    t0 = _last_time(stored, 7)
    repository.append_status(stored, 7, "paused", t0 + timedelta(minutes=1))
    with pytest.raises(TransitionError, match="returns to 'running'"):
        repository.append_status(stored, 7, "ready", t0 + timedelta(minutes=2))
    repository.append_status(stored, 7, "running", t0 + timedelta(minutes=2))
    assert [s for s, _ in repository.task_history(stored, 7)][-3:] == ["running", "paused", "running"]


def test_unknown_task_is_refused(stored: Any) -> None:
    """Appending to a task that is not in JEDI_TASKS is an error naming the task id."""
    with pytest.raises(errors.StoreError, match="unknown task 999"):
        repository.append_status(stored, 999, "registered", edge_grid().taken_at)


def test_stored_log_is_consistent_with_tasks(stored: Any) -> None:
    """The stored log of every task starts at registered and ends at the task's current status."""
    from brokerage.sim.status_log import log_problems

    snap = repository.load_snapshot(stored)
    assert log_problems(snap.tables["task_status_log"], snap.tables["tasks"]) == []
