"""Production serving: gunicorn with the project's gunicorn.conf.py serves the pages, the API and callbacks."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ROOT

TIMEOUT = 20_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=30) as r:  # loopback only
        return r.status, r.read()


@pytest.fixture(scope="module")
def gunicorn_server() -> Iterator[str]:
    """`gunicorn -c gunicorn.conf.py app.main:server` with two sync workers on the sample grid."""
    from tests.app.sample import sample_grid

    tmp = Path(tempfile.mkdtemp(prefix="gunicorn-test-"))
    sample_grid().to_json(tmp / "sample.json")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(BIND=f"127.0.0.1:{port}", WEB_CONCURRENCY="2", BROKERAGE_SNAPSHOT=str(tmp / "sample.json"),
               BROKERAGE_CACHE_DIR=str(tmp / "cache"))  # fmt: skip
    gunicorn = Path(sys.executable).with_name("gunicorn")
    proc = subprocess.Popen(
        [str(gunicorn), "-c", "gunicorn.conf.py", "app.main:server"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if _get(url + "/api/overview")[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"gunicorn did not come up on {url}:\n{out[-3000:]}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_gunicorn_serves_dash_routes_and_the_api(gunicorn_server: str) -> None:
    """Every worker answers Dash's layout and dependency routes and the JSON API (sync workers, no cold-start race)."""
    for _ in range(4):  # more requests than workers, so both workers answer
        for path in ("/", "/queues", "/_dash-layout", "/_dash-dependencies"):
            assert _get(gunicorn_server + path)[0] == 200, path
    status, body = _get(gunicorn_server + "/api/queues")
    assert status == 200 and len(json.loads(body)["queues"]) == 12


def test_gunicorn_page_runs_its_callbacks_in_the_browser(page, gunicorn_server: str, console_errors) -> None:
    """Through gunicorn, the queues page brokers the task in the URL and the console stays clean."""
    page.goto(gunicorn_server + "/queues?task=1")
    expect(page.locator("#queues-ranked .ag-row").first).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("#job-decision-view")).to_contain_text("queues considered", timeout=TIMEOUT)
    assert console_errors == []
