"""Issue #33 item 13 in Chromium: a pending task's answer is in view first, and a criteria code drills down."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

TIMEOUT = 30_000
WIDTHS = (1600, 1100)


def test_pending_task_answer_is_in_view_and_drills_down(page: Any, live_server: str, console_errors: list[str],
                                                         shot: Any) -> None:  # fmt: skip
    """Queues page, pending task 2: in view without scrolling, above the empty ranked grid, the step that emptied
    the list (13, memory check) and the criteria codes with counts, -cpucore 6 first; its code narrows the skipped
    table and "pending tasks →" opens /pending?criteria=-cpucore listing tasks 2 and 3."""
    for w in WIDTHS:
        page.set_viewport_size({"width": w, "height": 1000})
        page.goto(live_server + "/queues?task=2")
        box = page.locator("#pending-answer")
        expect(box).to_contain_text("step 13 of 28, memory check", timeout=TIMEOUT)
        expect(box).to_be_in_viewport()
        first = box.locator("tbody tr").first
        expect(first).to_have_attribute("data-criteria", "-cpucore")
        expect(first).to_contain_text("6")
        answer_bottom = box.bounding_box()["y"] + box.bounding_box()["height"]
        assert answer_bottom <= 1000, f"the answer ends below the fold at {w} px"
        assert answer_bottom < page.locator("#queues-ranked").bounding_box()["y"]
        assert page.evaluate("document.documentElement.scrollWidth") <= w
        shot(f"queues_pending_answer_{w}")
    expect(page.locator("#queues-skipped-title")).to_have_text("Skipped queues: 10", timeout=TIMEOUT)
    page.wait_for_timeout(1000)  # the page's own callbacks (criteria options, charts) have answered
    page.locator("#pending-answer tr[data-criteria='-link_unusable'] a code").click()
    expect(page).to_have_url(re.compile(r"criteria=-link_unusable"), timeout=TIMEOUT)
    expect(page.locator("#queues-skipped-title")).to_have_text(
        "Skipped queues (criteria -link_unusable): 2", timeout=TIMEOUT
    )
    expect(page.locator("#queues-skipped .ag-center-cols-container .ag-row")).to_have_count(2, timeout=TIMEOUT)
    page.locator("#pending-answer tr[data-criteria='-cpucore']").get_by_text("pending tasks →").click()
    expect(page).to_have_url(re.compile(r"/pending\?criteria=-cpucore"), timeout=TIMEOUT)
    expect(page.locator("#pending-sentence")).to_contain_text("2 pending brokerages in which -cpucore removed",
                                                              timeout=TIMEOUT)  # fmt: skip
    expect(page.locator("#pending-grid .ag-center-cols-container .ag-row")).to_have_count(2)
    shot("pending_by_criteria_1100")
    assert console_errors == []


def test_stabilizer_numbers_fit_and_a_row_drills_down(page: Any, live_server: str, console_errors: list[str],
                                                      shot: Any) -> None:  # fmt: skip
    """Stabilizer page at 1600 and 1100 px: every column of the (PQ, user) table is in view, no header or number cut
    short; clicking the user alice lists her waiting task 7 and where each of her queues stands in it."""
    cut = """() => [...document.querySelectorAll('#stab-pairs .ag-header-cell-text, #stab-pairs .ag-cell-value')]
                 .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"""
    for w in WIDTHS:
        page.set_viewport_size({"width": w, "height": 1000})
        page.goto(live_server + "/stabilizer")
        expect(page.locator("#stab-pairs .ag-center-cols-container .ag-row")).to_have_count(4, timeout=TIMEOUT)
        page.wait_for_timeout(500)
        assert page.evaluate(cut) == [], f"cut short at {w} px"
        right = page.evaluate("document.querySelector('#stab-pairs .ag-header-cell.ag-column-last')"
                              ".getBoundingClientRect().right")  # fmt: skip
        grid_right = page.locator("#stab-pairs").bounding_box()
        assert right <= grid_right["x"] + grid_right["width"] + 1, f"the last column is scrolled out at {w} px"
        page.locator("#stab-pairs .ag-cell[col-id='produsername'] a", has_text="alice").first.click()
        expect(page).to_have_url(re.compile(r"/stabilizer\?user=alice"), timeout=TIMEOUT)
        box = page.locator("#stab-tasks-list")
        expect(box).to_contain_text("Waiting analysis tasks of alice at 2 queues: 1", timeout=TIMEOUT)
        expect(box).to_contain_text("at BNL-ATLAS_Q9: removed here by -overloaded")
        expect(box).to_be_in_viewport()
        shot(f"stabilizer_drilldown_{w}")
    box.get_by_text("task 7").first.click()
    expect(page).to_have_url(re.compile(r"/queues\?task=7&why="), timeout=TIMEOUT)
    assert console_errors == []


def test_navbar_shows_the_data_age_and_the_pages_json(page: Any, live_server: str, console_errors: list[str],
                                                      shot: Any) -> None:  # fmt: skip
    """At 1600 and 1100 px the navbar's data age is whole and in view (not under the search box, not cut), and its
    JSON link follows the page: /queues?task=1 → /api/tasks/1/jobs, a tuning permalink → its what-if."""
    for w in WIDTHS:
        page.set_viewport_size({"width": w, "height": 1000})
        page.goto(live_server + "/queues?task=1")
        age = page.locator("#data-origin .origin-age")
        expect(age).to_contain_text("ago)", timeout=TIMEOUT)
        expect(age).to_be_in_viewport(ratio=1.0)
        box, search = age.bounding_box(), page.locator("#nav-search").bounding_box()
        assert box["x"] >= search["x"] + search["width"], f"the age sits under the search box at {w} px"
        assert page.evaluate("(e) => e.scrollWidth <= e.clientWidth + 1", age.element_handle())
        expect(page.locator("#nav-api")).to_have_attribute("href", "/api/tasks/1/jobs", timeout=TIMEOUT)
        shot(f"navbar_age_{w}")
    page.goto(live_server + "/tuning?task=1&NQUEUED_SAT_CAP=300")
    expect(page.locator("#nav-api")).to_have_attribute("href", "/api/tasks/1/jobs?NQUEUED_SAT_CAP=300",
                                                       timeout=TIMEOUT)  # fmt: skip
    page.locator("#nav-api").click()
    expect(page.locator("body")).to_contain_text('"config_version"', timeout=TIMEOUT)
    assert console_errors == []
