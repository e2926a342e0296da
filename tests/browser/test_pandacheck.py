"""Issue #29 item 5 in Chromium: the task page's PanDA 1.0.4 panel reaches its verdict beside the job brokerage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from brokerage.crosscheck.panda import PandaMissing, find_panda

TIMEOUT = 90_000  # the first check also starts the job cluster and sends it the grid
WIDTHS = (1600, 1100)


def test_the_panel_reaches_its_verdict_and_leaves_the_answer_in_view(page: Any, live_server: str,
                                                                     console_errors: list[str], shot: Any) -> None:  # fmt: skip
    """Task 1 (both sides keep the same queues) reads "PanDA 1.0.4 agrees"; task 5 (under panda-1.0.4 our broker
    stops at the input check, PanDA names its removals) lists its 3 differing queues; the job brokerage headline stays in view above the
    panel at 1600 and 1100 px, the page never scrolls sideways, and the console stays free of errors."""
    try:
        find_panda()
    except PandaMissing as exc:
        pytest.skip(f"PanDA is not set up: {exc}")
    for w in WIDTHS:
        page.set_viewport_size({"width": w, "height": 1000})
        for task, headline in ((1, "PanDA 1.0.4 agrees"), (5, "PanDA 1.0.4 differs on 3 queues")):
            page.goto(f"{live_server}/task?id={task}")
            answer = page.locator("#task-jobs")
            expect(answer).to_contain_text("queues kept", timeout=TIMEOUT)  # the stored (seed) profile's answer
            body = page.locator("#task-panda-body")
            expect(body).to_contain_text(headline, timeout=TIMEOUT)
            expect(body).to_contain_text("panda-1.0.4 rule profile")
            expect(answer).to_be_in_viewport()
            assert answer.bounding_box()["y"] < page.locator("#task-panda-card").bounding_box()["y"]
            assert page.evaluate("document.documentElement.scrollWidth") <= w
            if task == 5:
                expect(body.locator("tbody tr")).to_have_count(3)
                expect(body).to_contain_text("-cpucore")
            shot(f"task_panda_{task}_{w}")
    assert console_errors == []


def test_without_panda_the_panel_says_how_to_get_it(page: Any, live_server: str, console_errors: list[str],
                                                    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, shot: Any) -> None:  # fmt: skip
    """With no PanDA source where scripts/panda.sh puts it, the panel says "PanDA source not available: run
    scripts/panda.sh" inline while the rest of the task page works."""
    monkeypatch.setenv("BROKERAGE_PANDA_DIR", str(tmp_path / "no-panda"))  # the served app runs in this process
    page.set_viewport_size({"width": 1100, "height": 1000})
    page.goto(f"{live_server}/task?id=8")
    expect(page.locator("#task-panda-body")).to_contain_text(
        "PanDA source not available: run scripts/panda.sh", timeout=TIMEOUT
    )
    expect(page.locator("#task-jobs")).to_contain_text("queues kept", timeout=TIMEOUT)
    shot("task_panda_missing_1100")
    assert console_errors == []
