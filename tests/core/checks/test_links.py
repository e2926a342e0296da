"""Links to the nucleus (brokerage/checks/links.py): blocked or congested satellite links (-link_unusable), too many
files queued to the nucleus (-links_full), and the express network weight (-lowNetworkWeight)."""

from __future__ import annotations

from typing import Any

import pytest

from brokerage.model.snapshot import GridSnapshot
from tests.builders import grid, queue, task
from tests.core.checks.helpers import _nucleus_grid, assert_codes, net, sites


def test_link_blocked() -> None:
    """Queues whose link to the nucleus is blocked (closeness -1) are skipped; the nucleus itself never is."""
    network = net("S1", "N", closeness=-1) + net("S2", "N", closeness=3) + net("N", "N", closeness=-1)
    assert_codes(_nucleus_grid(task(1, nucleus="N"), network), {"QN": None, "Q1": "-link_unusable", "Q2": None})


def test_nqueued_sat_cap() -> None:
    """Queues whose link has over NQUEUED_SAT_CAP (150) files queued to the nucleus are skipped (temporarily)."""
    network = net("S1", "N", queued=151) + net("S2", "N", queued=150) + net("N", "N", queued=500)
    d = assert_codes(_nucleus_grid(task(1, nucleus="N"), network), {"QN": None, "Q1": "-link_unusable", "Q2": None})
    assert d.skip_of("Q1").temporary


@pytest.mark.parametrize(
    ("cap", "expected"),
    [
        pytest.param(151, {"Q1": None, "Q2": None}, id="-link_unusable:NQUEUED_SAT_CAP=151"),
        pytest.param(149, {"Q1": "-link_unusable", "Q2": "-link_unusable"}, id="-link_unusable:NQUEUED_SAT_CAP=149"),
    ],
)
def test_nqueued_sat_cap_override_changes_the_outcome(cap: int, expected: dict[str, str | None]) -> None:
    """gdpconfig NQUEUED_SAT_CAP=151 lets 151 queued files pass; 149 also skips the 150-file link."""
    network = net("S1", "N", queued=151) + net("S2", "N", queued=150)
    snap = _nucleus_grid(task(1, nucleus="N"), network)
    assert_codes(snap, expected, NQUEUED_SAT_CAP=cap)


@pytest.mark.parametrize(
    ("far2_queued", "overrides", "code"),
    [
        # 6000 + 4001 = 10001 > 10000, from sites without queues (so no link is over NQUEUED_SAT_CAP)
        pytest.param(4001, {}, "-links_full", id="-links_full"),
        pytest.param(4001, {"NQUEUED_NUC_CAP_FOR_JOBS": 10001}, None, id="-links_full:NQUEUED_NUC_CAP_FOR_JOBS=10001"),
        # exactly 10000 is not larger than the cap
        pytest.param(4000, {}, None, id="-links_full:exactly-the-cap"),
    ],
)
def test_nqueued_nuc_cap_for_jobs(far2_queued: int, overrides: dict[str, Any], code: str | None) -> None:
    """All queues are skipped when more than NQUEUED_NUC_CAP_FOR_JOBS (10000) files go to the nucleus."""
    network = net("FAR1", "N", queued=6000) + net("FAR2", "N", queued=far2_queued)
    snap = _nucleus_grid(task(1, nucleus="N"), network)
    d = assert_codes(snap, {"QN": code, "Q1": code, "Q2": code}, **overrides)
    if code:
        assert d.status == "pending"


def _express_grid() -> GridSnapshot:
    qs = [queue("QN", "N")] + [queue(f"Q{i}", f"S{i}") for i in range(1, 5)]
    network = (
        net("S1", "N", mbps_1h=250, express=0)  # 0.5 x (2.0 + 2.0) = 2.0
        + net("S2", "N", closeness=11)  # 0.5 x (2.0 + 1.0) = 1.5
        + net("S3", "N", mbps_1h=60, express=75)  # 0.5 x (2 - 75/150 + 1.7) = 1.6
        + net("S4", "N", mbps_1h=60, express=30)  # 0.5 x (2 - 30/150 + 1.7) = 1.75
    )
    return grid(qs, [task(1, nucleus="N", processingtype="urgent")], sites=sites("N", *[f"S{i}" for i in range(1, 5)]),
                network=network)  # fmt: skip


LOW = "-lowNetworkWeight"


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param({}, {"QN": None, "Q1": None, "Q2": LOW, "Q3": LOW, "Q4": None}, id="-lowNetworkWeight"),
        pytest.param({"NW_THRESHOLD": 1.5}, {"QN": None, "Q1": None, "Q2": None, "Q3": None, "Q4": None},
                     id="-lowNetworkWeight:NW_THRESHOLD=1.5"),
        pytest.param({"NW_WEIGHT_MULTIPLIER": 1.2}, {"Q1": LOW, "Q4": LOW},  # 1.7 x 1.2 = 2.04
                     id="-lowNetworkWeight:NW_WEIGHT_MULTIPLIER=1.2"),
    ],
)  # fmt: skip
def test_express_network_threshold(overrides: dict[str, Any], expected: dict[str, str | None]) -> None:
    """processingType urgent (or priority >= 1000) needs networkWeight >= NW_THRESHOLD x NW_WEIGHT_MULTIPLIER (1.7)."""
    assert_codes(_express_grid(), expected, **overrides)
