"""Brokerage reports: CSV/JSON files parse and hold the hand-computed rows; the HTML page is self-contained."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from brokerage.brokers.router import run_job_brokerage, tasks_needing_nucleus
from brokerage.model.explain import Candidate, Decision, FunnelStep
from brokerage.model.gdpconfig import Config, ConfigError
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.waiting import waiting_task_ids
from brokerage.report import FORMATS, MEDIA_TYPES, Report, TaskEntry, UnknownTaskError, build_report, filename, render
from brokerage.report.files import write_atomic
from brokerage.report.summary import summarise
from brokerage.report.svg import Bar, bar_chart, text_px
from brokerage.report.tabular import CSV_COLUMNS
from brokerage.synth.demo import demo_snapshot
from tests.builders import grid, queue, task

# an href/src (or CSS url()) pointing anywhere but into the page itself
EXTERNAL = re.compile(r"""\b(?:src|href)\s*=\s*["']?(?![#"'])|url\(\s*["']?(?![#"']|data:)""", re.I)


@pytest.fixture(scope="module")
def tiny() -> GridSnapshot:
    """Two identical online queues and one offline queue (a name that needs escaping); task 1 waits, task 2 runs."""
    qs = [queue("A", "S1"), queue("A2", "S2"), queue("B<x>&", "S3", status="offline")]
    return grid(qs, [task(1, chunk_njobs=10), task(2, status="running")])


@pytest.fixture(scope="module")
def offline_only() -> GridSnapshot:
    """Task 1's only queue is offline."""
    return grid([queue("OFF", "S1", status="offline")], [task(1)])


@pytest.fixture(scope="module")
def demo() -> GridSnapshot:
    """A small demo grid with analysis, production and assigning tasks."""
    return demo_snapshot(seed=0, queues=120, tasks=60)


@pytest.fixture(scope="module")
def demo_report(demo: GridSnapshot) -> Report:
    """The whole-grid report of the small demo grid."""
    return build_report(demo, Config(), None, meta={"origin": "demo"})


def csv_records(report: Report) -> list[dict[str, str]]:
    """The report's CSV parsed by the csv module (the header must be CSV_COLUMNS)."""
    reader = csv.DictReader(io.StringIO(render(report, "csv").decode("utf-8"), newline=""))
    assert tuple(reader.fieldnames or ()) == CSV_COLUMNS
    return list(reader)


def test_csv_of_a_task_whose_only_queue_is_offline(offline_only: GridSnapshot) -> None:
    """A task whose only queue is offline has a pending decision row, one -status skip row and no candidate row."""
    rows = [r for r in csv_records(build_report(offline_only, Config(), [1])) if r["record"] != "meta"]
    by = {}
    for r in rows:
        by.setdefault(r["record"], []).append(r)
    assert set(by) == {"decision", "skip", "funnel"}
    (decision,) = by["decision"]
    assert (decision["task"], decision["broker"], decision["status"], decision["name"]) == (
        "1",
        "production",
        "pending",
        "",
    )
    (skip,) = by["skip"]
    assert {k: skip[k] for k in ("task", "name", "criteria", "reason", "stage", "temporary")} == {
        "task": "1",
        "name": "OFF",
        "criteria": "-status",
        "reason": "status=offline",
        "stage": "status check",
        "temporary": "false",
    }
    status_step = next(r for r in by["funnel"] if r["filter"] == "status check")
    assert (status_step["before"], status_step["after"]) == ("1", "0")
    assert by["funnel"][0]["filter"] == "preliminary candidates"


def test_csv_candidates_share_jobs_by_weight(tiny: GridSnapshot) -> None:
    """Two equal-weight candidates of a 10-job task get share 0.5 and 5 expected jobs each; factors are JSON in order."""
    report = build_report(tiny, Config(), [1])
    cands = [r for r in csv_records(report) if r["record"] == "candidate"]
    assert [(r["name"], r["rank"], float(r["share"])) for r in cands] == [("A", "1", 0.5), ("A2", "2", 0.5)]
    factors = json.loads(cands[0]["factors"])
    assert list(factors) == list(report.tasks[0].job.candidates[0].factors)  # type: ignore[union-attr]
    assert math.isclose(math.prod(factors.values()), float(cands[0]["weight"]))
    assert report.summary["expected_jobs_per_queue"] == {"A": 5.0, "A2": 5.0}
    assert report.summary["skips_by_criteria"] == {"-status": 1}


def test_csv_records_meta_first_and_every_row_is_complete(demo_report: Report) -> None:
    """Every CSV row has all columns; meta rows come first; one decision row per task, one nucleus row per draw."""
    rows = csv_records(demo_report)
    kinds = [r["record"] for r in rows]
    first_other = next(i for i, k in enumerate(kinds) if k != "meta")
    assert set(kinds[:first_other]) == {"meta"} and "meta" not in kinds[first_other:]
    prefixes = {"decision", "candidate", "skip", "funnel", "note", "error"}
    assert set(kinds[first_other:]) <= prefixes | {f"nucleus_{k}" for k in prefixes}
    assert all(None not in r and len(r) == len(CSV_COLUMNS) for r in rows)
    assert kinds.count("decision") == len(demo_report.tasks)
    assert kinds.count("nucleus_decision") == demo_report.summary["nucleus_decisions"] > 0
    meta = {r["name"]: r["message"] for r in rows if r["record"] == "meta"}
    assert meta["snapshot"] == demo_report.meta["snapshot"]


def test_json_round_trips_meta_and_overrides(tiny: GridSnapshot) -> None:
    """The JSON parses and records the snapshot, config version, overrides and the stored values they replace."""
    stored = Config(stored={"NQUEUED_SAT_CAP": 200}, version=7)
    report = build_report(tiny, stored, [1], overrides={"NQUEUED_SAT_CAP": 300}, meta={"origin": "unit test"})
    doc = json.loads(render(report, "json"))
    assert set(doc) == {"meta", "tasks", "summary", "whatif"}  # made with an edit: its before/after too
    meta = doc["meta"]
    assert meta["snapshot"] == tiny.key and meta["origin"] == "unit test"
    assert meta["config_version"] == 7
    assert meta["overrides"] == {"NQUEUED_SAT_CAP": 300}
    assert meta["changed_from_stored"] == {"NQUEUED_SAT_CAP": {"stored": 200, "whatif": 300}}
    assert meta["task_ids"] == [1] and meta["scope"] == "tasks"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["generated_at"])
    assert meta["tool"].startswith("brokerage-dashboard")
    (entry,) = doc["tasks"]
    expected = run_job_brokerage(tiny, 1, stored.with_overrides({"NQUEUED_SAT_CAP": 300})).to_dict()
    assert entry["task"] == 1 and entry["job"] == json.loads(json.dumps(expected))
    assert entry["nucleus"] is None and entry["error"] is None
    assert doc["summary"]["expected_jobs_per_queue"] == {"A": 5.0, "A2": 5.0}


def test_json_has_no_nan(tiny: GridSnapshot) -> None:
    """Non-finite numbers become null, so the JSON is strict (browsers' JSON.parse accepts it)."""
    d = Decision("production", 1, "ok", [Candidate("A", 1, 1.0, {"x": math.nan, "y": math.inf})], [], [], {})
    entry = TaskEntry(1, "managed", "ready", 1.0, d)
    report = Report({"snapshot": "s@0"}, [entry], summarise([entry]))

    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in the JSON")

    doc = json.loads(render(report, "json"), parse_constant=refuse)
    assert doc["tasks"][0]["job"]["candidates"][0]["factors"] == {"x": None, "y": None}
    row = next(r for r in csv_records(report) if r["record"] == "candidate")
    assert json.loads(row["factors"], parse_constant=refuse) == {"x": None, "y": None}


def test_whole_grid_covers_waiting_tasks_in_priority_order(demo: GridSnapshot, demo_report: Report) -> None:
    """Without task ids the report covers every waiting task, highest priority first, as the overview does."""
    assert [e.task for e in demo_report.tasks] == waiting_task_ids(demo)
    assert demo_report.whole_grid and demo_report.meta["task_ids"] is None
    assert demo_report.summary["tasks"] == len(demo_report.tasks)
    s = demo_report.summary
    assert s["with_candidates"] + s["pending"] + s["errors"] == s["tasks"]


def test_nucleus_decision_only_for_production_tasks_needing_one(demo: GridSnapshot, demo_report: Report) -> None:
    """Production tasks in assigning without a nucleus also get the nucleus decision; no other task does."""
    need = set(tasks_needing_nucleus(demo))
    with_nucleus = {e.task for e in demo_report.tasks if e.nucleus is not None}
    assert with_nucleus == need & {e.task for e in demo_report.tasks} and with_nucleus
    for e in demo_report.tasks:
        if e.nucleus is not None:
            assert e.nucleus.broker == "task" and e.label != "user"
    jobs = sum(demo_report.summary["expected_jobs_per_nucleus"].values())
    assert math.isclose(jobs, sum(e.njobs for e in demo_report.tasks if e.nucleus and e.nucleus.candidates))


def test_progress_is_called_with_done_and_total(tiny: GridSnapshot) -> None:
    """The progress callback gets (0, total) first, then (done, total) after every task."""
    calls: list[tuple[int, int]] = []
    build_report(tiny, Config(), [1, 2], progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 2), (1, 2), (2, 2)]


def test_unknown_task_ids_are_named(tiny: GridSnapshot) -> None:
    """Asking for tasks the snapshot lacks raises a KeyError naming every missing id, before any brokerage."""
    calls: list[tuple[int, int]] = []
    with pytest.raises(UnknownTaskError, match=r"unknown tasks 998, 999: not in the snapshot \(2 tasks\)") as err:
        build_report(tiny, Config(), [1, 998, 999], progress=lambda d, t: calls.append((d, t)))
    assert isinstance(err.value, KeyError) and err.value.missing == [998, 999]
    assert calls == []


def test_bad_override_fails_before_any_work(tiny: GridSnapshot) -> None:
    """An out-of-range what-if value raises ConfigError naming the key and range before any task is brokered."""
    calls: list[tuple[int, int]] = []
    with pytest.raises(ConfigError, match=r"NQUEUED_SAT_CAP: .*expected an integer in \[1, "):
        build_report(tiny, Config(), None, overrides={"NQUEUED_SAT_CAP": 0}, progress=lambda d, t: calls.append(1))
    assert calls == []


def test_a_failing_task_is_reported_not_fatal(tiny: GridSnapshot, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task whose brokerage raises is kept in the report with its error; the other tasks are still brokered."""
    from brokerage.brokers import batch

    real = batch.decide

    def flaky(snap: GridSnapshot, config: Config, key: tuple[str, int], cache: object) -> Decision:
        if key[1] == 2:
            raise ValueError("broken task")
        return real(snap, config, key, cache)

    monkeypatch.setattr(batch, "decide", flaky)
    report = build_report(tiny, Config(), [1, 2])
    assert [e.error for e in report.tasks] == ["", "ValueError: broken task"]
    assert report.summary["errors"] == 1 and report.summary["with_candidates"] == 1
    rows = [r for r in csv_records(report) if r["record"] == "error"]
    assert [(r["task"], r["message"]) for r in rows] == [("2", "ValueError: broken task")]
    assert "broken task" in render(report, "html").decode()


def test_task_html_is_self_contained_with_charts(tiny: GridSnapshot) -> None:
    """A one-task page holds its funnel and share charts as inline SVG, escapes names, and loads nothing."""
    page = render(build_report(tiny, Config(), [1], overrides={"NQUEUED_SAT_CAP": 300}), "html").decode()
    assert page.startswith("<!DOCTYPE html>")
    assert 'id="chart-funnel-1-job"' in page and 'id="chart-share-1-job"' in page
    assert page.count("<svg") >= 2
    assert not EXTERNAL.findall(page)
    assert "<script" not in page.lower() and "http://" not in page and "https://" not in page
    assert "B&lt;x&gt;&amp;" in page and "B<x>&" not in page
    assert "NQUEUED_SAT_CAP" in page and tiny.key in page
    assert "Summary" not in page  # one task: no grid summary


def test_all_tasks_html_has_summary_charts_and_task_table(demo_report: Report) -> None:
    """The whole-grid page has the criteria, per-queue and per-nucleus charts and one table row per task."""
    page = render(demo_report, "html").decode()
    for chart in ("chart-criteria", "chart-queues", "chart-nuclei", "chart-nucleus-criteria"):
        assert f'id="{chart}"' in page
    assert not EXTERNAL.findall(page)
    table = page.split('<table class="tasks">', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr>") == len(demo_report.tasks) + 1  # header
    assert "chart-funnel-" not in page  # the whole grid lists tasks, it does not detail each


def test_bar_chart_escapes_and_scales() -> None:
    """Bars scale to the largest value, labels are escaped, and an empty chart says so."""
    svg = bar_chart([Bar("<a>", 10), Bar("b", 5)], title="t & u")
    widths = [float(w) for w in re.findall(r'<rect x="\d+" y="[\d.]+" width="([\d.]+)"', svg)]
    assert widths[0] == pytest.approx(2 * widths[1])
    assert "&lt;a&gt;" in svg and "t &amp; u" in svg and "<a>" not in svg
    assert "nothing to show" in bar_chart([], title="empty")
    assert text_px("CERN-PROD") > text_px("cern-prod") > 0


def test_formats_names_and_media_types(tiny: GridSnapshot) -> None:
    """Every format renders, has a media type and a download name; an unknown format is refused."""
    report = build_report(tiny, Config(), [1])
    assert FORMATS == ("csv", "json", "html")
    for fmt in FORMATS:
        assert render(report, fmt) and fmt in MEDIA_TYPES  # type: ignore[arg-type]
        assert filename(report, fmt) == f"brokerage-report-task-1-test-0.{fmt}"  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown report format 'xml'"):
        render(report, "xml")  # type: ignore[arg-type]


def test_write_atomic_keeps_the_old_file_on_failure(tmp_path: Path) -> None:
    """A write that fails half-way leaves the previous file untouched and no temporary file behind."""
    out = tmp_path / "r.csv"
    out.write_text("old")

    def half(f: Any) -> None:
        f.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_atomic(out, half)
    assert out.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.csv"]
    assert write_atomic(out, lambda f: f.write(b"new")) == 3 and out.read_text() == "new"


def test_funnel_rows_match_the_decision(tiny: GridSnapshot) -> None:
    """The CSV's funnel rows are the decision's funnel steps in order."""
    report = build_report(tiny, Config(), [1])
    rows = [r for r in csv_records(report) if r["record"] == "funnel"]
    steps: list[FunnelStep] = report.tasks[0].job.funnel  # type: ignore[union-attr]
    assert [(r["filter"], int(r["before"]), int(r["after"])) for r in rows] == [
        (f.filter, f.before, f.after) for f in steps
    ]


def test_whole_grid_json_summary_keeps_top_candidates_and_skip_counts(demo_report: Report) -> None:
    """The summary JSON of the whole grid keeps per decision the best candidates and skips counted per criteria code,
    which add up to the full JSON's skipped list."""
    from brokerage.report import summary_default
    from brokerage.report.tabular import TOP_CANDIDATES

    assert summary_default(demo_report) and filename(demo_report, "json", summary=True).startswith(
        "brokerage-report-all-summary-"
    )
    full = json.loads(render(demo_report, "json"))
    short = json.loads(render(demo_report, "json", summary=True))
    assert full["meta"]["detail"] == "full" and short["meta"]["detail"] == "summary"
    assert len(render(demo_report, "json", summary=True)) < len(render(demo_report, "json")) / 2
    checked = 0
    for f, s in zip(full["tasks"], short["tasks"], strict=True):
        assert f["task"] == s["task"]
        for kind in ("job", "nucleus"):
            if f[kind] is None:
                assert s[kind] is None
                continue
            fd, sd = f[kind], s[kind]
            assert "skipped" not in sd and sd["skipped_total"] == len(fd["skipped"])
            assert sd["candidates_total"] == len(fd["candidates"])
            assert sd["top_candidates"] == fd["candidates"][:TOP_CANDIDATES]
            counts: dict[str, int] = {}
            for skip in fd["skipped"]:
                counts[skip["criteria"]] = counts.get(skip["criteria"], 0) + 1
            assert sd["skips_by_criteria"] == counts and sd["status"] == fd["status"]
            checked += 1
    assert checked > 0


def test_task_reports_are_not_summarised(tiny: GridSnapshot) -> None:
    """A report of chosen tasks writes every skipped candidate by default; only the whole grid is summarised."""
    from brokerage.report import summary_default

    assert not summary_default(build_report(tiny, Config(), [1]))
