"""CSV reports open safely in a spreadsheet (issue #34 item 9): no cell is run as a formula."""

from __future__ import annotations

import csv
import io

from brokerage.model.gdpconfig import Config
from brokerage.report import build_report, render
from brokerage.report.tabular import neutralised
from tests.builders import grid, queue, task


def test_cells_starting_like_a_formula_get_an_apostrophe() -> None:
    """Text starting with = + - @, tab or CR is prefixed with ' ; numbers, number text and criteria codes stay."""
    row = ('=HYPERLINK("http://x")', "+1+cmd", "-2+3", "@SUM(A1)", "\tx", "\r=1", "-cpucore", "-1.5", "+3", -4, "ok")
    assert neutralised(row) == (
        "'=HYPERLINK(\"http://x\")", "'+1+cmd", "'-2+3", "'@SUM(A1)", "'\tx", "'\r=1", "-cpucore", "-1.5", "+3", -4,
        "ok",
    )  # fmt: skip


def test_a_queue_named_like_a_formula_is_neutralised_in_the_csv_report() -> None:
    """A queue named "=cmd|' /C calc'!A0" and one named "@SUM(1)" appear in the CSV with a leading apostrophe, and
    the criteria code of the skipped queue (-status) stays as PanDA writes it."""
    bad, at = "=cmd|' /C calc'!A0", "@SUM(1)"
    snap = grid([queue(bad, "S1", status="offline"), queue(at, "S1")], [task(1)])
    text = render(build_report(snap, Config(), [1]), "csv").decode()
    cells = {c for row in csv.reader(io.StringIO(text)) for c in row}
    assert "'" + bad in cells and "'" + at in cells
    assert bad not in cells and at not in cells
    assert "-status" in cells
