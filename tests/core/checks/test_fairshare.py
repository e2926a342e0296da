"""Fair share (brokerage/checks/fairshare.py): queues whose fairsharepolicy gives the task's processing group a zero
share are skipped (-zeroshare); processingType=urgent ignores fairshare."""

from __future__ import annotations

import pytest

from tests.builders import grid, queue, task
from tests.core.checks.helpers import assert_codes

ZERO_SHARE_QUEUES = [
    queue("EV", "S1", fairsharepolicy="type=evgensimul:100%"),
    queue("RE0", "S1", fairsharepolicy="type=reprocessing:0%"),
    queue("P", "S1"),
]


@pytest.mark.parametrize(
    ("task_kw", "expected"),
    [
        pytest.param({"processingtype": "simul"}, {"EV": None, "RE0": None, "P": None}, id="-zeroshare:simul"),
        pytest.param({"processingtype": "evgen"}, {"EV": None, "RE0": None, "P": None}, id="-zeroshare:evgen"),
        pytest.param({"processingtype": "reprocessing", "gshare": "Reprocessing"},
                     {"EV": "-zeroshare", "RE0": "-zeroshare", "P": None}, id="-zeroshare:reprocessing"),
        # the test group (validation) is never zero-shared
        pytest.param({"processingtype": "validation"}, {"EV": None, "RE0": None, "P": None},
                     id="-zeroshare:validation"),
    ],
)  # fmt: skip
def test_zero_share_evgensimul_example(task_kw: dict[str, str], expected: dict[str, str | None]) -> None:
    """fairsharepolicy 'type=evgensimul:100%' lets only evgen or simul jobs in; ':0%' gives a zero share."""
    assert_codes(grid(ZERO_SHARE_QUEUES, [task(1, **task_kw)]), expected)


@pytest.mark.parametrize(
    ("processingtype", "expected"),
    [
        pytest.param("reprocessing", {"EV": "-zeroshare", "P": None}, id="-zeroshare:reprocessing-at-EV"),
        pytest.param("urgent", {"EV": None, "P": None}, id="-zeroshare:urgent"),
    ],
)
def test_urgent_tasks_ignore_fairshare(processingtype: str, expected: dict[str, str | None]) -> None:
    """Seed 003: processingType=urgent also ignores fairshare, so no queue is skipped with -zeroshare."""
    qs = [queue("EV", "EV", fairsharepolicy="type=evgensimul:100%"), queue("P", "P")]
    assert_codes(grid(qs, [task(1, processingtype=processingtype)]), expected)
