"""Storage (brokerage/checks/storage.py): over STORAGE_MIN_FREE_SIZE free at the output endpoint (-disk), no endpoint
blacklisted for an activity the job needs (-read_lan_blacklist, -write_lan_blacklist, -write_wan_blacklist,
-read_wan_blacklist), and direct access where the task reads input only that way (-remoteio)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import anal_queue, anal_task, grid, queue, task
from tests.core.checks.helpers import assert_codes, codes, endpoint, run, sites, with_input


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param({}, {"A": "-disk", "B": None, "C": "-disk", "D": "-disk"}, id="-disk:200-GB"),
        pytest.param(
            {"STORAGE_MIN_FREE_SIZE": 100}, {"A": None, "B": None, "C": None, "D": "-disk"}, id="-disk:100-GB"
        ),
    ],
)
def test_storage_must_have_over_200_gb_free(overrides: dict[str, Any], expected: dict[str, str | None]) -> None:
    """The local (output) storage needs over STORAGE_MIN_FREE_SIZE (200 GB) of free + expired space."""
    qs = [queue("A", "SA"), queue("B", "SB"), queue("C", "SC"), queue("D", "SD")]
    endpoints = [
        endpoint("SA", space_free=150.0, space_expired=40.0),  # 190
        endpoint("SB", space_free=150.0, space_expired=60.0),  # 210
        endpoint("SC", space_free=200.0),  # 200 is not over 200
        endpoint("SD"),
    ]
    relations = [{"panda_queue": q, "ddm_endpoint_name": f"S{q}_DATADISK", "default_write": q != "D"} for q in "ABCD"]
    snap = grid(qs, [task(1)], ddm_endpoints=endpoints, panda_ddm_relation=relations)
    d = assert_codes(snap, expected, **overrides)  # D: no output storage at all
    assert all(d.skip_of(q).temporary for q, c in expected.items() if c)


BLACKLIST_QUEUES = [queue("QN", "N")] + [queue(f"Q{i}", f"S{i}") for i in range(1, 6)]
BLACKLIST_ENDPOINTS = [
    endpoint("N", read_wan="OFF", write_wan="OFF"),
    endpoint("S1", read_lan="OFF"),
    endpoint("S2", write_lan="TEST"),
    endpoint("S3", write_wan="OFF"),
    endpoint("S4", read_wan="OFF"),
    endpoint("S5", read_lan="OFF", read_wan="OFF"),  # the first failing activity names the code
]
BLACKLISTED = {
    "QN": None,
    "Q1": "-read_lan_blacklist",
    "Q2": "-write_lan_blacklist",
    "Q3": "-write_wan_blacklist",
    "Q4": "-read_wan_blacklist",
    "Q5": "-read_lan_blacklist",
}


@pytest.mark.parametrize(
    ("nucleus", "expected"),
    [
        pytest.param(
            "N", BLACKLISTED, id="-read_lan_blacklist,-write_lan_blacklist,-write_wan_blacklist,-read_wan_blacklist"
        ),
        # without a nucleus no queue is a satellite: WAN is not needed
        pytest.param(None, {**BLACKLISTED, "Q3": None, "Q4": None}, id="-read_lan_blacklist,-write_lan_blacklist:LAN"),
    ],
)
def test_blacklisted_endpoints(nucleus: str | None, expected: dict[str, str | None]) -> None:
    """A storage activity the job needs that is not ON (OFF/TEST) skips the queue; WAN matters only for satellites."""
    t = task(1, nucleus=nucleus) if nucleus else task(1)
    snap = grid(
        BLACKLIST_QUEUES, [t], sites=sites("N", "S1", "S2", "S3", "S4", "S5"), ddm_endpoints=BLACKLIST_ENDPOINTS
    )
    assert_codes(snap, expected)


@pytest.mark.parametrize(
    ("allowinputlan", "expected"),
    [
        pytest.param("only", {"D": None, "N": "-remoteio"}, id="-remoteio"),
        pytest.param(None, {"D": None, "N": None}, id="-remoteio:not-only-direct-access"),
    ],
)
def test_direct_access_only(allowinputlan: str | None, expected: dict[str, str | None]) -> None:
    """A task using only direct access skips queues that cannot read input directly from local storage."""
    qs = [queue("D", "S1", direct_access_lan=True), queue("N", "S1")]
    t = task(1, allowinputlan=allowinputlan) if allowinputlan else task(1)
    assert_codes(grid(qs, [t]), expected)


def test_analysis_storage_needs_200_gb_free() -> None:
    """Analysis: the queue's local storage must have more than 200 GB free (free + expired)."""
    qs = [anal_queue("A", "S1"), anal_queue("B", "S2")]
    eps = [
        {"ddm_endpoint_name": "S1_DATADISK", "site_name": "S1", "space_free": 150.0, "space_expired": 50.0},
        {"ddm_endpoint_name": "S2_DATADISK", "site_name": "S2", "space_free": 150.0, "space_expired": 51.0},
    ]
    s = run(grid(qs, [anal_task(1)], ddm_endpoints=eps)).skip_of("A")
    assert s is not None and s.criteria == "-disk" and not s.temporary


def test_analysis_blacklisted_endpoints() -> None:
    """Analysis: queues whose storage cannot be read over LAN are skipped; WAN is needed only where the input is
    missing."""
    qs = [anal_queue("A", "S1"), anal_queue("B", "S2"), anal_queue("C", "S3")]
    eps = [
        {"ddm_endpoint_name": "S1_DATADISK", "site_name": "S1", "space_free": 5e5, "read_lan": "OFF"},
        {"ddm_endpoint_name": "S2_DATADISK", "site_name": "S2", "space_free": 5e5, "write_wan": "OFF"},
        {"ddm_endpoint_name": "S3_DATADISK", "site_name": "S3", "space_free": 5e5, "write_wan": "OFF"},
    ]
    snap = with_input(qs, {"S2": 10}, ddm_endpoints=eps, tasks=[anal_task(1, taskpriority=2000)])
    assert codes(run(snap)) == {"A": "-read_lan_blacklist", "C": "-write_wan_blacklist"}
