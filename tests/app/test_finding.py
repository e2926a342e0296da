"""Issue #33 item 15: finding things: the Network page's site picker and the Diff page's default versions."""

from __future__ import annotations

from typing import Any


def test_network_site_picker_keeps_one_sites_links(app_client: Any) -> None:
    """Picking site MWT2 keeps its row of the heatmap and only its links among the most congested (40 files to
    BNL-ATLAS, 20 to CERN-PROD), most queued first."""
    from app.callbacks.network import update_congested, update_heatmap

    fig = update_heatmap("queued", None, "MWT2")
    assert list(fig.data[0].y) == ["MWT2"]
    rows = update_congested(None, "MWT2")
    assert [(r["link"], r["queued"]) for r in rows] == [("MWT2 → BNL-ATLAS", 40.0), ("MWT2 → CERN-PROD", 20.0)]
    assert len(update_congested(None, None)) > len(rows)


def test_diff_opens_on_the_last_two_versions() -> None:
    """With versions 3 (current), 2 and 1 stored, the Diff page opens from 2 to 3, never from a version to itself."""
    from app.viewmodels.diff import default_pair

    versions = [{"version": 3, "current": True}, {"version": 2}, {"version": 1}]
    assert default_pair(versions) == (2, 3)
    assert default_pair([{"version": 5}, {"version": 4}]) == (4, 5)
