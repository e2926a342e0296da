"""The page shows how old the grid is and offers a reload when the database stores a newer version."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.viewmodels.freshness import age_text, newer_version_text

TAKEN = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


def test_age_text_says_when_and_how_long_ago() -> None:
    """The text names the time taken (UTC) and a rounded age in min, h or d."""
    assert age_text(TAKEN, datetime(2026, 11, 24, 12, 10, tzinfo=UTC)) == "snapshot taken 2026-11-24 10:00Z (2 h ago)"
    assert age_text(TAKEN, datetime(2026, 11, 24, 10, 20, tzinfo=UTC)).endswith("(20 min ago)")
    assert age_text(TAKEN, datetime(2026, 11, 27, 10, 0, tzinfo=UTC)).endswith("(3 d ago)")
    assert age_text(TAKEN, TAKEN).endswith("(just now)")


def test_a_reload_is_offered_only_for_another_stored_version() -> None:
    """Same key: nothing; a newer stored version: the offer names it; no database: nothing."""
    assert newer_version_text("panda:db@4", ("panda:db", 4, TAKEN)) is None
    assert "version 5" in (newer_version_text("panda:db@4", ("panda:db", 5, TAKEN)) or "")
    assert newer_version_text("panda:db@4", None) is None


def test_the_shell_shows_the_age_and_a_file_grid_offers_nothing(app_client: Any) -> None:
    """The navbar carries 'snapshot taken'; without a database the reload check returns nothing."""
    from app.callbacks.freshness import offer_reload
    from app.main import serve_layout

    assert "snapshot taken" in str(serve_layout())
    assert offer_reload(1, "sample@0") is None


def test_a_newer_stored_version_is_offered(app_client: Any, monkeypatch: Any, tmp_path: Any) -> None:
    """When the database stores another grid version than the page's, the check returns an alert with a reload link."""
    from app.callbacks.freshness import offer_reload
    from app.main import services
    from brokerage.store import database, repository
    from brokerage.store.schema import upgrade
    from tests.builders import grid, queue, task

    engine = database.make_engine(f"sqlite:///{tmp_path / 'g.sqlite'}")
    upgrade(engine)
    snap = grid([queue("A", "S")], [task(1)])
    version = repository.save_snapshot(engine, snap)
    monkeypatch.setattr(services.state, "engine", lambda: engine)
    assert offer_reload(1, f"{snap.snapshot_id}@{version}") is None
    alert = str(offer_reload(1, f"{snap.snapshot_id}@{(version or 0) - 1}"))
    assert f"version {version}" in alert and "Reload" in alert
