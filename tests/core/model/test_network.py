"""Network weight (seed 000, "Network Weight"): queuedWeight, throughputWeight, closeness fallback, freshness."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.network import closeness_weight, network_weights, queued_weight, throughput_weight
from brokerage.model.snapshot import GridSnapshot
from tests.builders import RECENT, grid, queue, task

FRESH_EDGE = "2026-11-20T11:00:00Z"  # exactly 60 min before the snapshot: still used
STALE = "2026-11-20T10:59:00Z"  # 61 min before the snapshot: ignored

KEYS = {
    "closeness": "AGIS_closeness",
    "queued": "Production Output_queued",
    "express": "Express_queued",
    "mbps_1h": "dashb_mbps_1h",
    "mbps_1d": "dashb_mbps_1d",
    "mbps_1w": "dashb_mbps_1w",
}


def rows(src: str, ts: str | None = RECENT, **values: float) -> list[dict[str, Any]]:
    """Network rows from SRC into nucleus N, all with timestamp TS."""
    return [{"src": src, "dst": "N", "key": KEYS[k], "value": v, "ts": ts} for k, v in values.items()]


def snapshot(network: list[dict[str, Any]], satellites: list[str]) -> GridSnapshot:
    """Nucleus N and SATELLITES, one queue each, with the given network rows."""
    names = ["N", *satellites]
    sites = [{"site_name": s, "role": "nucleus" if s == "N" else "satellite"} for s in names]
    return grid([queue(f"Q_{s}", s) for s in names], [task(1, nucleus="N")], sites=sites, network=network)


def weights(network: list[dict[str, Any]], satellites: list[str], config: Config | None = None, express: bool = False):
    """network_weights of N and SATELLITES towards N."""
    snap = snapshot(network, satellites)
    return network_weights(
        GridCache(snap), np.array(["N", *satellites], dtype=object), "N", config or Config(), express=express
    )


@pytest.mark.parametrize(
    ("nqueued", "cap", "expected"), [(0, 150, 2.0), (75, 150, 1.5), (150, 150, 1.0), (150, 300, 1.5)]
)
def test_queued_weight(nqueued: float, cap: float, expected: float) -> None:
    """queuedWeight = 2 - nQueued / NQUEUED_SAT_CAP: 2 for an empty link, 1 at the cap."""
    assert float(queued_weight(nqueued, cap)) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("mbps", "expected"),
    [
        (1000.0, 2.0),
        (200.01, 2.0),
        (200.0, 1.9),  # thresholds are strict: 200 MB/s is not above 200
        (100.01, 1.9),
        (100.0, 1.8),
        (75.01, 1.8),
        (75.0, 1.7),  # the seed's plot: 1.7 on (50, 75]
        (50.01, 1.7),
        (50.0, 1.5),
        (20.01, 1.5),
        (20.0, 1.3),
        (10.01, 1.3),
        (10.0, 1.2),
        (2.01, 1.2),
        (2.0, 1.1),
        (1.01, 1.1),
        (1.0, 1.0),
        (0.0, 1.0),
        (-5.0, 1.0),
    ],
)
def test_throughput_weight_steps(mbps: float, expected: float) -> None:
    """throughputWeight steps up at each threshold, strictly above it."""
    assert float(throughput_weight(mbps)) == pytest.approx(expected)


@pytest.mark.parametrize(("closeness", "expected"), [(0.0, 2.0), (11.0, 1.0), (5.5, 1.5), (7.7, 1.3)])
def test_closeness_weight(closeness: float, expected: float) -> None:
    """weightNwThroughput = 1 + (MAX_CLOSENESS - closeness) / (MAX_CLOSENESS - MIN_CLOSENESS), MAX 11, MIN 0."""
    assert float(closeness_weight(closeness, 11.0)) == pytest.approx(expected)


def test_same_site_weighs_two_and_a_half() -> None:
    """A queue at the nucleus itself gets queuedWeight = throughputWeight = 2.5, whatever its own rows say."""
    nw = weights(rows("N", queued=1000, closeness=-1, mbps_1h=0.5), [])
    assert (nw.queued_weight[0], nw.throughput_weight[0], nw.weight[0]) == (2.5, 2.5, 2.5)
    assert not nw.blocked[0]


def test_closeness_fallback_and_missing_closeness() -> None:
    """Without throughput data the closeness is used; a missing closeness counts as 0.7 x 11 = 7.7."""
    nw = weights(rows("A", closeness=3) + rows("B", queued=30), ["A", "B", "C"])
    # A: 1 + (11 - 3)/11 = 19/11; B and C: 1 + (11 - 7.7)/11 = 1.3
    assert nw.throughput_weight[1:] == pytest.approx([19 / 11, 1.3, 1.3])
    # queued: A none -> 0 -> 2.0; B 30 -> 2 - 30/150 = 1.8; C -> 2.0
    assert nw.queued_weight[1:] == pytest.approx([2.0, 1.8, 2.0])
    assert nw.weight[1:] == pytest.approx([0.5 * (2 + 19 / 11), 0.5 * (1.8 + 1.3), 0.5 * (2 + 1.3)])


def test_blocked_link() -> None:
    """closeness -1 marks a blocked link (the production broker skips it)."""
    nw = weights(rows("A", closeness=-1) + rows("B", closeness=0), ["A", "B"])
    assert list(nw.blocked) == [False, True, False]


def test_most_recent_throughput_is_preferred() -> None:
    """The last 1 h throughput is used, if not available the last 1 day, if not the last 1 week."""
    network = (
        rows("H", mbps_1h=250, mbps_1d=15, mbps_1w=1.5)  # 1h: 250 -> 2.0
        + rows("D", mbps_1d=15, mbps_1w=1.5)  # 1d: 15 -> 1.3
        + rows("W", mbps_1w=1.5)  # 1w: 1.5 -> 1.1
        + rows("O", mbps_1h=60)  # 1h only (PanDA's code would fall back to closeness here)
    )
    nw = weights(network, ["H", "D", "W", "O"])
    assert nw.throughput_weight[1:] == pytest.approx([2.0, 1.3, 1.1, 1.7])
    assert list(nw.mbps[1:]) == [250, 15, 1.5, 60]


def test_stale_rows_are_ignored() -> None:
    """Rows older than 60 minutes are not used: a stale 1 h value falls back to 1 d, a stale closeness to 7.7."""
    network = (
        rows("A", ts=STALE, mbps_1h=250) + rows("A", mbps_1d=15)  # 1h stale -> 1d: 1.3
        + rows("B", ts=STALE, closeness=0)  # stale closeness -> missing -> 7.7 -> 1.3
        + rows("C", ts=FRESH_EDGE, closeness=0)  # exactly 60 min old: used -> 2.0
        + rows("D", ts=None, mbps_1h=150)  # no timestamp: used -> 1.9
        + rows("E", ts=STALE, closeness=-1)  # a stale block does not block
    )  # fmt: skip
    nw = weights(network, ["A", "B", "C", "D", "E"])
    assert nw.throughput_weight[1:] == pytest.approx([1.3, 1.3, 2.0, 1.9, 1.3])
    assert not nw.blocked.any()


def test_queue_importance() -> None:
    """networkWeight = q x queuedWeight + (1 - q) x throughputWeight with q = NW_QUEUE_IMPORTANCE (0.5)."""
    network = rows("A", queued=75, mbps_1h=60)  # queued 1.5, throughput 1.7
    assert weights(network, ["A"]).weight[1] == pytest.approx(1.6)
    config = Config().with_overrides({"NW_QUEUE_IMPORTANCE": 0.2})
    assert weights(network, ["A"], config).weight[1] == pytest.approx(0.2 * 1.5 + 0.8 * 1.7)
    config = Config().with_overrides({"NQUEUED_SAT_CAP": 300})
    assert weights(network, ["A"], config).queued_weight[1] == pytest.approx(2 - 75 / 300)


def test_express_reads_express_queue() -> None:
    """Express tasks weigh the link by its Express queue instead of the Production Output queue."""
    network = rows("A", queued=150, express=30)
    assert weights(network, ["A"]).queued_weight[1] == pytest.approx(1.0)
    assert weights(network, ["A"], express=True).queued_weight[1] == pytest.approx(1.8)
