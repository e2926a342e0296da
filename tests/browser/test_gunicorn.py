"""Production serving: gunicorn with the project's gunicorn.conf.py serves the pages, the API and callbacks."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ROOT

TIMEOUT = 20_000
HEADER_TIMEOUT_S, BODY_TIMEOUT_S = 4, 6  # the server's deadlines in this module (defaults 10 s and 30 s)


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
               BROKERAGE_CACHE_DIR=str(tmp / "cache"), BROKERAGE_HEADER_TIMEOUT=str(HEADER_TIMEOUT_S),
               BROKERAGE_BODY_TIMEOUT=str(BODY_TIMEOUT_S))  # fmt: skip
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


def _slow_client(url: str, stop: threading.Event, body: bool = False) -> None:
    """Open connections that send one header line (or one body byte) a second and never finish the request (a
    slowloris client); when the server cuts one off, open the next."""
    host, port = url.removeprefix("http://").split(":")
    while not stop.is_set():
        try:
            with socket.create_connection((host, int(port)), timeout=30) as s:
                if body:
                    s.sendall(b"POST /_dash-update-component HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                              b"Content-Length: 100000\r\n\r\n{")  # fmt: skip
                else:
                    s.sendall(b"GET /api/overview HTTP/1.1\r\nHost: x\r\n")
                i = 0
                while not stop.wait(1.0):
                    s.sendall(b" " if body else f"X-Slow-{i}: 1\r\n".encode())
                    i += 1
        except OSError:
            stop.wait(0.2)


def _large_client(url: str, stop: threading.Event, refused: list[int]) -> None:
    """Keep POSTing a 100 MB callback body as fast as the server takes it; record each answer's status."""
    host, port = url.removeprefix("http://").split(":")
    chunk = b"[" + b"0," * 500_000
    while not stop.is_set():
        with contextlib.suppress(OSError), socket.create_connection((host, int(port)), timeout=30) as s:
            s.sendall(b"POST /_dash-update-component HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100000000\r\n\r\n")  # fmt: skip
            with contextlib.suppress(OSError):
                for _ in range(100):
                    s.sendall(chunk)
            head = s.recv(64).split()
            refused.append(int(head[1]) if len(head) > 1 and head[1].isdigit() else 0)


def _normal_times(url: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        assert _get(url + "/api/overview")[0] == 200
        times.append(time.perf_counter() - t0)
        time.sleep(0.2)
    return times


def test_slow_and_large_clients_do_not_stall_normal_requests(gunicorn_server: str) -> None:
    """While 20 clients trickle headers, 10 trickle bodies and 4 keep sending 100 MB callback bodies (more than the
    2 workers × 8 threads), a normal GET /api/overview still answers, each in under 1 s."""
    stop = threading.Event()
    refused: list[int] = []
    clients = [threading.Thread(target=_slow_client, args=(gunicorn_server, stop, i >= 20), daemon=True)
               for i in range(30)]  # fmt: skip
    clients += [threading.Thread(target=_large_client, args=(gunicorn_server, stop, refused), daemon=True)
                for _ in range(4)]  # fmt: skip
    for t in clients:
        t.start()
    try:
        time.sleep(2)  # every slow connection is open and has been accepted
        times = _normal_times(gunicorn_server, 15)
        assert max(times) < 1.0, times
    finally:
        stop.set()
        for t in clients:
            t.join(timeout=10)
    assert refused and set(refused) <= {413, 0}, refused


def test_a_trickling_client_is_cut_off_at_the_header_deadline(gunicorn_server: str) -> None:
    """A client still sending headers after BROKERAGE_HEADER_TIMEOUT (4 s here) is disconnected; so is one whose
    body has not arrived BROKERAGE_BODY_TIMEOUT (6 s) after its headers."""
    host, port = gunicorn_server.removeprefix("http://").split(":")
    for head, deadline in ((b"GET / HTTP/1.1\r\nHost: x\r\n", HEADER_TIMEOUT_S),
                           (b"POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n", BODY_TIMEOUT_S)):  # fmt: skip
        with socket.create_connection((host, int(port)), timeout=30) as s:
            s.sendall(head)
            t0 = time.monotonic()
            with contextlib.suppress(OSError):
                while s.recv(1024):
                    pass
            assert deadline - 0.5 <= time.monotonic() - t0 <= deadline + 3


def test_a_body_above_the_limit_is_answered_413_unread(gunicorn_server: str) -> None:
    """A request announcing 100 MB is answered 413 at once, before its body is sent (BROKERAGE_MAX_BODY, 8 MiB); a
    chunked body that grows past the limit is refused when it does."""
    host, port = gunicorn_server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        t0 = time.monotonic()
        s.sendall(b"POST /_dash-update-component HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100000000\r\n\r\n")  # fmt: skip
        head = s.recv(4096)
        assert head.startswith(b"HTTP/1.1 413") and time.monotonic() - t0 < 2
    with socket.create_connection((host, int(port)), timeout=10) as s:  # chunked: no length announced
        s.sendall(b"POST /_dash-update-component HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n")  # fmt: skip
        chunk = b"%x\r\n%s\r\n" % (2**20, b"1" * 2**20)
        with contextlib.suppress(OSError):
            for _ in range(20):  # 20 MiB, more than the limit: the server stops reading at 8 MiB
                s.sendall(chunk)
        head = s.recv(4096)
        assert head.startswith((b"HTTP/1.1 400", b"HTTP/1.1 413")), head[:80]


def test_served_answers_carry_the_security_headers(gunicorn_server: str) -> None:
    """Through gunicorn, pages answer with X-Frame-Options DENY, CSP frame-ancestors 'none' and nosniff."""
    with urllib.request.urlopen(gunicorn_server + "/tuning?task=1", timeout=30) as r:  # loopback only
        assert r.headers["X-Frame-Options"] == "DENY" and r.headers["X-Content-Type-Options"] == "nosniff"
        assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
