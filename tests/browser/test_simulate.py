"""The simulation page in a real browser: a permalink runs stored vs what-if and shows the answer; bad hours say so."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

TIMEOUT = 60_000


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulations run in the server process (no cluster is started for the small sample grid)."""
    from brokerage.runs import engine

    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))


def test_permalink_runs_stored_vs_whatif(page, live_server, console_errors, shot, in_process) -> None:
    """Opening /simulate?hours=2&compare=1&THROTTLE_THRESHOLD=0.5 runs both configs and shows the headline
    side by side, the share charts and the rule table, at 1600 and 1100 px."""
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.goto(f"{live_server}/simulate?hours=2&compare=1&THROTTLE_THRESHOLD=0.5")
    expect(page.locator("#sim-summary")).to_contain_text("2 hours simulated", timeout=TIMEOUT)
    headline = page.locator("#sim-content .ag-header-cell-text")
    expect(headline.filter(has_text="what-if").first).to_be_visible()
    expect(page.locator("#sim-content")).to_contain_text("jobs finished")
    expect(page.locator("#sim-content")).to_contain_text("Running jobs per global share")
    expect(page).to_have_url(re.compile(r"THROTTLE_THRESHOLD=0\.5.*hours=2|hours=2.*THROTTLE_THRESHOLD=0\.5"))
    tasks_card = page.locator(".card", has_text="Task status changes and their causes")
    tasks_card.scroll_into_view_if_needed()
    expect(tasks_card.locator(".ag-row").first).to_be_visible(timeout=TIMEOUT)
    page.evaluate("window.scrollTo(0, 0)")
    shot("simulate_1600")
    page.set_viewport_size({"width": 1100, "height": 1000})
    # the charts follow the window on plotly's debounced resize: the page must fit once they have
    page.wait_for_function("document.documentElement.scrollWidth <= window.innerWidth + 1", timeout=TIMEOUT)
    page.wait_for_timeout(500)  # the grids re-fit their columns after the resize too
    shot("simulate_1100")
    assert console_errors == []


def test_bad_hours_are_refused_inline(page, live_server, console_errors, in_process) -> None:
    """hours=500 is above the page's 48: the page says so and runs nothing."""
    page.goto(f"{live_server}/simulate?hours=500")
    expect(page.locator(".alert")).to_contain_text("hours: '500' is not allowed", timeout=TIMEOUT)
    expect(page.locator("#sim-summary")).to_have_count(0)
    assert console_errors == []


def test_page_without_hours_waits_for_run(page, live_server, console_errors, in_process) -> None:
    """/simulate alone runs nothing; Run simulates the stored config and draws its share and rule charts."""
    page.goto(f"{live_server}/simulate")
    expect(page.locator("#sim-run")).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(500)
    expect(page.locator("#sim-summary")).to_have_count(0)
    page.locator("#sim-hours").fill("1")
    page.locator("#sim-run").click()
    expect(page.locator("#sim-summary")).to_contain_text("1 hour simulated", timeout=TIMEOUT)
    expect(page.locator("#sim-content .js-plotly-plot").first).to_be_visible(timeout=TIMEOUT)
    assert page.locator("#sim-content .js-plotly-plot").count() >= 3
    assert console_errors == []


def test_task_commands_typed_on_the_page_run_and_show(page, live_server, console_errors, in_process) -> None:
    """Typing '0.5h:5:pause 0.7h:6:pause' and Run: the pause of running task 5 is applied, the pause of done task 6
    is refused with its rule, both listed in the Task commands card; the URL keeps them."""
    page.goto(f"{live_server}/simulate")
    page.locator("#sim-hours").fill("1")
    page.locator("#sim-commands").fill("0.5h:5:pause 0.7h:6:pause")
    page.locator("#sim-commands").press("Enter")
    page.locator("#sim-run").click()
    card = page.locator(".card", has_text="Task commands")
    expect(card).to_contain_text("applied", timeout=TIMEOUT)
    expect(card).to_contain_text("pause is not allowed in status done")
    expect(page).to_have_url(re.compile(r"cmd=0\.5h%3A5%3Apause"))
    assert console_errors == []


def test_a_bad_task_command_in_the_url_is_refused_inline(page, live_server, console_errors, in_process) -> None:
    """cmd=1h:5:explode names the command and what is allowed; the page still opens and runs nothing."""
    page.goto(f"{live_server}/simulate?hours=2&cmd=1h:5:explode")
    expect(page.locator(".alert")).to_contain_text("cmd: 'explode' is not a task command", timeout=TIMEOUT)
    expect(page.locator("#sim-run")).to_be_visible()
    expect(page.locator("#sim-summary")).to_have_count(0)
    assert console_errors == []


def test_any_jobs_history_is_replayed_on_the_page(page, live_server, console_errors, shot, in_process) -> None:
    """The permalink /simulate?hours=1&seed=2&job=1411 runs the simulation, then replays it until job 1411 (the first
    the run generated, for task 5) is final and shows what it was with its steps from JobGenerator on and a
    permalink; the datasets card lists task 5's input and output files; typing PandaID 2 (a job the snapshot held)
    and 'Show its history' does the same for it; an id the run never made is refused with the range it made."""
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.goto(f"{live_server}/simulate?hours=1&seed=2&job=1411")
    expect(page.locator("#sim-summary")).to_contain_text("1 hour simulated", timeout=TIMEOUT)
    expect(page.locator("#sim-job-facts")).to_contain_text("Job 1411 of task 5 at", timeout=TIMEOUT)
    expect(page.locator("#sim-job-box")).to_contain_text("JobGenerator: generated by JEDI")
    href = page.locator("#sim-job-permalink").get_attribute("href") or ""
    assert "job=1411" in href and "hours=1" in href and "seed=2" in href
    datasets = page.locator(".card", has_text="Datasets, files and events per task")
    datasets.scroll_into_view_if_needed()
    expect(datasets.locator(".ag-row").first).to_contain_text("5", timeout=TIMEOUT)
    box = page.locator("#sim-job-box")
    box.scroll_into_view_if_needed()
    page.locator("#sim-job-id").fill("2")
    page.locator("#sim-job-go").click()
    expect(page.locator("#sim-job-facts")).to_contain_text("Job 2 of task (from the snapshot) at", timeout=TIMEOUT)
    box.scroll_into_view_if_needed()
    shot("simulate_job_history_1600")
    page.locator("#sim-job-id").fill("99999999")
    page.locator("#sim-job-go").click()
    expect(page.locator("#sim-job-refused")).to_contain_text("this run made jobs 1 to", timeout=TIMEOUT)
    assert console_errors == []
