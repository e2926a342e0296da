"""Issue #33: the tuning page's before/after tables never scroll sideways at 1100 px, and the grid card never says
"No edits yet" while an edit's whole-grid run is under way."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

TIMEOUT = 30_000


def test_before_after_tables_fit_and_the_grid_card_follows_the_edit(page: Any, live_server: str,
                                                                     console_errors: list[str], shot: Any) -> None:  # fmt: skip
    """A tuning permalink with NQUEUED_SAT_CAP=300 at 1600 and 1100 px: every before/after table shows all its
    columns without a sideways scroll, and the grid card names the edit (waiting, with its place) or shows the
    re-brokered tasks, never "No edits yet"."""
    for w in (1600, 1100):
        page.set_viewport_size({"width": w, "height": 1000})
        page.goto(live_server + "/tuning?task=1&NQUEUED_SAT_CAP=300")
        expect(page.locator("#tune-task-view .side-table").first).to_be_visible(timeout=90_000)
        expect(page.locator("#tune-grid-view")).not_to_contain_text("No edits yet")
        # the job's answer, or while it waits its turn (a busy cluster) the edit and its place: never the placeholder
        expect(page.locator("#tune-grid-waiting, #tune-grid-impact").first).to_be_visible(timeout=60_000)
        expect(page.locator("#tune-grid-view")).not_to_contain_text("No edits yet")
        wide = page.evaluate("""() => [...document.querySelectorAll('#tune-task-view table')]
                                 .filter(t => t.scrollWidth > t.clientWidth + 1).length""")
        assert wide == 0, f"{wide} before/after tables scroll sideways at {w} px"
        assert page.evaluate("document.documentElement.scrollWidth") <= w
        shot(f"tuning_before_after_{w}")
    assert console_errors == []
