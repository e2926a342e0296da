"""The DIRAC page in Chromium: a permalink matches, the bucket preset and a share edit re-match, a site fills the pilot."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from brokerage.model.gdpconfig import Config
from tests.app.test_dirac import _rows
from tests.browser.test_pages import TIMEOUT, _settle, pick

PILOT = "Site%3DLCG.CERN.cern%2CCPUTime%3D86400%2CPlatform%3Dx86_64-el9"


@pytest.fixture
def dirac_grid(live_server: str) -> Iterator[str]:
    """The live app serving the sample grid plus the demo DIRAC community (800 jobs)."""
    from app.main import state
    from app.state.source import Source
    from brokerage.dirac.demo import dirac_columns
    from brokerage.model.snapshot import frame

    snap = state.snapshot()
    tables = {name: frame(name, _rows(cols)) for name, cols in dirac_columns(0, n_jobs=800).items()}
    state.reset(Source(snap.replace(**tables), Config(), "test"))
    yield live_server
    state.reset()


def test_dirac_match_edit_and_pilot_from_site(page: Any, dirac_grid: str, console_errors: list[str], shot: Any) -> None:
    """A permalink shows the match and every queue; DIRAC's buckets re-match and go into the URL; a CE fills the pilot."""
    page.goto(dirac_grid + f"/dirac?pilot={PILOT}&seed=2")
    summary = page.locator("#dirac-summary")
    expect(summary).to_contain_text("Matched task queue", timeout=TIMEOUT)
    expect(page.locator("#dirac-grid .ag-row").first).to_be_visible(timeout=TIMEOUT)
    _settle(page)
    shot("dirac")
    before = summary.inner_text()

    page.get_by_role("button", name="DIRAC's 13 buckets").click()
    expect(page).to_have_url(re.compile(r"DIRAC_CPU_BUCKETS="), timeout=TIMEOUT)
    expect(page.locator("#dirac-content")).to_contain_text("buckets [360, 1800", timeout=TIMEOUT)
    _settle(page)
    assert summary.inner_text() != before or "1080000" in page.locator("#dirac-content").inner_text()

    pick(page, "#dirac-ce", "GRIDKA", r"LCG\.GRIDKA\.de")
    expect(page).to_have_url(re.compile(r"pilot=Site%3DLCG\.GRIDKA\.de"), timeout=TIMEOUT)
    expect(page.locator("#dirac-content")).to_contain_text("OwnerGroup=lhcb_user at LCG.GRIDKA.de", timeout=TIMEOUT)
    _settle(page)
    shot("dirac_site")
    assert console_errors == []


def test_dirac_table_filter_survives_a_new_pilot(page: Any, dirac_grid: str, console_errors: list[str]) -> None:
    """?d_f= filters the task-queue table; the permalink rewritten for another pilot keeps the table's filter and sort."""
    page.goto(dirac_grid + f"/dirac?pilot={PILOT}&seed=2&d_f=%7B%22verdict%22%3A%22excluded%22%7D&d_s=Priority:desc")
    box = page.locator("#dirac-grid .ag-floating-filter[col-id='verdict'] input")
    expect(box).to_have_value("excluded", timeout=TIMEOUT)
    verdicts = page.locator("#dirac-grid .ag-center-cols-container .ag-cell[col-id='verdict'], "
                            "#dirac-grid .ag-pinned-left-cols-container .ag-cell[col-id='verdict']")  # fmt: skip
    expect(verdicts.first).to_be_visible(timeout=TIMEOUT)
    assert all("excluded" in v for v in verdicts.all_inner_texts())
    pick(page, "#dirac-ce", "GRIDKA", r"LCG\.GRIDKA\.de")
    expect(page).to_have_url(re.compile(r"pilot=Site%3DLCG\.GRIDKA\.de.*d_f=.*excluded"), timeout=TIMEOUT)
    expect(page).to_have_url(re.compile(r"d_s=Priority%3Adesc"), timeout=TIMEOUT)
    expect(box).to_have_value("excluded", timeout=TIMEOUT)
    assert console_errors == []
