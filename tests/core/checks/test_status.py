"""Queue status (brokerage/checks/status.py): only online queues take jobs unless the task pre-assigned them (-status)."""

from __future__ import annotations

import pytest

from tests.builders import anal_queue, anal_task, grid, queue, task
from tests.core.checks.helpers import assert_codes, run


@pytest.mark.parametrize("status", [pytest.param(s, id=f"-status:{s}") for s in ("offline", "brokeroff", "standby")])
def test_status_must_be_online(status: str) -> None:
    """The queue status must be online (standby, offline and brokeroff are skipped)."""
    qs = [queue("A", "S1"), queue("B", "S1", status=status)]
    assert_codes(grid(qs, [task(1)]), {"A": None, "B": "-status"})


def test_status_is_waived_for_preassigned_queues() -> None:
    """The status check does not apply to pre-assigned queues."""
    qs = [queue("A", "S1"), queue("B", "S1", status="offline")]
    d = assert_codes(grid(qs, [task(1, site="B")]), {"B": None})
    assert d.ranked_names == ["B"]


def test_analysis_status_must_be_online() -> None:
    """Analysis: queues not online are skipped for a persistent issue (-status)."""
    snap = grid([anal_queue("A", "S1"), anal_queue("B", "S2", status="brokeroff")], [anal_task(1)])
    s = run(snap).skip_of("B")
    assert s is not None and s.criteria == "-status" and not s.temporary and s.reason == "status=brokeroff"
