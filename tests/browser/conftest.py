"""Browser lane: pytest-playwright on the system Chromium against the one app served by werkzeug in a thread."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from werkzeug.serving import make_server

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"]  # fmt: skip


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """Use Debian's chromium instead of a Playwright-downloaded browser."""
    return {**browser_type_launch_args, "executable_path": "/usr/bin/chromium", "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict) -> dict:
    """A desktop-sized viewport for readable screenshots."""
    return {**browser_context_args, "viewport": {"width": 1440, "height": 1000}}


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    """The app on the sample grid (env set BEFORE app.main is imported), on a free loopback port."""
    from tests.app.sample import sample_grid

    path = Path(tempfile.mkdtemp()) / "sample.json"
    sample_grid().to_json(path)
    os.environ["BROKERAGE_SNAPSHOT"] = str(path)
    os.environ.pop("DATABASE_URL", None)
    from app.main import app

    app.server.test_client().get("/")  # finish Dash's one-time setup before concurrent requests (plotly/dash#3971)
    srv = make_server("127.0.0.1", 0, app.server, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()


@pytest.fixture
def console_errors(page) -> list[str]:
    """Console errors and uncaught page errors collected while the test runs."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


@pytest.fixture
def shot(page):
    """Save a full-page screenshot under artifacts/screenshots/NAME.png."""
    SHOTS.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> None:
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)

    return take
