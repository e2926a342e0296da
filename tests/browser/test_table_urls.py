"""Every table page keeps its table's filters and sort in the URL: a shared link restores them, a change rewrites it."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, quote, urlparse

import pytest
from playwright.sync_api import expect

TIMEOUT = 30_000

# (page, URL parameter prefix, text column to filter, column to sort)
TABLES = [
    ("/queues?task=1", "q", "atlas_site", "corecount"),
    ("/queues?task=1", "k", "criteria", "queue"),
    ("/pending", "p", "kind", "task"),
    ("/stabilizer", "s", "produsername", "nQ_user"),
    ("/network", "l", "link", "queued"),
    ("/nuclei", "n", "nucleus", "nucleus"),
    ("/", "o", "criteria", "skips"),
]


def _cells(page, key: str, col: str) -> list[str]:
    """The texts of COL's cells in the grid with URL prefix KEY (the rows AG Grid has rendered)."""
    return page.locator(f".url-state-{key} .ag-center-cols-container .ag-cell[col-id='{col}'], "
                        f".url-state-{key} .ag-pinned-left-cols-container .ag-cell[col-id='{col}']").all_text_contents()  # fmt: skip


def _param(url: str, name: str) -> str | None:
    """One query parameter of URL."""
    return (parse_qs(urlparse(url).query).get(name) or [None])[0]


@pytest.mark.parametrize(("path", "key", "fcol", "scol"), TABLES, ids=[f"{t[1]}:{t[0]}" for t in TABLES])
def test_table_filter_and_sort_round_trip_through_the_url(
    page, live_server, console_errors, path, key, fcol, scol
) -> None:
    """A link with ?X_f= and ?X_s= opens the table filtered and sorted so; typing another filter rewrites ?X_f=."""
    page.goto(live_server + path)
    grid = page.locator(f".url-state-{key}")
    first = grid.locator(f".ag-row .ag-cell[col-id='{fcol}']").first
    expect(first).to_have_text(re.compile(r"\S"), timeout=TIMEOUT)
    # the rows may be swapped in again by a later callback: read a value once one is there
    value = ""
    for _ in range(50):
        value = (first.text_content() or "").strip()
        if value:
            break
        page.wait_for_timeout(100)
    assert value, f"no {fcol} value to filter on"
    sep = "&" if "?" in path else "?"
    shared = f"{live_server}{path}{sep}{key}_f={quote(json.dumps({fcol: value}))}&{key}_s={scol}:desc"
    page.goto(shared)
    expect(grid.locator(f".ag-header-cell[col-id='{scol}'][aria-sort=descending]")).to_have_count(1, timeout=TIMEOUT)
    box = grid.locator(f".ag-floating-filter[col-id='{fcol}'] input")
    expect(box).to_have_value(value, timeout=TIMEOUT)
    expect(grid.locator(f".ag-row .ag-cell[col-id='{fcol}']").first).to_contain_text(value, timeout=TIMEOUT)
    cells = _cells(page, key, fcol)
    assert cells and all(value.lower() in c.lower() for c in cells), (value, cells)
    assert json.loads(_param(page.url, f"{key}_f") or "{}") == {fcol: value}  # the shared link is kept as shared
    # the operator narrows the filter: the address bar follows
    box.fill(value[:2])
    expect(page).to_have_url(re.compile(rf"{key}_f=[^&]*{re.escape(quote(value[:2]))}"), timeout=TIMEOUT)
    assert _param(page.url, f"{key}_s") == f"{scol}:desc"
    assert console_errors == []
