"""Tuning page in headless Chromium: an edit re-ranks the task and the grid, bad values are refused, permalinks work."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
TIMEOUT = 60_000


def value_cell(page, key: str):
    """The editable value cell of gdpconfig KEY in the editor grid."""
    return page.locator(f'#tune-editor .ag-center-cols-container .ag-row[row-id="{key}"] .ag-cell[col-id="value"]')


def edit(page, key: str, value: str) -> None:
    """Click KEY's value cell, type VALUE and press Enter, as an operator does."""
    cell = value_cell(page, key)
    cell.scroll_into_view_if_needed()
    cell.click()
    box = cell.locator("input")
    box.fill(value)
    box.press("Enter")


def test_edit_nqueued_sat_cap_rerenders_the_ranking(page, live_server, console_errors, shot) -> None:
    """Setting NQUEUED_SAT_CAP to 451 changes task 1's weight factors, the grid counts it, and the URL carries the edit."""
    page.goto(f"{live_server}/tuning?task=1")
    diff = page.locator("#tune-task-diff")
    expect(diff).to_contain_text("No change for this task", timeout=20_000)
    expect(page.locator("#tune-grid-view")).to_contain_text("No edits yet")
    edit(page, "NQUEUED_SAT_CAP", "451")
    expect(diff).to_contain_text("weight factors changed", timeout=20_000)
    expect(page.locator("#tune-task-view")).to_contain_text("Weight factors that changed")
    expect(page.locator("#tune-edit-summary")).to_contain_text("150 → 451")
    expect(page).to_have_url(re.compile(r"NQUEUED_SAT_CAP=451"))
    expect(page.locator("#tune-grid-view")).to_contain_text("brokerages compared", timeout=30_000)
    expect(page.locator("#tune-grid-timing")).to_contain_text("brokerage runs recomputed")
    shot("tuning_edit")
    assert console_errors == []


def test_out_of_range_value_is_refused_inline(page, live_server, console_errors) -> None:
    """A value below the minimum is shown next to the control with the allowed range, and is not applied."""
    page.goto(f"{live_server}/tuning?task=1")
    expect(page.locator("#tune-task-diff")).to_contain_text("No change for this task", timeout=20_000)
    edit(page, "NQUEUED_SAT_CAP", "0")
    expect(page.locator("#tune-edit-summary")).to_contain_text("refused: NQUEUED_SAT_CAP", timeout=20_000)
    expect(page.locator("#tune-edit-summary")).to_contain_text("an integer in [1, 10000000]")
    expect(value_cell(page, "NQUEUED_SAT_CAP")).to_have_class(re.compile("tune-invalid"))
    expect(page.locator("#tune-task-diff")).to_contain_text("No change for this task")
    # an emptied box and a fraction for an integer parameter are refused too, never silently dropped
    edit(page, "NW_THRESHOLD", "")
    expect(page.locator("#tune-edit-summary")).to_contain_text("NW_THRESHOLD: a value is required", timeout=20_000)
    edit(page, "MAX_SITE_CANDIDATES", "2.5")
    expect(page.locator("#tune-edit-summary")).to_contain_text("expected an integer in [1, 1000]", timeout=20_000)
    assert console_errors == []


def test_permalink_reopens_the_what_if(page, live_server, console_errors, shot) -> None:
    """Opening a permalink with NW_ACTIVE=false shows task 1's top queue moving from CERN-PROD_Q8 to MWT2_Q11."""
    page.goto(f"{live_server}/tuning?task=1&NW_ACTIVE=false")
    expect(page.locator("#tune-task-diff")).to_contain_text("Top queue CERN-PROD_Q8 → MWT2_Q11", timeout=20_000)
    expect(page.locator("#tune-grid-view")).to_contain_text("top candidate changed", timeout=30_000)
    expect(page.locator("#tune-save-result")).to_be_empty()
    shot("tuning_permalink")
    assert console_errors == []


def test_export_report_downloads_a_file(page, live_server, console_errors) -> None:
    """Exporting the selected task's report under an edit runs in the background and downloads the HTML file."""
    page.goto(f"{live_server}/tuning?task=1&NW_ACTIVE=false")
    expect(page.locator("#tune-task-diff")).to_contain_text("Top queue", timeout=20_000)
    with page.expect_download(timeout=60_000) as info:
        page.locator("#tune-report-button").click()
    download = info.value
    assert download.suggested_filename.endswith(".html") and "task-1" in download.suggested_filename
    text = Path(download.path()).read_text(encoding="utf-8")
    assert "NW_ACTIVE" in text and "<svg" in text
    expect(page.locator("#tune-report-status")).to_contain_text("download")
    # a second export first clears the finished one's line, so the old file cannot be taken for the new one
    page.get_by_label("CSV").check()
    with page.expect_download(timeout=60_000) as again:
        page.locator("#tune-report-button").click()
        expect(page.locator("#tune-report-status")).not_to_contain_text(".html", timeout=5_000)
    assert again.value.suggested_filename.endswith(".csv")
    assert console_errors == []


def test_grid_run_shows_progress_and_can_be_cancelled(page, live_server, console_errors, monkeypatch) -> None:
    """The whole-grid run (a job on the Dask cluster) reports its progress while it runs, and one Cancel click stops
    it and says so, even when Dash merges the click with a poll tick into one call (app/callbacks/jobdrive.fired)."""
    from app.main import services
    from app.services import work
    from tests.app.jobfns import slow_whatif

    monkeypatch.setattr(work, "grid_whatif", slow_whatif)  # the job the page starts is this slow stand-in
    page.goto(f"{live_server}/tuning?task=1")
    expect(page.locator("#tune-task-diff")).to_contain_text("No change for this task", timeout=20_000)
    edit(page, "NQUEUED_SAT_CAP", "377")
    expect(page.locator("#tune-grid-progress-box")).to_be_visible(timeout=10_000)
    expect(page.locator("#tune-grid-progress")).to_contain_text("/ 400 brokerages", timeout=20_000)
    page.locator("#tune-grid-cancel").click()
    expect(page.locator("#tune-grid-view")).to_contain_text("Whole-grid run cancelled", timeout=10_000)
    expect(page.locator("#tune-grid-progress-box")).to_be_hidden()
    assert services.jobs.poll(services.whatif.grid_job_id({"NQUEUED_SAT_CAP": 377})).state == "cancelled"
    assert console_errors == []


def test_the_next_hours_stored_vs_proposed(page, live_server, console_errors, monkeypatch) -> None:
    """'Simulate the next 6 h' with THROTTLE_THRESHOLD 0.5 runs stored and proposed and shows the headline figures
    side by side with the change, and links to each run on the simulation page; without an edit it says to edit."""
    from brokerage.runs import engine

    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))
    page.goto(f"{live_server}/tuning")
    page.locator("#tune-future-run").click()
    expect(page.locator("#tune-future-note")).to_contain_text("Edit a value first", timeout=TIMEOUT)
    page.goto(f"{live_server}/tuning?THROTTLE_THRESHOLD=0.5")
    page.locator("#tune-future-replicas").select_option("1")  # one run each: the side-by-side table
    page.locator("#tune-future-run").click()
    result = page.locator("#tune-future-result")
    expect(result).to_contain_text("jobs finished", timeout=120_000)
    expect(result.locator("th").filter(has_text="proposed")).to_be_visible()
    href = result.locator("a", has_text="proposed").get_attribute("href") or ""
    assert "THROTTLE_THRESHOLD=0.5" in href and "hours=6" in href
    assert console_errors == []


def test_a_big_report_is_fetched_from_its_link(page, live_server, console_errors, monkeypatch) -> None:
    """A report above the inline limit is not pushed through the callback: the browser downloads it from its link."""
    import app.callbacks.reports as cb

    monkeypatch.setattr(cb, "INLINE_LIMIT", 10)
    page.goto(f"{live_server}/tuning?task=1")
    expect(page.locator("#tune-editor .ag-row").first).to_be_visible(timeout=TIMEOUT)
    page.get_by_label("every waiting task").check()
    page.get_by_label("CSV").check()
    with page.expect_download(timeout=TIMEOUT) as info:
        page.locator("#tune-report-button").click()
    assert info.value.suggested_filename.endswith(".csv.gz")
    assert console_errors == []
