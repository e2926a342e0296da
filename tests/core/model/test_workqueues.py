"""Work-queue criteria, task -> work queue mapping and the global-share tree (jedi-lifecycle.md §7)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from brokerage.model.workqueues import (
    CriteriaError,
    criteria_problem,
    parse_criteria,
    share_tree,
    sorted_leaves,
    task_work_queues,
)

COLS = {
    "prodsourcelabel": np.array(["managed", "managed", "user", "managed"], dtype=object),
    "processingtype": np.array(["evgen", "simul", "panda-client", None], dtype=object),
    "workinggroup": np.array(["", "AP_HI", "phys-top", None], dtype=object),
    "corecount": np.array([1, 8, 1, 8], dtype=object),
    "eventservice": np.array([0, 0, 0, 1], dtype=object),
    "site": np.array([None, None, None, None], dtype=object),
}


@pytest.mark.parametrize(
    ("criteria", "expected"),
    [
        ("", [True, True, True, True]),
        ("processingType IN ('evgen', 'simul')", [True, True, False, False]),
        ("processingType NOT IN ('evgen')", [False, True, True, True]),
        ("processingType LIKE 'sim%'", [False, True, False, False]),
        ("workingGroup IS NULL", [True, False, False, True]),
        ("workingGroup IS NOT NULL AND coreCount > 1", [False, True, False, False]),
        ("prodSourceLabel = 'user' OR (coreCount = 8 AND eventService = 1)", [False, False, True, True]),
        ("NOT (processingType = 'evgen')", [False, True, True, True]),
        ("processingType <> 'evgen'", [False, True, True, True]),
        ("coreCount >= 8", [False, True, False, True]),
    ],
)
def test_criteria_read_as_jedi_evaluates_them(criteria: str, expected: list[bool]) -> None:
    """WorkQueueMapper criteria: IN, LIKE, IS NULL, AND/OR/NOT evaluated as JEDI does in Python, where a NULL (None
    or '') equals nothing: = and IN are false for it, != and NOT IN true."""
    assert parse_criteria(criteria)(COLS).tolist() == expected


def test_bind_variables_come_from_the_work_queues_variables() -> None:
    """A :name in the criteria takes the value the work queue's variables give it."""
    assert parse_criteria("processingType = :pt", {":pt": "simul"})(COLS).tolist() == [False, True, False, False]


@pytest.mark.parametrize(
    ("criteria", "words"),
    [
        ("campaign = 'MC23'", "unknown column 'campaign'"),
        ("processingType = ", "expected a value"),
        ("processingType IN ('a'", "expected )"),
        ("processingType = :missing", "bind variable :missing"),
        ("processingType = 'a' 'b'", "unexpected 'b'"),
        ("processingType ~ 'a'", "cannot read"),
    ],
)
def test_unreadable_criteria_say_where(criteria: str, words: str) -> None:
    """A criteria the parser cannot read is refused with what it expected."""
    problem = criteria_problem(criteria)
    assert problem is not None and words in problem
    with pytest.raises(CriteriaError):
        parse_criteria(criteria)


def test_first_work_queue_in_order_wins_within_the_tasks_label() -> None:
    """Task -> work queue: the first active queue of its queue_type (= prodSourceLabel) in queue_order whose criteria
    hold; an inactive queue is skipped and a task no queue takes gets ''."""
    tasks = pd.DataFrame({k: v for k, v in COLS.items()})
    wq = pd.DataFrame({
        "queue_id": [1, 2, 3, 4, 5], "queue_name": ["late", "evgen", "off", "catch-all", "users"],
        "queue_type": ["managed", "managed", "managed", "managed", "user"], "queue_order": [50, 10, 1, 100, 1],
        "criteria": ["", "processingType = 'evgen'", "", "coreCount = 8 AND eventService = 0", "workingGroup = 'x'"],
        "variables": [{}, {}, {}, {}, {}], "status": ["active", "active", "inactive", "active", "active"],
    })  # fmt: skip
    assert task_work_queues(tasks, wq).tolist() == ["evgen", "late", "", "late"]


def _tree() -> pd.DataFrame:
    return pd.DataFrame({
        "gshare": ["Prod", "Anal", "Sim", "Evgen", "User"], "parent": ["", "", "Prod", "Prod", "Anal"],
        "value": [75.0, 25.0, 2.0, 1.0, 5.0], "throttled": [True, True, True, False, True],
    })  # fmt: skip


def test_share_values_normalise_to_percent_of_the_grid() -> None:
    """§7.2: a node's target is its parent's target x value / sum of its siblings' values (root 100): Prod 75,
    Sim 75 x 2/3 = 50, Evgen 25, User 25; the leaves sum to 100."""
    t = share_tree(_tree())
    assert t.target.round(6).tolist() == [75.0, 25.0, 50.0, 25.0, 25.0]
    assert t.leaves == ["Sim", "Evgen", "User"] and t.target[t.leaf].sum() == pytest.approx(100.0)
    assert t.throttled.tolist() == [True, True, True, False, True]


def test_sorted_leaves_put_the_most_under_pledged_branch_first() -> None:
    """§7.2: with 100 executing (Sim 60, Evgen 10, User 30): Prod runs 70 of its 75 pledged (0.93), Anal 30 of 25
    (1.2), so Prod's leaves come first; inside Prod Evgen runs 10 of 25 (0.4) before Sim 60 of 50 (1.2)."""
    t = share_tree(_tree())
    rank = sorted_leaves(t, np.array([0.0, 0.0, 60.0, 10.0, 30.0]))
    leaves = sorted(t.leaves, key=lambda n: rank[t.names.index(n)])
    assert leaves == ["Evgen", "Sim", "User"]
