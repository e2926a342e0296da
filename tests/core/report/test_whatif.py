"""Reports made with what-if edits carry a before/after: candidates under the stored config and the edits, and why."""

from __future__ import annotations

import csv
import io
import json

import pytest

from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.report import build_report, render
from tests.builders import anal_queue, anal_task, grid, queue, task
from tests.core.checks.helpers import net, sites

EDIT = {"NQUEUED_SAT_CAP": 1000}


def linked_grid() -> GridSnapshot:
    """Task 1 (production, nucleus N) may run at Q1 (close to N, 151 files queued on its link) or Q2 (far, 10
    queued); task 2 is an analysis task no NQUEUED_SAT_CAP edit can touch."""
    qs = [queue("Q1", "S1"), queue("Q2", "S2"), anal_queue("AQ", "S2")]
    network = net("S1", "N", queued=151, closeness=1) + net("S2", "N", queued=10, closeness=11)
    return grid(qs, [task(1, nucleus="N", chunk_njobs=6), anal_task(2)], sites=sites("N", "S1", "S2"), network=network)


@pytest.fixture(scope="module")
def linked() -> GridSnapshot:
    """The hand-built grid of linked_grid."""
    return linked_grid()


def test_raising_the_link_cap_moves_the_task_to_the_queue_it_no_longer_skips(linked: GridSnapshot) -> None:
    """A link with more files queued than NQUEUED_SAT_CAP is unusable (-link_unusable): at 150 task 1 can only go to
    Q2; raised to 1000, Q1 passes and its closer link ranks it first, so the report says task 1 moved Q2 → Q1
    because Q1 is no longer removed by -link_unusable."""
    report = build_report(linked, Config(), None, overrides=EDIT)
    w = report.whatif
    assert w is not None
    assert w.edits == {"NQUEUED_SAT_CAP": {"stored": 150, "whatif": 1000}}
    assert w.compared == 1  # the analysis broker reads no edited key: not brokered twice
    (change,) = w.changes
    assert (change.task, change.kind, change.broker) == (1, "job", "production")
    assert (change.top_before, change.top_after, change.moved) == ("Q2", "Q1", True)
    assert [n for n, _ in change.before] == ["Q2"] and [n for n, _ in change.after] == ["Q1", "Q2"]
    assert change.why[0].startswith("Q1 no longer removed by -link_unusable")
    assert any(y.startswith("Q2 factor network") for y in change.why)  # Q2's link weight moved with the cap too


def test_a_report_without_edits_has_no_before_after(linked: GridSnapshot) -> None:
    """The stored config alone has nothing to compare: no whatif section, no "whatif" key in the JSON."""
    report = build_report(linked, Config(), [1])
    assert report.whatif is None
    assert "whatif" not in json.loads(render(report, "json"))


def test_an_edit_that_moves_nothing_is_compared_and_says_so(linked: GridSnapshot) -> None:
    """Lowering NQUEUED_SAT_CAP to 140 keeps Q1 out (151 files queued) and Q2 first: the decision is compared, no
    task moved."""
    report = build_report(linked, Config(), [1], overrides={"NQUEUED_SAT_CAP": 140})
    assert report.whatif is not None and report.whatif.compared == 1
    assert report.whatif.moved == []


def test_csv_json_and_html_carry_the_move_and_its_reason(linked: GridSnapshot) -> None:
    """Every format names the moved task, its queue before and after, and the criteria code that changed."""
    report = build_report(linked, Config(), [1], overrides=EDIT)
    rows = [r for r in csv.DictReader(io.StringIO(render(report, "csv").decode())) if r["record"] == "whatif"]
    assert [(r["task"], r["before"], r["after"], r["status"]) for r in rows] == [("1", "Q2", "Q1", "ok → ok")]
    assert "-link_unusable" in rows[0]["reason"]
    assert json.loads(rows[0]["message"])["after"][0][0] == "Q1"
    doc = json.loads(render(report, "json"))["whatif"]
    assert (doc["decisions_compared"], doc["tasks_moved"]) == (1, 1)
    assert doc["changes"][0]["top"] == {"before": "Q2", "after": "Q1"}
    html = render(report, "html").decode()
    assert 'id="whatif"' in html and "NQUEUED_SAT_CAP: 150 → 1000" in html
    assert "Q2 → Q1" in html and "-link_unusable" in html
