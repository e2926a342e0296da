"""Browser benchmark: median time from picking a task on /queues to its brokerage (ranked table) being painted."""

from __future__ import annotations

import os
import re
import statistics
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"]  # fmt: skip
PICKS = int(os.environ.get("BENCH_PICKS", "25"))


def _grid_source() -> str:
    """Use the demo grid when the generator exists, else the small test grid (said in the output)."""
    try:
        import brokerage.synth.demo  # noqa: F401
    except ImportError:
        from tests.app.sample import sample_grid

        path = Path(tempfile.mkdtemp()) / "sample.json"
        sample_grid().to_json(path)
        os.environ["BROKERAGE_SNAPSHOT"] = str(path)
        return "sample grid (12 queues; brokerage.synth.demo not available)"
    os.environ.pop("BROKERAGE_SNAPSHOT", None)
    return "demo grid (brokerage.synth.demo.demo_snapshot defaults)"


def _wait_task(page, tid: int) -> None:
    """Wait until the decision panel shows task TID (its hidden marker is written with the panel's data)."""
    page.wait_for_function(f"document.getElementById('decision-task')?.textContent === '{tid}'", timeout=60_000)


def _picks(snap, options: list[dict], n: int) -> list[tuple[int, str]]:
    """N tasks with candidates, each with its top queue, every top differing from the one before (so a stale
    table can never pass for the new one)."""
    from brokerage.brokers.router import run_job_brokerage
    from brokerage.model.gdpconfig import Config

    out: list[tuple[int, str]] = []
    for o in options[1:]:
        d = run_job_brokerage(snap, int(o["value"]), Config())  # not through the app's cache: picks stay cold
        if d.candidates and (not out or out[-1][1] != d.candidates[0].name):
            out.append((int(o["value"]), d.candidates[0].name))
        if len(out) == n:
            break
    return out


def main() -> None:
    """Serve the app, pick PICKS distinct tasks in Chromium and print the median pick-to-paint time."""
    os.environ.pop("DATABASE_URL", None)
    label = _grid_source()
    from playwright.sync_api import sync_playwright
    from werkzeug.serving import make_server

    from app.main import app, state
    from app.viewmodels.queues import task_options
    from benchmarks.paint_timer import INIT_SCRIPT, also_elapsed_ms, arm, elapsed_ms

    app.server.test_client().get("/")
    snap = state.snapshot()
    options = task_options(snap)
    picks = _picks(snap, options, PICKS)
    srv = make_server("127.0.0.1", 0, app.server, threaded=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_port}/queues?task={options[0]['value']}"
    times: list[float] = []
    charts: list[float] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.add_init_script(INIT_SCRIPT)
        page.goto(url)
        _wait_task(page, options[0]["value"])
        for tid, top in picks:
            page.locator("#queues-task").click()
            page.locator(".dash-dropdown-search").fill(str(tid))
            option = page.get_by_role("option", name=re.compile(rf"^{tid} ·")).first
            option.wait_for()
            # painted = the marker names the task and the ranked grid shows its top queue
            arm(page, f"document.getElementById('decision-task')?.textContent === '{tid}' && "
                      f"(document.getElementById('queues-ranked')?.innerText || '').includes({top!r})",
                also_js=f"(document.getElementById('queues-factors')?.textContent || '').includes({'1. ' + top!r})")  # fmt: skip
            option.click()
            times.append(elapsed_ms(page) / 1000.0)
            charts.append(also_elapsed_ms(page) / 1000.0)  # the charts follow the table (their own callback)
            _wait_task(page, tid)
        browser.close()
    srv.shutdown()
    print(f"grid: {label}: {len(snap.queues)} queues, {len(snap.tasks)} tasks")
    print(f"select task -> ranked table painted: median {statistics.median(times) * 1000:.0f} ms over {len(times)} distinct tasks "
          f"(min {min(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms; cold brokerage, no cache hits; "
          f"timed in the page from the click event to the frame that paints the ranked table)")  # fmt: skip
    print(f"select task -> funnel and factor charts painted: median {statistics.median(charts) * 1000:.0f} ms "
          f"(min {min(charts) * 1000:.0f} ms, max {max(charts) * 1000:.0f} ms)")  # fmt: skip


if __name__ == "__main__":
    main()
