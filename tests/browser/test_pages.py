"""Every page opens in Chromium, answers one interaction and leaves the console clean."""

from __future__ import annotations

import re

from playwright.sync_api import expect

TIMEOUT = 15_000


def pick(page, dropdown: str, search: str, option: str) -> None:
    """Choose an option of a Dash 4 dropdown through its search box."""
    page.locator(dropdown).click()
    page.locator(".dash-dropdown-search").fill(search)
    page.get_by_role("option", name=re.compile(option)).first.click()


def _settle(page) -> None:
    page.wait_for_load_state("networkidle")
    expect(page.locator("._dash-loading")).to_have_count(0, timeout=TIMEOUT)


def test_overview(page, live_server, console_errors, shot) -> None:
    """The overview shows KPIs and the skip census, and a KPI links to the queues page."""
    page.goto(live_server + "/")
    expect(page.locator("#census-sentence")).to_contain_text("waiting tasks analysed", timeout=TIMEOUT)
    _settle(page)
    shot("overview")
    page.get_by_text("online queues").click()
    expect(page).to_have_url(re.compile(r"/queues"))
    assert console_errors == []


def test_queues_pick_task_updates_url(page, live_server, console_errors, shot) -> None:
    """Picking a task redraws the brokerage and writes ?task= into the address."""
    page.goto(live_server + "/queues?task=1")
    expect(page.locator("#queues-ranked .ag-row").first).to_be_visible(timeout=TIMEOUT)
    pick(page, "#queues-task", "evgen", r"^2 · ready")
    expect(page).to_have_url(re.compile(r"task=2"), timeout=TIMEOUT)
    expect(page.locator("#job-decision-view")).to_contain_text("pending", timeout=TIMEOUT)
    _settle(page)
    shot("queues")
    assert console_errors == []


def test_queues_criteria_permalink(page, live_server, console_errors, shot) -> None:
    """A permalink with criteria filters the skipped table to that code."""
    page.goto(live_server + "/queues?task=2&criteria=-cpucore")
    expect(page.locator("#job-decision-view")).to_contain_text("Skipped queues (criteria -cpucore): 6", timeout=TIMEOUT)
    _settle(page)
    shot("queues_criteria")
    assert console_errors == []


def test_nuclei(page, live_server, console_errors, shot) -> None:
    """The nuclei page shows storage and a task's nucleus brokerage after picking a task."""
    page.goto(live_server + "/nuclei?task=3")
    expect(page.locator("#nuclei-decision")).to_contain_text("nuclei considered", timeout=TIMEOUT)
    _settle(page)
    shot("nuclei")
    assert console_errors == []


def test_network_click_cell(page, live_server, console_errors, shot) -> None:
    """Switching the metric and clicking a heatmap cell shows the link's numbers and rule."""
    page.goto(live_server + "/network")
    page.get_by_label("closeness (AGIS_closeness)").check()
    expect(page).to_have_url(re.compile(r"metric=closeness"), timeout=TIMEOUT)
    _settle(page)
    page.locator("#network-heatmap .nsewdrag").first.click(position={"x": 40, "y": 20})
    expect(page.locator("#link-title")).to_be_visible(timeout=TIMEOUT)
    shot("network")
    assert console_errors == []


def test_stabilizer_pick_user(page, live_server, console_errors, shot) -> None:
    """Picking a user draws their queue lengths and writes ?user= into the address."""
    page.goto(live_server + "/stabilizer")
    pick(page, "#stab-user", "bob", r"^bob$")
    expect(page).to_have_url(re.compile(r"user=bob"), timeout=TIMEOUT)
    _settle(page)
    shot("stabilizer")
    assert console_errors == []


def test_task_states_window_and_task_link(page, live_server, console_errors, shot) -> None:
    """The state graph renders, the window switch updates the URL, and a task link opens its detail page."""
    page.goto(live_server + "/tasks")
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=TIMEOUT)
    page.get_by_label("30d").check()
    expect(page).to_have_url(re.compile(r"window=30d"), timeout=TIMEOUT)
    _settle(page)
    shot("tasks")
    page.locator("a[href='/task?id=6']").first.click()
    expect(page.get_by_role("heading", name="Task 6")).to_be_visible(timeout=TIMEOUT)
    _settle(page)
    shot("task_detail")
    assert console_errors == []


def test_queue_detail(page, live_server, console_errors, shot) -> None:
    """A queue detail page lists its attributes and job counts."""
    page.goto(live_server + "/queue?name=BNL-ATLAS_Q9")
    expect(page.get_by_role("heading", name="Queue BNL-ATLAS_Q9")).to_be_visible(timeout=TIMEOUT)
    _settle(page)
    shot("queue_detail")
    assert console_errors == []


def test_task_states_diagram_and_stuck_tasks(page, live_server, console_errors, shot) -> None:
    """The state diagram names JEDI's statuses with their task counts, and the stuck table lists tasks not final,
    longest in their status first, each with a reason (the assigning task waits for TaskBroker)."""
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.goto(live_server + "/tasks")
    expect(page.locator("#tasks-diagram")).to_contain_text("running", timeout=TIMEOUT)
    stuck = page.locator(".card", has_text="Stuck: tasks longest in their status")
    expect(stuck.locator(".ag-row").first).to_be_visible(timeout=TIMEOUT)
    expect(stuck).to_contain_text("waits for TaskBroker")
    _settle(page)
    shot("tasks_diagram_1600")
    page.set_viewport_size({"width": 1100, "height": 1000})
    page.goto(live_server + "/tasks")
    expect(page.locator("#tasks-diagram")).to_contain_text("running", timeout=TIMEOUT)
    _settle(page)
    shot("tasks_diagram_1100")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    assert console_errors == []


def test_task_states_simulate_the_next_hours_from_the_page(page, live_server, console_errors, shot) -> None:
    """Simulate with 2 hours on the task states page runs the stored config in the background (progress bar), then
    the diagram's title says the next 2 h are simulated (the sample grid is a file: the run is drawn, not stored)."""
    from brokerage.runs import engine

    saved = engine._engine
    engine._engine = engine._Engine(workers=0)  # the small sample grid runs in the server process
    try:
        page.set_viewport_size({"width": 1600, "height": 1000})
        page.goto(live_server + "/tasks")
        expect(page.locator("#tasks-diagram")).to_contain_text("running", timeout=TIMEOUT)
        page.locator("#tasks-sim-hours").fill("2")
        page.locator("#tasks-sim-go").click()
        expect(page.locator("#tasks-sim-status")).to_contain_text("the next 2 h drawn in orange", timeout=TIMEOUT)
        expect(page.locator("#tasks-diagram")).to_contain_text("the next 2 h simulated", timeout=TIMEOUT)
        _settle(page)
        shot("tasks_simulated_1600")
        page.locator("#tasks-sim-hours").fill("99")
        page.locator("#tasks-sim-go").click()
        expect(page.locator("#tasks-sim-refused")).to_contain_text("hours: expected a number", timeout=TIMEOUT)
    finally:
        engine._engine = saved
    assert console_errors == []
