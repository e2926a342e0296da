"""Task histories made by the simulator: only allowed transitions, consistent with the tasks table, simulated timing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd
import pytest

from brokerage.sim.status_log import log_problems
from brokerage.sim.task_states import ALLOWED_PAIRS, TASK_STATUSES, TransitionError, history_problems
from brokerage.synth import history
from brokerage.synth.history import lab_paths, simulate_task_history

TAKEN_AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _tasks(n: int = 3000) -> pd.DataFrame:
    """N tasks cycling through every JEDI status, a third of them analysis tasks."""
    return pd.DataFrame(
        {
            "jeditaskid": np.arange(1, n + 1, dtype=np.int64) * 7,
            "status": [TASK_STATUSES[i % len(TASK_STATUSES)] for i in range(n)],
            "prodsourcelabel": ["user" if i % 3 == 0 else "managed" for i in range(n)],
        }
    )


@pytest.fixture(scope="module")
def tasks() -> pd.DataFrame:
    return _tasks()


@pytest.fixture(scope="module")
def log(tasks: pd.DataFrame) -> pd.DataFrame:
    return simulate_task_history(tasks, TAKEN_AT, seed=11)


def test_every_consecutive_pair_is_allowed(log: pd.DataFrame) -> None:
    """Within each task, every status follows the previous one by an allowed transition, starting at registered."""
    prev = log.groupby("jeditaskid", sort=False)["status"].shift(1)
    pairs = zip(prev.where(prev.notna(), None), log["status"], strict=True)
    assert all(pair in ALLOWED_PAIRS for pair in pairs)
    for _, group in log.groupby("jeditaskid", sort=False):
        assert history_problems(group["status"].tolist()) == []


def test_last_status_equals_the_task_status(tasks: pd.DataFrame, log: pd.DataFrame) -> None:
    """Each task's last logged status is its current status in the tasks table, and every task has a log."""
    last = log.groupby("jeditaskid", sort=False)["status"].last()
    assert last.index.tolist() == tasks["jeditaskid"].tolist()
    assert last.tolist() == tasks["status"].tolist()
    assert log_problems(log, tasks) == []


def test_times_increase_and_stay_before_the_snapshot(log: pd.DataFrame) -> None:
    """Entries of a task are strictly increasing in time, none after taken_at, none older than the window."""
    t = log["modificationtime"]
    assert t.max() <= pd.Timestamp(TAKEN_AT)
    assert t.min() >= pd.Timestamp(TAKEN_AT - timedelta(days=21))
    assert (log.groupby("jeditaskid", sort=False)["modificationtime"].diff().dropna() > pd.Timedelta(0)).all()


def test_columns_match_the_snapshot_table(log: pd.DataFrame) -> None:
    """The result has exactly the task_status_log columns with the snapshot's dtypes."""
    assert list(log.columns) == ["jeditaskid", "status", "modificationtime"]
    assert log["jeditaskid"].dtype == np.int64 and log["status"].dtype == object
    assert str(log["modificationtime"].dtype) == "datetime64[us, UTC]"


def test_the_same_seed_gives_the_same_history(tasks: pd.DataFrame, log: pd.DataFrame) -> None:
    """The history is deterministic for a seed and differs for another seed."""
    pd.testing.assert_frame_equal(simulate_task_history(tasks, TAKEN_AT, seed=11), log)
    assert not simulate_task_history(tasks, TAKEN_AT, seed=12).equals(log)


def test_dwell_times_come_from_the_simulator(log: pd.DataFrame) -> None:
    """registered lasts minutes (TaskRefiner), assigning about the TaskBroker's 30 min wait, scouting as long as
    its scout jobs ran, and no status lasted longer than the lab ran (medians of the log)."""
    nxt = log.groupby("jeditaskid", sort=False)["modificationtime"].shift(-1)
    dwell = (nxt - log["modificationtime"]).dt.total_seconds() / 3600
    med = dwell.groupby(log["status"]).median()
    assert med["registered"] <= history.REFINE_S[1] / 3600
    assert 0.4 <= med["assigning"] <= 1.0
    assert 0.1 <= med["scouting"] <= history.LAB_HOURS
    assert dwell.max() <= history.LAB_HOURS + 1


def test_the_simulators_paths_and_command_paths_occur(log: pd.DataFrame) -> None:
    """The log holds the simulator's own moves: task brokerage, scouts, the final status through prepared, holds
    and their retries, and a task command's path (kill: aborting -> aborted)."""
    prev = log.groupby("jeditaskid", sort=False)["status"].shift(1)
    pairs = set(zip(prev.dropna(), log.loc[prev.notna(), "status"], strict=True))
    for pair in [("defined", "assigning"), ("assigning", "ready"), ("ready", "scouting"), ("scouting", "scouted"),
                 ("scouted", "running"), ("running", "prepared"), ("prepared", "done"), ("ready", "pending"),
                 ("pending", "ready"), ("aborting", "aborted")]:  # fmt: skip
        assert pair in pairs, pair


def test_a_history_is_a_lab_path_cut_at_the_tasks_status(tasks: pd.DataFrame, log: pd.DataFrame) -> None:
    """For a status the lab run reached, a task's history is registered then one lab task's statuses up to the last
    time it was in that status."""
    lab = lab_paths(11, TAKEN_AT)
    prefixes = {p.statuses[: i + 1] for p in lab.paths for i in range(len(p.statuses))}
    reached = {s for p in lab.paths for s in p.statuses}
    checked = 0
    for tid, group in log.groupby("jeditaskid", sort=False):
        seq = tuple(group["status"])
        if seq[-1] in reached:
            assert seq[0] == "registered" and seq[1:] in prefixes, (tid, seq)
            checked += 1
    assert checked > len(tasks) // 3


def test_history_ends_at_the_modification_time() -> None:
    """A task's modificationtime in the past is the time of its last logged status."""
    when = pd.Timestamp("2026-11-18T08:30:00Z")
    tasks = pd.DataFrame({"jeditaskid": [1, 2], "status": ["running", "done"], "modificationtime": [when, pd.NaT]})
    log = simulate_task_history(tasks, TAKEN_AT, seed=1)
    assert log[log["jeditaskid"] == 1]["modificationtime"].iloc[-1] == when
    assert log[log["jeditaskid"] == 2]["modificationtime"].iloc[-1] <= pd.Timestamp(TAKEN_AT)


def test_unknown_status_is_refused() -> None:
    """A task whose status is not a JEDI status cannot get a history."""
    with pytest.raises(TransitionError, match="unknown task statuses 'merging'"):
        simulate_task_history(pd.DataFrame({"jeditaskid": [1], "status": ["merging"]}), TAKEN_AT, seed=0)


def test_empty_task_table_gives_an_empty_log() -> None:
    """No tasks, no log rows."""
    log = simulate_task_history(pd.DataFrame({"jeditaskid": [], "status": []}), TAKEN_AT, seed=0)
    assert log.empty and list(log.columns) == ["jeditaskid", "status", "modificationtime"]


@pytest.mark.parametrize("target", TASK_STATUSES)
def test_every_status_has_valid_paths(target: str) -> None:
    """For every target status, many histories of both kinds of task are valid and end in that status (statuses
    the lab never reached are joined to a lab path by the task machine's shortest route)."""
    tasks = pd.DataFrame({"jeditaskid": np.arange(1, 61), "status": [target] * 60,
                          "prodsourcelabel": ["user" if i % 3 == 0 else "managed" for i in range(60)]})  # fmt: skip
    log = simulate_task_history(tasks, TAKEN_AT, seed=11)
    for _, group in log.groupby("jeditaskid", sort=False):
        path = group["status"].tolist()
        assert path[0] == "registered" and path[-1] == target
        assert history_problems(path) == [], path
    assert log_problems(log, tasks) == []
