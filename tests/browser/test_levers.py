"""Issue #18: clicking a ranked or skipped candidate shows its levers; a lever's link opens the tuning page with it."""

from __future__ import annotations

import contextlib
import re
from typing import Any

from playwright.sync_api import expect

TIMEOUT = 20_000
WIDTHS = (1600, 1100)


def _shots(page: Any, shot: Any, name: str) -> None:
    for w in WIDTHS:
        page.set_viewport_size({"width": w, "height": 1000})
        with contextlib.suppress(Exception):  # the grids lay out again after a resize: give them up to 3 s to fit
            page.wait_for_function(f"document.documentElement.scrollWidth <= {w}", timeout=3000)
        assert page.evaluate("document.documentElement.scrollWidth") <= w, f"{name} scrolls sideways at {w} px"
        shot(f"{name}_{w}")


def test_skipped_queue_levers_open_the_tuning_page(page: Any, live_server: str, console_errors: list[str],
                                                   shot: Any) -> None:  # fmt: skip
    """Queues page, task 1: clicking MWT2_Q7 (-lowmemory) in the skipped table lists MEMORY_COMPENSATION=0.5 and
    maxrss=1800; the lever's link opens /tuning with the edit, and the task passes there."""
    page.goto(live_server + "/queues?task=1")
    row = page.locator("#queues-skipped .ag-row[row-id='MWT2_Q7'] .ag-cell[col-id='criteria']")
    row.click(timeout=TIMEOUT)
    box = page.locator("#levers-of")
    expect(box).to_contain_text("Levers for MWT2_Q7", timeout=TIMEOUT)
    expect(box).to_contain_text("MEMORY_COMPENSATION = 0.5")
    expect(box).to_contain_text("queues.maxrss of MWT2_Q7 = 1800")
    expect(box).to_be_in_viewport()
    _shots(page, shot, "levers_queues")
    box.get_by_text("open in Tuning →").first.click()
    expect(page).to_have_url(re.compile(r"/tuning\?task=1&MEMORY_COMPENSATION=0\.5"), timeout=TIMEOUT)
    expect(page.locator("#tune-task-view")).to_contain_text("MWT2_Q7", timeout=TIMEOUT)
    assert console_errors == []


def test_nucleus_and_tuning_candidates_show_levers(page: Any, live_server: str, console_errors: list[str],
                                                   shot: Any) -> None:  # fmt: skip
    """Nuclei page, task 4: clicking the second kept nucleus shows its standing; on the tuning page a candidate's
    name in the before/after table does the same."""
    page.goto(live_server + "/nuclei?task=4")
    page.locator(".ag-row[row-id='CERN-PROD'] .ag-cell[col-id='weight']").first.click(timeout=TIMEOUT)
    expect(page.locator("#levers-of")).to_contain_text("CERN-PROD is ranked 2", timeout=TIMEOUT)
    _shots(page, shot, "levers_nuclei")
    page.goto(live_server + "/tuning?task=1&NQUEUED_SAT_CAP=300")
    page.locator(".lever-pick", has_text="CERN-PROD_Q4").first.click(timeout=TIMEOUT)
    expect(page.locator("#levers-of")).to_contain_text("Levers for CERN-PROD_Q4", timeout=TIMEOUT)
    expect(page.locator("#levers-of")).to_contain_text("what-if on defaults (NQUEUED_SAT_CAP=300)")
    _shots(page, shot, "levers_tuning")
    assert console_errors == []


def test_levers_panel_opens_only_when_a_row_is_clicked(page: Any, live_server: str, console_errors: list[str],
                                                       shot: Any) -> None:  # fmt: skip
    """Issue #33 item 12: loading the Nuclei or Queues page with a task, or picking another task, leaves the Levers
    panel shut at 1600 and 1100 px; a click on a nucleus row opens it, a new task pick shuts it again."""
    panel = page.locator(".levers-panel")
    for w in WIDTHS:
        page.set_viewport_size({"width": w, "height": 1000})
        page.goto(live_server + "/nuclei?task=4")
        expect(page.locator(".ag-row[row-id='CERN-PROD']").first).to_be_visible(timeout=TIMEOUT)
        page.wait_for_timeout(1500)  # the tables' first cellClicked events have fired by now
        expect(panel).not_to_be_visible()
        shot(f"nuclei_no_levers_{w}")
        page.goto(live_server + "/queues?task=1")
        expect(page.locator("#queues-skipped .ag-row[row-id='MWT2_Q7']")).to_be_visible(timeout=TIMEOUT)
        page.wait_for_timeout(1500)
        expect(panel).not_to_be_visible()
    page.goto(live_server + "/nuclei?task=4")
    page.locator(".ag-row[row-id='CERN-PROD'] .ag-cell[col-id='weight']").first.click(timeout=TIMEOUT)
    expect(panel).to_be_visible(timeout=TIMEOUT)
    page.goto(live_server + "/nuclei?task=1")
    expect(page.locator(".ag-row").first).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(1500)
    expect(panel).not_to_be_visible()
    assert console_errors == []
