"""Issue #33 item 15 in Chromium: finding things: the navbar search lists its matches, pickers take typing."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

TIMEOUT = 30_000


def test_navbar_search_lists_matches_and_opens_the_picked_one(page: Any, live_server: str,
                                                               console_errors: list[str], shot: Any) -> None:  # fmt: skip
    """At 1100 px, typing "aglt" lists AGLT2's three queues and the site (prefix matches first); Enter with several
    matches opens nothing and asks to pick; clicking a match opens its page and the list closes."""
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(live_server + "/")
    box = page.locator("#nav-search")
    box.fill("aglt")
    hits = page.locator("#nav-search-list .nav-search-hit")
    expect(hits).to_have_count(4, timeout=TIMEOUT)
    expect(hits.first).to_have_text("queue AGLT2_Q2")
    expect(page.locator("#nav-search-list")).to_be_in_viewport(ratio=1)  # the whole list, not only its start
    shot("navbar_search_list_1100")
    box.press("Enter")
    expect(page.locator("#nav-search-box")).to_have_attribute("title", "several names match: pick one below",
                                                              timeout=TIMEOUT)  # fmt: skip
    assert page.url.rstrip("/") == live_server
    hits.nth(2).click()
    expect(page).to_have_url(re.compile(r"/queue\?name=AGLT2_Q10"), timeout=TIMEOUT)
    expect(page.locator("#nav-search-list .nav-search-hit")).to_have_count(0, timeout=TIMEOUT)
    box.fill("q1")
    expect(hits).to_have_count(3, timeout=TIMEOUT)
    assert console_errors == []


def test_network_site_picker_and_task_picker_take_typing(page: Any, live_server: str,
                                                         console_errors: list[str]) -> None:  # fmt: skip
    """Typing "mwt" in the Network page's site picker and Enter keeps MWT2's links (2 congested rows) and writes
    ?site=MWT2; on the Queues page, typing "evgen" into the task picker offers task 2 at once."""
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.goto(live_server + "/network")
    expect(page.locator("#network-congested .ag-center-cols-container .ag-row")).to_have_count(5, timeout=TIMEOUT)
    page.locator("#network-site").click()
    # keys typed before the picker's search box has focus would go nowhere, and Enter would pick the first site
    page.wait_for_function("document.activeElement && document.activeElement.tagName === 'INPUT'", timeout=TIMEOUT)
    page.keyboard.type("mwt", delay=30)
    expect(page.get_by_role("option", name="MWT2")).to_be_visible(timeout=TIMEOUT)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"site=MWT2"), timeout=TIMEOUT)
    expect(page.locator("#network-congested .ag-center-cols-container .ag-row")).to_have_count(2, timeout=TIMEOUT)
    page.goto(live_server + "/queues?task=1")
    expect(page.locator("#queues-ranked .ag-row").first).to_be_visible(timeout=TIMEOUT)
    page.locator("#queues-task").click()
    page.wait_for_function("document.activeElement && document.activeElement.tagName === 'INPUT'", timeout=TIMEOUT)
    page.keyboard.type("evgen", delay=30)
    expect(page.get_by_text(re.compile(r"^2 · .*mc23\.evgen\.second"))).to_be_visible(timeout=TIMEOUT)
    assert console_errors == []
