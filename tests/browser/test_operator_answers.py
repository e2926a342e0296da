"""Issue #17: every page answers its operator question in view, at 1600 and 1100 px wide."""

from __future__ import annotations

import re

from playwright.sync_api import expect

TIMEOUT = 15_000
WIDTHS = (1600, 1100)


def _settle(page) -> None:
    page.wait_for_load_state("networkidle")
    expect(page.locator("._dash-loading")).to_have_count(0, timeout=TIMEOUT)


def _shots(page, shot, name: str) -> None:
    """Screenshots at both widths, and no sideways scrolling at either."""
    for w in WIDTHS:
        page.set_viewport_size({"width": w, "height": 1000})
        page.wait_for_timeout(300)
        assert page.evaluate("document.documentElement.scrollWidth") <= w, f"{name} scrolls sideways at {w} px"
        shot(f"{name}_{w}")


def test_pending_page_lists_reasons_and_sorts(page, live_server, console_errors, shot) -> None:
    """The overview links to /pending, whose table gives each pending task's reason and sorts by a column."""
    page.goto(live_server + "/")
    page.locator("#census-pending-link").click(timeout=TIMEOUT)
    expect(page).to_have_url(re.compile(r"/pending"))
    expect(page.locator("#pending-sentence")).to_contain_text("pending brokerages", timeout=TIMEOUT)
    expect(page.locator("#pending-grid")).to_contain_text("All 10 queues skipped; most by -lowmemory 8")
    page.locator("#pending-grid .ag-header-cell-text", has_text="kind").click()
    _settle(page)
    _shots(page, shot, "pending")
    assert console_errors == []


def test_queues_says_why_a_named_queue_is_not_in_the_list(page, live_server, console_errors, shot) -> None:
    """Filtering the skipped table for an analysis queue on a production task says the broker never considers it."""
    page.goto(live_server + "/queues?task=1")
    expect(page.locator("#queues-ranked .ag-row").first).to_be_visible(timeout=TIMEOUT)
    page.locator("#queues-skipped .ag-floating-filter-input input").first.fill("BNL-ATLAS_Q9")
    expect(page.locator("#queues-why-answer")).to_contain_text("never considers BNL-ATLAS_Q9", timeout=TIMEOUT)
    page.locator("#queues-why").fill("AGLT2_Q2")
    page.locator("#queues-why").press("Enter")
    expect(page.locator("#queues-why-answer")).to_contain_text("AGLT2_Q2", timeout=TIMEOUT)
    expect(page).to_have_url(re.compile(r"why=AGLT2_Q2"), timeout=TIMEOUT)
    _settle(page)
    _shots(page, shot, "queues_why")
    assert console_errors == []


def test_network_explains_a_clicked_link_in_view(page, live_server, console_errors, shot) -> None:
    """Clicking a congested link shows its sentence in view and puts the link into the URL; ?nucleus= keeps one column."""
    page.goto(live_server + "/network?metric=queued")
    page.locator("#network-congested .ag-row").first.click(timeout=TIMEOUT)
    expect(page.locator("#link-sentence")).to_contain_text("NQUEUED_SAT_CAP", timeout=TIMEOUT)
    expect(page.locator("#link-sentence")).to_be_in_viewport()
    expect(page).to_have_url(re.compile(r"link="), timeout=TIMEOUT)
    _settle(page)
    _shots(page, shot, "network_link")
    page.goto(live_server + "/network?nucleus=BNL-ATLAS")
    expect(page.locator("#network-heatmap .xtick")).to_have_count(1, timeout=TIMEOUT)
    assert console_errors == []


def test_stabilizer_queue_permalink_keeps_every_user(page, live_server, console_errors, shot) -> None:
    """A shared ?queue= link opens on every user at that queue, sorted by excess, and the URL stays as shared."""
    page.goto(live_server + "/stabilizer?queue=BNL-ATLAS_Q9")
    expect(page.locator("#stab-content .ag-center-cols-container .ag-row")).to_have_count(2, timeout=TIMEOUT)
    expect(page.locator("#stab-content .ag-header-cell-text", has_text="excess")).to_be_visible()
    _settle(page)
    assert page.url.endswith("/stabilizer?queue=BNL-ATLAS_Q9")
    _shots(page, shot, "stabilizer_queue")
    assert console_errors == []


def test_tuning_impact_names_old_and_new_top(page, live_server, console_errors, shot) -> None:
    """The whole-grid impact lists each moved task with "old → new" top and what moved it, and load totals."""
    page.goto(live_server + "/tuning?task=1&NQUEUED_SAT_CAP=1")
    expect(page.locator("#tune-grid-impact .ag-header-cell-text", has_text="top: old → new")).to_be_visible(
        timeout=30_000
    )
    expect(page.locator("#tune-grid-impact .ag-center-cols-container")).to_contain_text("→")
    expect(page.locator(".load-total").first).to_contain_text("in total")
    _settle(page)
    _shots(page, shot, "tuning_impact")
    assert console_errors == []


def test_navbar_search_opens_the_page_and_no_page_scrolls_sideways(page, live_server, console_errors, shot) -> None:
    """The navbar search opens a queue's page; at 1100 px the navbar stays on one line and no page scrolls sideways."""
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(live_server + "/")
    page.locator("#nav-search").fill("aglt2_q2")
    page.locator("#nav-search").press("Enter")
    expect(page).to_have_url(re.compile(r"/queue\?name=AGLT2_Q2"), timeout=30_000)
    expect(page.get_by_text("Queue AGLT2_Q2")).to_be_visible(timeout=TIMEOUT)
    for path in ("/", "/queues?task=2", "/nuclei", "/network", "/stabilizer", "/tasks", "/task?id=3", "/pending",
                 "/tuning?task=1", "/dirac"):  # fmt: skip
        page.goto(live_server + path)
        _settle(page)
        tops = page.evaluate(
            "[...document.querySelectorAll('.navbar .nav-link')].map(e => Math.round(e.getBoundingClientRect().top))"
        )
        assert len(set(tops)) == 1, f"navbar wraps on {path}: {tops}"
        assert page.evaluate("document.documentElement.scrollWidth") <= 1100, f"{path} scrolls sideways"
    shot("dirac_1100")
    assert console_errors == []


def test_queue_table_filter_and_sort_are_in_the_url(page, live_server, console_errors) -> None:
    """Filtering and sorting the queue table writes both into the URL, and opening that URL restores them."""
    page.goto(live_server + "/queues?task=1")
    expect(page.locator("#queues-grid .ag-row").first).to_be_visible(timeout=TIMEOUT)
    _settle(page)  # the page's callbacks are done: the grid is not drawn again under the typed filter
    page.locator("#queues-grid .ag-floating-filter-input input").nth(1).fill("MWT2")
    expect(page.locator("#queues-grid .ag-center-cols-container .ag-row")).to_have_count(3, timeout=TIMEOUT)
    page.locator("#queues-grid .ag-header-cell-text", has_text="corecount").click()
    expect(page).to_have_url(re.compile(r"q_f=.*MWT2.*q_s=corecount|q_s=corecount.*q_f=.*MWT2"), timeout=TIMEOUT)
    shared = page.url
    page.goto(shared)
    expect(page.locator("#queues-grid .ag-center-cols-container .ag-row")).to_have_count(3, timeout=TIMEOUT)
    assert console_errors == []


def test_queue_drills_down_to_its_site(page, live_server, console_errors, shot) -> None:
    """A queue's page shows its site and cloud totals; the site link opens the queue table filtered to that site."""
    page.goto(live_server + "/queue?name=AGLT2_Q2")
    expect(page.locator(".rollup-table")).to_contain_text("cloud CERN", timeout=TIMEOUT)
    _settle(page)
    _shots(page, shot, "queue_rollup")
    page.get_by_role("link", name="site AGLT2").click()
    expect(page).to_have_url(re.compile(r"/queues\?site=AGLT2"), timeout=TIMEOUT)
    expect(page.locator("#queues-grid .ag-center-cols-container .ag-row")).to_have_count(3, timeout=TIMEOUT)
    assert console_errors == []
