"""Replicated simulations in a real browser: intervals as error bars, the verdict in words, the attribution of a
two-key edit and a sweep's band, on the Simulate and Tuning pages at 1600 and 1100 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
TIMEOUT = 600_000


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulations run in the job cluster's one worker (no extra cluster for the small sample grid)."""
    from brokerage.runs import engine

    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))


def _fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_simulate_page_shows_intervals_and_attribution(page, live_server, console_errors, shot, in_process) -> None:
    """/simulate?compare=1&replicas=3 with two edited keys: the verdict says which differences are real, the paired
    differences are drawn with error bars next to each key's share of them, the table lists every measure; the
    page fits at 1600 and 1100 px."""
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.goto(f"{live_server}/simulate?hours=1&compare=1&replicas=3&THROTTLE_THRESHOLD=0.5&NQUEUED_SAT_CAP=5")
    expect(page.locator("#sim-summary")).to_contain_text("3 replicas", timeout=TIMEOUT)
    expect(page.locator("#sim-verdict")).to_contain_text("real difference")
    expect(page.locator("#sim-method")).to_contain_text("seeds 0 to 2")
    expect(page.locator("#sim-intervals .main-svg").first).to_be_visible(timeout=120_000)
    expect(page.locator("#sim-attribution .main-svg").first).to_be_visible(timeout=120_000)
    expect(page.locator("#sim-attribution")).to_contain_text("NQUEUED_SAT_CAP")
    assert page.locator("#sim-intervals g.errorbar").count() > 0
    expect(page.locator("#sim-replicas-view .ag-header-cell-text").filter(has_text="95 % interval")).to_be_visible()
    expect(
        page.locator("#sim-replicas-view .ag-header-cell-text").filter(has_text="(interactions)").first
    ).to_be_attached()
    assert page.locator("#sim-replicas-view").inner_text().count("jobs finished") >= 1
    shot("simulate_replicas_1600")
    page.set_viewport_size({"width": 1100, "height": 1000})
    page.wait_for_timeout(500)
    shot("simulate_replicas_1100")
    assert _fits(page)
    assert console_errors == []


def test_simulate_page_draws_a_sweep_as_a_line_with_a_band(page, live_server, console_errors, shot, in_process) -> None:
    """/simulate?sweep=THROTTLE_THRESHOLD=0.5,1,2&replicas=2: one chart per headline measure, each value's mean as a
    line with its 95 % band and the stored mean dashed."""
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.goto(f"{live_server}/simulate?hours=1&replicas=2&sweep=THROTTLE_THRESHOLD%3D0.5%2C1%2C2")
    expect(page.locator("#sim-sweep-view")).to_contain_text("Sweep of THROTTLE_THRESHOLD", timeout=TIMEOUT)
    expect(page.locator("#sim-sweep-view .main-svg").first).to_be_visible(timeout=120_000)
    assert page.locator("#sim-sweep-view .dash-graph").count() >= 8
    expect(page.locator("#sim-sweep-view .js-fill").first).to_be_attached()  # the band
    expect(page.locator("#sim-sweep")).to_have_value("THROTTLE_THRESHOLD=0.5,1.0,2.0")
    shot("simulate_sweep_1600")
    page.set_viewport_size({"width": 1100, "height": 1000})
    page.wait_for_timeout(500)
    shot("simulate_sweep_1100")
    assert _fits(page)
    assert console_errors == []


def test_tuning_page_simulates_with_replicas(page, live_server, console_errors, shot, in_process) -> None:
    """The tuning page's 'Simulate the next 6 h' with 2 replicas and two edits: the intervals, the words and each
    key's part, at 1600 and 1100 px."""
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.goto(f"{live_server}/tuning?THROTTLE_THRESHOLD=0.5&NQUEUED_SAT_CAP=5")
    # the page's callbacks have run (the edits re-brokered the grid): a click before that would be lost
    expect(page.locator("#tune-grid-view")).to_contain_text("brokerages compared", timeout=60_000)
    page.locator("#tune-future-replicas").select_option("2")
    page.locator("#tune-future-run").click()
    result = page.locator("#tune-future-result")
    expect(result.locator("#sim-verdict")).to_be_visible(timeout=TIMEOUT)
    expect(result.locator("#sim-intervals .main-svg").first).to_be_visible(timeout=120_000)
    expect(result.locator("#sim-attribution")).to_contain_text("THROTTLE_THRESHOLD")
    expect(result.locator("#sim-method")).to_contain_text("2 replicas of 6 h")
    href = result.locator("a", has_text="on the simulation page").get_attribute("href") or ""
    assert "replicas=2" in href and "NQUEUED_SAT_CAP=5" in href
    result.scroll_into_view_if_needed()
    shot("tuning_replicas_1600")
    page.set_viewport_size({"width": 1100, "height": 1000})
    page.wait_for_timeout(500)
    result.scroll_into_view_if_needed()
    shot("tuning_replicas_1100")
    assert _fits(page)
    assert console_errors == []
