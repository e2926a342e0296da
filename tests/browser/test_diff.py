"""Issue #18: the grid-diff page names, for two stored versions, each changed task and the input that caused it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from brokerage.brokers.router import run_job_brokerage
from brokerage.model.gdpconfig import Config
from brokerage.model.waiting import waiting_task_ids

TIMEOUT = 30_000
WIDTHS = (1600, 1100)


@pytest.fixture
def two_versions(live_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, int, str]]:
    """The live app switched to a database holding the sample grid (v1) and a v2 with one task's top queue offline."""
    from app.main import state
    from brokerage.store.database import make_engine
    from brokerage.store.repository import save_snapshot
    from brokerage.store.schema import upgrade
    from tests.app.sample import sample_grid

    snap = sample_grid()
    tid = next(t for t in waiting_task_ids(snap) if len(run_job_brokerage(snap, t, Config()).candidates) >= 2)
    top = run_job_brokerage(snap, tid, Config()).candidates[0].name
    qs = snap.tables["queues"].copy()
    qs.loc[qs["panda_queue"] == top, "status"] = "offline"
    url = f"sqlite:///{tmp_path / 'grid.sqlite'}"
    engine = make_engine(url)
    upgrade(engine)
    old = save_snapshot(engine, snap)
    new = save_snapshot(engine, snap.replace(queues=qs))
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.delenv("BROKERAGE_SNAPSHOT", raising=False)
    monkeypatch.setenv("BROKERAGE_CACHE_DIR", str(tmp_path / "cache"))
    state.reset()
    assert old is not None and new is not None
    yield old, new, top
    monkeypatch.undo()
    state.reset()


def test_diff_page_names_the_cause_and_fits(page: Any, two_versions: tuple[int, int, str], live_server: str,
                                            console_errors: list[str], shot: Any) -> None:  # fmt: skip
    """/diff?from=&to= shows the summary and a row whose cause names the queue that went offline; no sideways
    scrolling at 1600 or 1100 px; the versions stay in the URL."""
    old, new, top = two_versions
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.goto(f"{live_server}/diff?from={old}&to={new}")
    expect(page.locator("#diff-sentence")).to_contain_text("brokerages changed", timeout=TIMEOUT)
    expect(page.locator("#diff-grid")).to_contain_text(f"status of {top} changed from online to offline")
    expect(page.locator("#data-origin")).to_contain_text("grid ")
    expect(page).to_have_url(re.compile(rf"from={old}.*to={new}"))
    for w in WIDTHS:
        page.set_viewport_size({"width": w, "height": 1000})
        page.wait_for_timeout(400)
        assert page.evaluate("document.documentElement.scrollWidth") <= w, f"/diff scrolls sideways at {w} px"
        shot(f"diff_{w}")
    assert console_errors == []
