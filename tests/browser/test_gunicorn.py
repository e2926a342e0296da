"""Production serving: gunicorn with the project's gunicorn.conf.py serves the pages, the API and callbacks."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
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
    """`gunicorn -c gunicorn.conf.py app.main:server` with two threaded, warmed-up workers on the sample grid."""
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
    """Every worker answers Dash's layout and dependency routes and the JSON API (warmed up: no cold-start race)."""
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


def _slow_client(url: str, stop: threading.Event) -> None:
    """Open a connection and send one header line a second, never finishing the request (a slowloris client)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(b"GET /api/overview HTTP/1.1\r\nHost: x\r\n")
        i = 0
        while not stop.wait(1.0):
            s.sendall(f"X-Slow-{i}: 1\r\n".encode())
            i += 1


def test_two_slow_clients_do_not_stall_a_normal_request(gunicorn_server: str) -> None:
    """While two clients trickle their headers, a normal GET /api/overview still answers in under 1 s."""
    stop = threading.Event()
    slow = [threading.Thread(target=_slow_client, args=(gunicorn_server, stop), daemon=True) for _ in range(2)]
    for t in slow:
        t.start()
    try:
        time.sleep(1.5)  # both slow connections are open and have been accepted
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            assert _get(gunicorn_server + "/api/overview")[0] == 200
            times.append(time.perf_counter() - t0)
        assert max(times) < 1.0, times
    finally:
        stop.set()
        for t in slow:
            t.join(timeout=5)
