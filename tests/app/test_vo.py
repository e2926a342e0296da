"""The dashboard names the VO whose CONFIG rows it loaded on every page (the navbar line)."""

from __future__ import annotations

from typing import Any

from app.state.source import config_vo
from tests.builders import grid, queue, task


def test_the_navbar_names_the_vo(app_client: Any) -> None:
    """The sample grid's tasks are ATLAS ones: the shell's top line says 'VO atlas'."""
    from app.main import serve_layout

    assert "VO atlas" in str(serve_layout())


def test_the_vo_is_the_grids_unless_brokerage_vo_says_otherwise(monkeypatch: Any) -> None:
    """A grid whose tasks are all wlcg loads wlcg's CONFIG rows; BROKERAGE_VO overrides; mixed VOs load atlas."""
    monkeypatch.delenv("BROKERAGE_VO", raising=False)
    assert config_vo(grid([queue("A", "S")], [task(1, vo="wlcg")])) == "wlcg"
    assert config_vo(grid([queue("A", "S")], [task(1, vo="wlcg"), task(2)])) == "atlas"
    monkeypatch.setenv("BROKERAGE_VO", "lsst")
    assert config_vo(grid([queue("A", "S")], [task(1, vo="wlcg")])) == "lsst"
