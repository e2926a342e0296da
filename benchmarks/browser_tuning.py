"""Browser benchmark: edit a gdpconfig value on /tuning; median time until the task's before/after and the
whole-grid impact are painted, on the demo grid."""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"]  # fmt: skip
KEY = "NQUEUED_SAT_CAP"


def _value_cell(key: str) -> str:
    return f'#tune-editor .ag-center-cols-container .ag-row[row-id="{key}"] .ag-cell[col-id="value"]'


def main() -> None:
    """Serve the app on the demo grid, apply EDITS distinct values of NQUEUED_SAT_CAP and print medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edits", type=int, default=int(os.environ.get("BENCH_EDITS", "10")))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    faulthandler.dump_traceback_later(600, exit=True)  # a stuck run prints where it hangs instead of idling
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("BROKERAGE_SNAPSHOT", None)
    os.environ["BROKERAGE_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-tuning-")  # no runs left from earlier
    from playwright.sync_api import sync_playwright
    from werkzeug.serving import make_server

    from app.main import app, services
    from benchmarks.paint_timer import INIT_SCRIPT, arm, elapsed_ms, started_at

    app.server.test_client().get("/")
    snap = services.state.snapshot()
    t0 = time.perf_counter()
    base = services.whatif.base_run()  # the stored config's run exists before the first edit, as after start-up warming
    baseline_s = time.perf_counter() - t0
    task = services.whatif.showcase_task("jobs")  # as the page opens
    srv = make_server("127.0.0.1", 0, app.server, threaded=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_port}/tuning?task={task}"
    task_ms: list[float] = []
    grid_ms: list[float] = []
    values = [20 + 7 * i for i in range(args.edits)]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1200})
        page.add_init_script(INIT_SCRIPT)
        page.goto(url)
        page.wait_for_selector("#tune-task-diff", timeout=60_000)
        cell = page.locator(_value_cell(KEY))
        for v in values:
            fp = services.state.effective_config({KEY: v}).fingerprint()
            cell.click()
            box = cell.locator("input")
            box.fill(str(v))
            arm(page, f"document.getElementById('tune-task-diff')?.dataset.config === '{fp}'")
            box.press("Enter")
            task_ms.append(elapsed_ms(page))
            arm(page, f"document.getElementById('tune-grid-impact')?.dataset.config === '{fp}'", started_at(page))
            # the grid view may already be painted when re-armed; then the check fires on the next mutation
            page.wait_for_function(
                f"document.getElementById('tune-grid-impact')?.dataset.config === '{fp}'", timeout=120_000
            )
            page.evaluate("() => { const b = window.__bench; if (b.done === null) { b.done = -1; "
                          "requestAnimationFrame(t => { b.done = t; }); } }")  # fmt: skip
            grid_ms.append(elapsed_ms(page, 120_000))
        page.screenshot(path=str(ROOT / "artifacts" / "screenshots" / "tuning_demo.png"), full_page=True)
        browser.close()
    srv.shutdown()
    out = {
        "grid": f"demo grid: {len(snap.queues)} queues, {len(snap.tasks)} tasks, {len(base.outcomes)} brokerage runs",
        "task": task,
        "edits": len(values),
        "baseline_s": round(baseline_s, 2),
        "task_repaint_median_ms": round(statistics.median(task_ms)),
        "grid_impact_median_ms": round(statistics.median(grid_ms)),
        "task_repaint_ms": [round(x) for x in task_ms],
        "grid_impact_ms": [round(x) for x in grid_ms],
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(out["grid"], f"(baseline run {out['baseline_s']} s, before the first edit)")
    print("timed in the page: from the Enter keydown to the frame that paints the result")
    print(
        f"edit {KEY} -> task before/after painted: median {out['task_repaint_median_ms']} ms over {len(values)} edits"
    )
    print(
        f"edit {KEY} -> whole-grid impact painted:  median {out['grid_impact_median_ms']} ms over {len(values)} edits"
    )


if __name__ == "__main__":
    main()
