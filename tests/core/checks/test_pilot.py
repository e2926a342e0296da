"""Is the queue working (brokerage/checks/pilot.py): pilots arriving (-nopilot), jobs starting (-inactive) and
transfers draining (-transferring)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from brokerage.model.snapshot import GridSnapshot
from tests.builders import RECENT, anal_queue, anal_task, counts, grid, queue, task
from tests.core.checks.helpers import THREE_HOURS_AGO, TWO_HOURS_AGO, assert_codes, assert_seed_codes, run

# --- pilots ---------------------------------------------------------------------------------------


def test_no_pilot() -> None:
    """Queues without pilots for the last 3 hours are skipped (temporarily)."""
    d = assert_codes(grid([queue("A", "S1", npilot=0), queue("B", "S1")], [task(1)]), {"A": "-nopilot", "B": None})
    assert d.skip_of("A").temporary


@pytest.mark.parametrize(
    ("overrides", "expected", "reasons"),
    [
        pytest.param({}, {"A": None, "B": None, "C": "-nopilot", "D": None}, {}, id="-nopilot:NO_PILOT_HOURS=3"),
        pytest.param(
            {"NO_PILOT_HOURS": 1},
            {"A": "-nopilot", "B": "-nopilot", "C": "-nopilot", "D": None},
            {"A": "last pilot 2.0 h ago > 1 h", "C": "no pilot for the last 1 hours (npilot=0)"},
            id="-nopilot:NO_PILOT_HOURS=1",
        ),
    ],
)
def test_no_pilot_hours_applies_to_the_last_pilot_time(
    overrides: dict[str, Any], expected: dict[str, str | None], reasons: dict[str, str]
) -> None:
    """When the snapshot knows the last pilot, a queue is without pilots if that is over NO_PILOT_HOURS ago."""
    qs = [
        queue("A", "S1", lastpilot=TWO_HOURS_AGO, npilot=5),  # 2 h ago: fine under 3 h, not under 1 h
        queue("B", "S1", lastpilot=THREE_HOURS_AGO, npilot=5),  # exactly 3 h: not more than 3 h
        queue("C", "S1", lastpilot=None, npilot=0),  # unknown time: npilot decides
        queue("D", "S1", lastpilot=None, npilot=3),
    ]
    d = assert_codes(grid(qs, [task(1)]), expected, **overrides)
    for q, reason in reasons.items():
        assert d.skip_of(q).reason == reason


def test_no_pilot_applies_to_preassigned_queues() -> None:
    """Seed: a pre-assigned queue without pilots is still skipped."""
    snap = grid([queue("A", "S1", npilot=0), queue("B", "S1")], [task(1, site="A,B")])
    assert_seed_codes(snap, {"A": "-nopilot", "B": None})


def test_analysis_no_pilot_is_persistent() -> None:
    """Analysis: queues without pilots for the last 3 hours are skipped, also when pre-assigned."""
    qs = [anal_queue("A", "S1"), anal_queue("B", "S2", npilot=0)]
    s = run(grid(qs, [anal_task(1, site="B")])).skip_of("B")
    assert s is not None and s.criteria == "-nopilot" and not s.temporary


# --- inactive queues ------------------------------------------------------------------------------


def _inactive_grid(t: dict[str, Any]) -> GridSnapshot:
    qs = [
        queue("A", "S1", laststart=THREE_HOURS_AGO),  # activated jobs waiting, nothing started for 3 h
        queue("B", "S1", laststart=THREE_HOURS_AGO),  # nothing waiting
        queue("C", "S1", laststart=RECENT),
        queue("D", "S1", laststart=None),  # never started anything
        queue("E", "S1", laststart=TWO_HOURS_AGO),  # exactly 2 h: not more than 2 h
    ]
    # activated jobs of another global share count too: the queue as a whole is inactive
    jc = counts("A", "Reprocessing", activated=5) + counts("C", "Reprocessing", activated=5)
    jc += counts("D", "Reprocessing", activated=1) + counts("E", "Reprocessing", activated=1)
    return grid(qs, [t], job_counts=jc)


INACTIVE = {"A": "-inactive", "B": None, "C": None, "D": "-inactive", "E": None}


@pytest.mark.parametrize(
    ("task_kw", "expected"),
    [
        pytest.param({"currentpriority": 800}, INACTIVE, id="-inactive:priority-800"),
        pytest.param({"is_scout": True}, INACTIVE, id="-inactive:scout"),
        pytest.param({"is_merge": True}, INACTIVE, id="-inactive:merge"),
        pytest.param({}, dict.fromkeys("ABCDE"), id="-inactive:other-jobs"),
    ],
)
def test_inactive_queues_for_high_priority_scout_and_merge(
    task_kw: dict[str, Any], expected: dict[str, str | None]
) -> None:
    """Priority >= 800, scout or merge jobs skip queues where nothing started for 2 h although jobs were activated."""
    d = assert_codes(_inactive_grid(task(1, **task_kw)), expected)
    if expected["A"]:
        assert d.skip_of("A").temporary


def test_inactive_needs_activated_jobs() -> None:
    """Seed: a queue is inactive when nothing started for 2 h 'although activated jobs had been there'."""
    qs = [queue("A", "S1", laststart=THREE_HOURS_AGO)]
    snap = grid(qs, [task(1, currentpriority=900)], job_counts=counts("A", "Reprocessing", starting=3))
    assert_seed_codes(snap, {"A": None})


def test_inactive_applies_to_preassigned_queues() -> None:
    """Seed: pre-assigned queues are still checked for inactivity."""
    assert_seed_codes(_inactive_grid(task(1, currentpriority=900, site="A,C")), {"A": "-inactive", "C": None})


# --- transferring jobs ----------------------------------------------------------------------------


def _transferring_limits() -> tuple[GridSnapshot, dict[str, str | None]]:
    """Skip if transferring > max(transferring_limit (2000 if undefined), 2 x running)."""
    qs = [queue("A", "S1"), queue("B", "S1"), queue("C", "S1", transferringlimit=10), queue("D", "S1")]
    qs[3]["transferringlimit"] = 10
    jc = (
        counts("A", running=500, transferring=2001)  # max(2000, 1000) = 2000 < 2001
        + counts("B", running=1001, transferring=2001)  # max(2000, 2002) = 2002
        + counts("C", running=3, transferring=11)  # max(10, 6) = 10 < 11
        + counts("D", running=6, transferring=12)  # max(10, 12) = 12, not more
    )
    return grid(qs, [task(1)], job_counts=jc), {"A": "-transferring", "B": None, "C": "-transferring", "D": None}


def _transferring_every_share() -> tuple[GridSnapshot, dict[str, str | None]]:
    """The transferring limit is the queue's: 1500 + 1500 transferring jobs of two shares exceed max(2000, 2x10)."""
    qs = [queue("A", "S1"), queue("B", "S1")]
    jc = (
        counts("A", running=10, transferring=1500)  # the task's share (MC Simulation)
        + counts("A", gshare="Data Derivations", transferring=1500)  # 3000 in all > max(2000, 20)
        + counts("B", running=10, transferring=1500)
        + counts("B", gshare="Data Derivations", transferring=400)  # 1900 in all, not more than 2000
    )
    return grid(qs, [task(1)], job_counts=jc), {"A": "-transferring", "B": None}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(_transferring_limits, id="-transferring:limit-or-twice-running"),
        pytest.param(_transferring_every_share, id="-transferring:every-share"),
    ],
)
def test_too_many_transferring_jobs(case: Callable[[], tuple[GridSnapshot, dict[str, str | None]]]) -> None:
    """Skip (temporarily) if transferring > max(transferring_limit (2000 if undefined), 2 x running), counting the
    transferring and running jobs of every share at the queue."""
    snap, expected = case()
    d = assert_codes(snap, expected)
    assert all(d.skip_of(q).temporary for q, c in expected.items() if c)
