"""Event service (brokerage/checks/eventservice.py): ES tasks avoid jobseed=std queues (-es) and eshigh ones below
ES_HIGH_PRIORITY unless scouts (-eshigh); other tasks avoid jobseed=es queues (-nones)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import grid, queue, task
from tests.core.checks.helpers import assert_codes, assert_seed_codes

ES_NORMAL = {"STD": "-es", "ES": None, "ESHIGH": "-eshigh", "ALL": None}


@pytest.mark.parametrize(
    ("task_kw", "expected"),
    [
        pytest.param({"eventservice": True}, ES_NORMAL, id="-es,-eshigh"),
        pytest.param({"eventservice": True, "currentpriority": 900}, {**ES_NORMAL, "ESHIGH": None},
                     id="-es:eshigh-at-priority-900"),
        pytest.param({"eventservice": True, "is_scout": True}, {**ES_NORMAL, "ESHIGH": None},
                     id="-es:eshigh-for-scouts"),
        pytest.param({}, {"STD": None, "ES": "-nones", "ESHIGH": None, "ALL": None}, id="-nones"),
    ],
)  # fmt: skip
def test_event_service_settings(task_kw: dict[str, Any], expected: dict[str, str | None]) -> None:
    """ES tasks skip jobseed=std queues and eshigh ones below priority 900; other tasks skip jobseed=es queues."""
    qs = [queue(s.upper(), "S1", jobseed=s) for s in ("std", "es", "eshigh", "all")]
    assert_codes(grid(qs, [task(1, **task_kw)]), expected)


def test_event_service_applies_to_preassigned_queues() -> None:
    """Seed: a pre-assigned std queue still cannot take event service jobs."""
    qs = [queue("STD", "S1", jobseed="std"), queue("ES", "S1", jobseed="es")]
    assert_seed_codes(grid(qs, [task(1, eventservice=True, site="STD,ES")]), {"STD": "-es", "ES": None})
