"""Every long job through gunicorn (2 threaded workers sharing one Dask cluster) on the demo-sized grid: progress,
Cancel and the result, in Chromium; polls land on either worker and see the same job."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ROOT
from tests.browser.test_gunicorn import _free_port, _get

pytestmark = pytest.mark.browser
START_S = 180
LONG = 120_000  # ms: a whole-grid job on two cores, with the browser and both server workers on them too


def _demo_database(path: Path) -> str:
    """A SQLite database holding the demo grid (v1) and a v2 with the busiest site's queues offline."""
    from brokerage.store.database import make_engine
    from brokerage.store.repository import save_snapshot
    from brokerage.store.schema import upgrade
    from brokerage.synth.demo import demo_snapshot

    snap = demo_snapshot(seed=0)
    qs = snap.tables["queues"].copy()
    site = qs["atlas_site"].value_counts().index[0]
    qs.loc[qs["atlas_site"] == site, "status"] = "offline"
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    upgrade(engine)
    save_snapshot(engine, snap)
    save_snapshot(engine, snap.replace(queues=qs))
    engine.dispose()
    return url


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, list[str]]]:
    """gunicorn -c gunicorn.conf.py (2 gthread workers, the shared cluster it starts) on the demo grid in SQLite;
    (url, lines of its access log: pid, request line, status)."""
    tmp = Path(tempfile.mkdtemp(prefix="gunicorn-jobs-"))
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DASK_SCHEDULER_ADDRESS", "BROKERAGE_SNAPSHOT")}
    env.update(BIND=f"127.0.0.1:{port}", WEB_CONCURRENCY="2", GUNICORN_THREADS="4",
               DATABASE_URL=_demo_database(tmp / "grid.sqlite"), BROKERAGE_CACHE_DIR=str(tmp / "cache"))  # fmt: skip
    gunicorn = Path(sys.executable).with_name("gunicorn")
    log = tmp / "access.log"
    proc = subprocess.Popen(
        [str(gunicorn), "-c", "gunicorn.conf.py", "--access-logfile", str(log),
         "--access-logformat", "%(p)s %(r)s %(s)s", "app.main:server"],
        cwd=ROOT, env=env, stdout=(tmp / "gunicorn.out").open("wb"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            try:
                if _get(url + "/api/versions")[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"gunicorn did not come up on {url}:\n{(tmp / 'gunicorn.out').read_text()[-3000:]}")
            time.sleep(0.5)
        yield url, log
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    out = (tmp / "gunicorn.out").read_text()
    assert "Exception on /" not in out and "Error handling request" not in out, out[-3000:]


def _pids(log: Path, path: str) -> set[str]:
    """The worker pids that answered requests of PATH (from the access log)."""
    return {line.split()[0] for line in log.read_text().splitlines() if f" {path}" in line}


def _bar_moves(page: Any, bar: str) -> None:
    """The progress bar BAR shows a label while its job runs."""
    expect(page.locator(bar)).to_be_visible(timeout=LONG)
    expect(page.locator(bar)).not_to_have_text("", timeout=LONG)


def test_pending_page_shows_the_runs_progress_then_the_table(page: Any, served: Any, console_errors: list[str]) -> None:
    """The pending page polls the stored config's grid run (started when the workers started) with a progress bar
    and then lists the pending brokerages; the overview's census comes from the same run."""
    url, _ = served
    page.goto(f"{url}/pending")
    box = page.locator("#pending-progress-box")
    if box.is_visible():  # the run is still being computed: its bar moves
        expect(page.locator("#pending-progress")).not_to_have_text("", timeout=LONG)
    expect(page.locator("#pending-sentence")).to_contain_text("pending brokerages", timeout=LONG)
    expect(box).to_be_hidden()
    page.goto(url)
    expect(page.locator("#census-sentence")).to_contain_text("waiting tasks analysed", timeout=LONG)
    assert console_errors == []


def test_grid_what_if_progress_cancel_and_result(page: Any, served: Any, console_errors: list[str]) -> None:
    """An edit starts the whole-grid job: its bar moves, Cancel stops it; another edit runs to the impact."""
    from tests.browser.test_tuning import edit

    url, _ = served
    page.goto(f"{url}/tuning?task=1")
    expect(page.locator("#tune-task-view")).not_to_be_empty(timeout=LONG)
    view = page.locator("#tune-grid-view")
    # The demo grid's run takes about 2.5 s, so a Cancel can lose the race against its last progress report; each
    # try is a fresh edit (a new job), and one of three must end "cancelled" with the bar hidden.
    for value in ("77", "78", "79"):
        edit(page, "NQUEUED_SAT_CAP", value)
        expect(page.locator("#tune-grid-progress-box")).to_be_visible(timeout=LONG)
        page.locator("#tune-grid-cancel").click()
        expect(view).to_contain_text(re.compile("Whole-grid run cancelled|brokerages compared"), timeout=LONG)
        if "Whole-grid run cancelled" in view.inner_text():
            break
    expect(view).to_contain_text("Whole-grid run cancelled")
    expect(page.locator("#tune-grid-progress-box")).to_be_hidden()
    edit(page, "NQUEUED_SAT_CAP", "300")
    expect(page.locator("#tune-grid-view")).to_contain_text("brokerages compared", timeout=LONG)
    assert console_errors == []


def test_whole_grid_report_export_cancel_then_download(page: Any, served: Any, console_errors: list[str]) -> None:
    """The whole-grid report is a job with a progress bar and Cancel; exported to the end, the browser gets the
    gzipped CSV of every waiting task (it used to hang in a forked process); gunicorn's own access log shows a
    worker served the file."""
    url, log = served
    page.goto(f"{url}/tuning")
    expect(page.locator("#tune-editor .ag-row").first).to_be_visible(timeout=LONG)
    page.get_by_label("every waiting task").check()
    page.get_by_label("JSON").check()
    page.locator("#tune-report-button").click()
    _bar_moves(page, "#tune-report-progress")
    page.locator("#tune-report-cancel").click()
    expect(page.locator("#tune-report-status")).to_contain_text("Cancelled: no report was written", timeout=LONG)
    page.get_by_label("CSV").check()
    with page.expect_download(timeout=LONG * 2) as info:
        page.locator("#tune-report-button").click()
        _bar_moves(page, "#tune-report-progress")
    download = info.value
    assert download.suggested_filename.endswith(".csv.gz")
    text = gzip.decompress(Path(download.path()).read_bytes()).decode()
    assert text.count("\n") > 1000
    expect(page.locator("#tune-report-status")).to_contain_text("download")
    link = page.locator("#tune-report-link").get_attribute("href") or ""
    assert _get(url + link)[0] == 200  # the file is served by whichever worker answers
    path = link.split("?")[0]
    deadline = time.monotonic() + 60  # the access log is written in the background: wait for the line
    while not _pids(log, path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _pids(log, path), f"gunicorn's access log has no request of {path}"
    assert console_errors == []


def test_simulation_progress_cancel_and_result(page: Any, served: Any, console_errors: list[str]) -> None:
    """A 24-hour simulation shows its progress and stops on Cancel; a half-hour one runs to its headline."""
    url, _ = served
    page.goto(f"{url}/simulate?hours=24&seed=3")
    expect(page.locator("#sim-progress")).to_contain_text("simulated minutes", timeout=LONG)
    page.locator("#sim-cancel").click()
    expect(page.locator("#sim-content")).to_contain_text("Simulation cancelled", timeout=LONG)
    page.goto(f"{url}/simulate?hours=0.5&seed=3")
    expect(page.locator("#sim-summary")).to_contain_text("simulated", timeout=LONG)
    assert console_errors == []


def test_grid_diff_progress_and_cancel(page: Any, served: Any, console_errors: list[str]) -> None:
    """The diff of the two stored versions is a job with a progress bar and Cancel."""
    url, _ = served
    page.goto(f"{url}/diff")  # the newest two versions
    expect(page.locator("#diff-progress-box")).to_be_visible(timeout=LONG)
    expect(page.locator("#diff-progress")).not_to_have_text("", timeout=LONG)
    page.locator("#diff-cancel").click()
    expect(page.locator("#diff-content")).to_contain_text("Diff cancelled", timeout=LONG)
    expect(page.locator("#diff-progress-box")).to_be_hidden()
    assert console_errors == []


def _start(url: str) -> None:
    """POST URL as a page would: the CSRF cookie any answer sets, repeated in the X-CSRF-Token header."""
    with urllib.request.urlopen(url.split("/api/")[0] + "/api/overview", timeout=60) as r:
        token = next(c.split("=", 1)[1].split(";", 1)[0] for c in r.headers.get_all("Set-Cookie") or []
                     if c.startswith("brokerage_csrf="))  # fmt: skip
    req = urllib.request.Request(url, method="POST", headers={"Cookie": f"brokerage_csrf={token}",
                                                             "X-CSRF-Token": token})  # fmt: skip
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.status in (200, 202)


def test_polls_on_either_worker_see_the_same_job(served: Any) -> None:
    """A simulation started through the API (POST with the CSRF token) is polled over fresh connections: both workers answer, and every
    answer is the same job's state (running, then its one result)."""
    url, log = served
    path = "/api/simulation?hours=0.25&seed=11"
    _start(url + path)
    states, results = [], set()
    deadline = (
        time.monotonic() + LONG / 1000 * 2
    )  # until done on both workers (a fixed count of polls ran out under load)
    while time.monotonic() < deadline:
        with urllib.request.urlopen(url + path, timeout=60) as r:  # loopback only; a new connection every time
            doc = json.loads(r.read())
        states.append(doc["state"])
        if doc["state"] == "done":
            results.add(json.dumps(doc["result"]["runs"][0]["headline"], sort_keys=True))
            if len(_pids(log, "/api/simulation?hours=0.25")) >= 2 and states.count("done") >= 5:
                break
        time.sleep(0.05)
    assert set(states) <= {"running", "done"} and states[-1] == "done" and len(results) == 1
    assert len(_pids(log, "/api/simulation?hours=0.25")) == 2
