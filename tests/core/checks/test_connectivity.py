"""IP connectivity (brokerage/checks/connectivity.py): the queue's wnconnectivity (network#ip stack) must accept the
task's ipConnectivity (-network)."""

from __future__ import annotations

import pytest

from tests.builders import grid, queue, task
from tests.core.checks.helpers import assert_codes, assert_seed_codes

CONNECTIVITY_QUEUES = ("full", "full#IPv4", "full#IPv6", "http", "http#IPv4", "none", "none#IPv4", "none#IPv6")


@pytest.mark.parametrize(
    ("wanted", "accepted"),
    [
        pytest.param("http#IPv4", {"full#IPv4", "http#IPv4"}, id="-network:http#IPv4"),
        pytest.param("none", {"full", "http", "none"}, id="-network:none"),
        pytest.param("full", {"full"}, id="-network:full"),
        pytest.param("#IPv6", {"full#IPv6", "none#IPv6"}, id="-network:#IPv6"),
        pytest.param("none#IPv4", {"full#IPv4", "http#IPv4", "none#IPv4"}, id="-network:none#IPv4"),
        # the task specifies nothing: no check
        pytest.param("", set(CONNECTIVITY_QUEUES), id="-network:unspecified"),
    ],
)
def test_wnconnectivity(wanted: str, accepted: set[str]) -> None:
    """full accepts any network, http accepts http/none, none only none; the IP stacks must be equal."""
    qs = [queue(f"Q{i}", "S1", wnconnectivity=c) for i, c in enumerate(CONNECTIVITY_QUEUES)]
    expected = {f"Q{i}": (None if c in accepted else "-network") for i, c in enumerate(CONNECTIVITY_QUEUES)}
    assert_codes(grid(qs, [task(1, ipconnectivity=wanted)]), expected)


def test_wnconnectivity_applies_to_preassigned_queues() -> None:
    """Seed: a pre-assigned queue must still accept the task's ipConnectivity."""
    qs = [queue("NONE", "S1", wnconnectivity="none"), queue("FULL", "S1", wnconnectivity="full")]
    assert_seed_codes(grid(qs, [task(1, ipconnectivity="http", site="NONE,FULL")]), {"NONE": "-network", "FULL": None})
