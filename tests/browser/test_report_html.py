"""HTML reports open from file:// in headless Chromium with the network cut off and show their SVG charts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, expect

from brokerage.brokers.router import tasks_needing_nucleus
from brokerage.model.gdpconfig import Config
from brokerage.model.waiting import waiting_task_ids
from brokerage.report import build_report, render
from brokerage.synth.demo import demo_snapshot
from tests.browser.conftest import SHOTS

TIMEOUT = 10_000


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A whole-grid report (with a what-if override) and a one-task report of a task that also needs a nucleus."""
    snap = demo_snapshot(seed=0, queues=200, tasks=120)
    folder = tmp_path_factory.mktemp("reports")
    meta = {"origin": "demo grid seed 0"}
    whole = build_report(snap, Config(), None, overrides={"NQUEUED_SAT_CAP": 300}, meta=meta)
    assigning = tasks_needing_nucleus(snap, waiting_task_ids(snap))
    chosen = next(e.task for e in whole.tasks if e.task in assigning and e.nucleus and e.nucleus.candidates)
    one = build_report(snap, Config(), [chosen], meta=meta)
    paths = {"all": folder / "all.html", "task": folder / "task.html"}
    paths["all"].write_bytes(render(whole, "html"))
    paths["task"].write_bytes(render(one, "html"))
    paths["task_id"] = Path(str(chosen))
    return paths


@pytest.fixture
def offline(page: Page) -> Iterator[list[str]]:
    """Abort every request that is not a file:// load; yields the URLs that were attempted."""
    attempted: list[str] = []

    def handle(route: Route) -> None:
        url = route.request.url
        if url.startswith("file://"):
            route.continue_()
        else:
            attempted.append(url)
            route.abort()

    page.route("**/*", handle)
    yield attempted
    page.unroute("**/*")


def _charts_have_size(page: Page, ids: list[str]) -> None:
    for ident in ids:
        chart = page.locator(f"svg#{ident}")
        expect(chart).to_be_visible(timeout=TIMEOUT)
        box = chart.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 20, (ident, box)
        bars = chart.locator("rect")
        assert bars.count() > 0
        assert max(bars.nth(i).bounding_box()["width"] for i in range(bars.count())) > 10  # type: ignore[index]


def test_all_tasks_report_offline(page: Page, reports: dict[str, Path], offline: list[str], console_errors) -> None:
    """The whole-grid report opens offline with no request and no console error and shows its four charts."""
    page.goto(reports["all"].as_uri())
    expect(page.locator("h1")).to_contain_text("all waiting tasks")
    _charts_have_size(page, ["chart-criteria", "chart-queues", "chart-nuclei", "chart-nucleus-criteria"])
    expect(page.locator("#meta")).to_contain_text("NQUEUED_SAT_CAP = 300 (stored: 150)")
    expect(page.locator("table.tasks tbody tr").first).to_be_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "report_all.png"), full_page=True)
    assert offline == []
    assert console_errors == []


def test_task_report_offline(page: Page, reports: dict[str, Path], offline: list[str], console_errors) -> None:
    """A one-task report opens offline and shows the job and nucleus funnels and the share charts."""
    tid = reports["task_id"].name
    page.goto(reports["task"].as_uri())
    expect(page.locator("h1")).to_contain_text(f"task {tid}")
    charts = [f"chart-{kind}-{tid}-{broker}" for broker in ("job", "nucleus") for kind in ("funnel", "share")]
    _charts_have_size(page, charts)
    expect(page.get_by_text("chosen nucleus (seeded draw)")).to_be_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "report_task.png"), full_page=True)
    assert offline == []
    assert console_errors == []
