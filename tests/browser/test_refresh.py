"""Auto-refresh of the views with time: off / 1 / 5 / 15 minutes, kept in the URL, and a tick rebuilds the view."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
TIMEOUT = 30_000
VIEWS = {"/": "Overview", "/queues": "Queues", "/tasks": "Task states", "/stabilizer": "Analysis Stabilizer"}


def _built(page) -> str:
    return page.locator("#refresh-at").get_attribute("data-built") or ""


@pytest.mark.parametrize("path", list(VIEWS))
def test_a_picked_interval_goes_into_the_url_and_comes_back_from_it(page, live_server, console_errors, path) -> None:
    """Each view with time offers off / 1 / 5 / 15 min; a pick is written to ?refresh= (removed when off) and a URL
    with ?refresh=15 opens with 15 min picked."""
    page.goto(live_server + path)
    expect(page.get_by_role("heading", name=VIEWS[path])).to_be_visible(timeout=TIMEOUT)
    control = page.locator(".refresh-control")
    expect(control.get_by_label("off", exact=True)).to_be_checked(timeout=TIMEOUT)
    control.get_by_label("5 min", exact=True).check()
    expect(page).to_have_url(re.compile(r"[?&]refresh=5\b"), timeout=TIMEOUT)
    control.get_by_label("off", exact=True).check()
    expect(page).not_to_have_url(re.compile(r"refresh="), timeout=TIMEOUT)
    page.goto(live_server + path + "?refresh=15")
    expect(page.locator(".refresh-control").get_by_label("15 min", exact=True)).to_be_checked(timeout=TIMEOUT)
    assert console_errors == []


def test_a_tick_rebuilds_the_view_and_keeps_its_url(page, live_server, console_errors) -> None:
    """With refresh on, each tick of its interval rebuilds the view from the server (a new build time) under the same
    URL, picks included; the 1-minute interval is shortened in the page so the test need not wait a minute."""
    page.goto(live_server + "/tasks?window=24h")
    expect(page.get_by_label("24h", exact=True)).to_be_checked(timeout=TIMEOUT)
    page.locator(".refresh-control").get_by_label("1 min", exact=True).check()
    expect(page).to_have_url(re.compile(r"window=24h.*refresh=1|refresh=1.*window=24h"), timeout=TIMEOUT)
    first = _built(page)
    page.evaluate("window.dash_clientside.set_props('refresh-tick', {interval: 1500})")
    page.wait_for_function(
        "b => { const e = document.getElementById('refresh-at'); return e && e.dataset.built !== b; }",
        arg=first,
        timeout=TIMEOUT,
    )
    expect(page).to_have_url(re.compile(r"window=24h"))
    expect(page.get_by_label("24h", exact=True)).to_be_checked(timeout=TIMEOUT)
    expect(page.locator(".refresh-control").get_by_label("1 min", exact=True)).to_be_checked(timeout=TIMEOUT)
    assert console_errors == []


def test_off_never_reloads(page, live_server, console_errors) -> None:
    """With refresh off the view is built once: its interval is disabled, whatever its period."""
    page.goto(live_server + "/stabilizer")
    expect(page.locator(".refresh-control").get_by_label("off", exact=True)).to_be_checked(timeout=TIMEOUT)
    first = _built(page)
    page.evaluate("window.dash_clientside.set_props('refresh-tick', {interval: 300})")
    page.wait_for_timeout(2000)  # nothing to wait for: the check is that nothing happens in this time
    assert _built(page) == first
    assert console_errors == []
