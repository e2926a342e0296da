"""Queue pages show the VO in Chromium at 1600 and 1100 px: the queues table's VO column, and the queue page's
per-VO job counts when two VOs have jobs at the queue."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.app.sample import sample_grid
from tests.app.test_queue_vo import Q, two_vos

TIMEOUT = 15_000
WIDTHS = (1600, 1100)
CUT = """(sel) => [...document.querySelectorAll(sel + ' .ag-header-cell-text, ' + sel + ' .ag-cell-value')]
           .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"""


def test_the_queues_table_has_a_vo_column(page: Any, live_server: str, console_errors: list[str], shot: Any) -> None:
    """The queues table shows a VO column beside the site's role, whole at both widths, naming atlas."""
    for w in WIDTHS:
        page.set_viewport_size({"width": w, "height": 1000})
        page.goto(live_server + "/queues?task=1")
        header = page.get_by_role("columnheader", name="VO", exact=True)
        expect(header).to_contain_text("VO", timeout=TIMEOUT)
        expect(page.locator("#queues-grid .ag-cell[col-id='vo']").first).to_have_text("atlas")
        page.wait_for_timeout(300)
        assert page.evaluate(CUT, "#queues-grid .ag-header") == [], f"a header is cut at {w} px"
        shot(f"queues_vo_{w}")
    assert console_errors == []


def test_a_queue_with_two_vos_shows_each_vos_jobs(
    page: Any, live_server: str, console_errors: list[str], shot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With wlcg jobs at the queue the page shows 'Jobs per VO' (atlas 67, wlcg 11 in all), every cell whole."""
    from app.main import state

    monkeypatch.setattr(state, "snapshot", lambda: two_vos(sample_grid()))
    for w in WIDTHS:
        page.set_viewport_size({"width": w, "height": 1000})
        page.goto(live_server + f"/queue?name={Q}")
        box = page.locator("#queue-vo-counts")
        expect(box.locator(".ag-row")).to_have_count(2, timeout=TIMEOUT)
        expect(box.locator(".ag-row[row-index='1'] .ag-cell[col-id='vo']")).to_have_text("wlcg")
        expect(box.locator(".ag-row[row-index='1'] .ag-cell[col-id='total']")).to_have_text("11")
        page.wait_for_timeout(300)
        assert page.evaluate(CUT, "#queue-vo-counts") == [], f"a cell is cut at {w} px"
        shot(f"queue_two_vos_{w}")
    assert console_errors == []
