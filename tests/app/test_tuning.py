"""Tuning page: diff viewmodels on hand-built decisions, edit → re-rank callbacks, and operator-only saving."""

from __future__ import annotations

import base64
import csv
import gzip
import io
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from app.viewmodels import tuning as vm
from brokerage.model.explain import Candidate, Decision, Skip
from brokerage.model.gdpconfig import REGISTRY, Config, parse_edits
from brokerage.whatif.compare import compare


def _text(tree: object) -> str:
    return json.dumps(
        tree.to_plotly_json() if hasattr(tree, "to_plotly_json") else tree,
        ensure_ascii=False,
        default=lambda o: o.to_plotly_json() if hasattr(o, "to_plotly_json") else str(o),
    )


def _decision(cands: list[tuple[str, float]], skips: list[tuple[str, str]]) -> Decision:
    return Decision(
        "production",
        1,
        "ok" if cands else "pending",
        [Candidate(n, i, w, {"queue": w}) for i, (n, w) in enumerate(cands, start=1)],
        [Skip(n, c, f"because {c}", c) for n, c in skips],
        [],
        {},
    )


# ---------------------------------------------------------------- viewmodels


def test_side_rows_show_both_rankings_with_moves() -> None:
    """Before lists A then B; after lists B (▲1, +share) then A (▼1) and the newcomer C."""
    diff = compare(
        _decision([("A", 3.0), ("B", 1.0)], [("C", "-status")]), _decision([("B", 2.0), ("A", 1.0), ("C", 1.0)], [])
    )
    left, right = vm.side_rows(diff)
    assert [(r["rank"], r["name"], r["share"]) for r in left] == [(1, "A", "75.0%"), (2, "B", "25.0%")]
    assert [(r["name"], r["move"]) for r in right] == [("B", "▲1"), ("A", "▼1"), ("C", "new")]
    assert right[0]["share_delta"] == "+25.0 pt"  # 25% → 50%
    assert vm.filter_rows(diff) == [
        {"name": "C", "change": "newly passes", "criteria": "-status", "reason": "because -status"}
    ]
    assert vm.factor_rows(diff)[0] == {"name": "B", "factor": "queue", "before": "1", "after": "2"}
    assert "Top queue A → B" in vm.headline(diff)


def test_out_rows_name_the_filter_that_now_removes_a_candidate() -> None:
    """A candidate that leaves the ranking is listed with the criteria that removes it after the edit."""
    diff = compare(_decision([("A", 1.0), ("B", 1.0)], []), _decision([("A", 1.0)], [("B", "-link_unusable")]))
    assert vm.out_rows(diff) == [
        {"name": "B", "rank_before": 2, "criteria": "-link_unusable", "reason": "because -link_unusable"}
    ]


def test_headline_without_change() -> None:
    """An unchanged decision says so."""
    d = _decision([("A", 1.0)], [])
    assert vm.headline(compare(d, d)).startswith("No change")


def test_parse_edits_keeps_real_changes_and_refuses_bad_values_with_the_range() -> None:
    """Values equal to the stored one are no edit; out-of-range values are refused naming the allowed range."""
    cfg = Config(stored={"NQUEUED_SAT_CAP": 200})
    e = parse_edits(
        {"NQUEUED_SAT_CAP": 200, "MAX_SITE_CANDIDATES": 5, "NW_ACTIVE": False, "RW_OFFSET": None}, cfg, variants=False
    )
    assert e.overrides == {"MAX_SITE_CANDIDATES": 5, "NW_ACTIVE": False} and not e.errors
    bad = parse_edits({"NQUEUED_SAT_CAP": -5, "NOT_A_KEY": 1}, cfg, variants=False)
    assert not bad.overrides
    assert "NQUEUED_SAT_CAP" in bad.errors["NQUEUED_SAT_CAP"] and "[1, 10000000]" in bad.errors["NQUEUED_SAT_CAP"]
    assert "not a gdpconfig parameter" in bad.errors["NOT_A_KEY"]
    # an emptied box (or a number the browser could not hold, e.g. 1e999) is refused, not silently ignored
    empty = parse_edits({"NW_THRESHOLD": "", "MAX_SITE_CANDIDATES": 2.5}, cfg, variants=False)
    assert not empty.overrides
    assert empty.errors["NW_THRESHOLD"] == "NW_THRESHOLD: a value is required: a number in [0, 10]"
    assert "expected an integer in [1, 1000]" in empty.errors["MAX_SITE_CANDIDATES"]
    assert vm.raw_from_rows([{"key": "NW_THRESHOLD", "value": None, "stored": 1.7, "kind": "number"}]) == {
        "NW_THRESHOLD": ""
    }


def test_permalink_round_trips_task_and_edits() -> None:
    """The permalink's query string carries the task and each edit, and parses back to the same overrides."""
    url = vm.permalink(42, {"NQUEUED_SAT_CAP": 300, "NW_ACTIVE": False})
    query = dict(parse_qsl(urlsplit(url).query))
    assert query["task"] == "42"
    assert parse_edits(vm.edits_from_query(query), Config(), variants=False).overrides == {
        "NQUEUED_SAT_CAP": 300,
        "NW_ACTIVE": False,
    }
    assert vm.permalink(None, {}) == "/tuning"
    # a table's filter and sort in the same URL are page state, not unknown gdpconfig keys
    assert vm.edits_from_query({**query, "i_f": '{"task": "7"}', "i_s": "task:desc"}) == vm.edits_from_query(query)


def test_param_rows_cover_every_broker_parameter_with_its_users() -> None:
    """Every registered parameter appears once in the editor groups, with default, allowed range and users."""
    keys = [p.key for _, _, ps in vm.components() for p in ps]
    assert sorted(keys) == sorted(REGISTRY)
    row = vm.param_row(REGISTRY["NQUEUED_SAT_CAP"], Config(), {"NQUEUED_SAT_CAP": 20})
    assert row["default"] == "150" and row["edited"] and row["value"] == 20
    # who reads it comes from the rules' declarations: the filter comparing with it, those reading the network
    # weights made from it, the network weight factor, and the nucleus broker's -job check running those filters
    assert row["used_by"] == [
        "production: link check, satellite link queue check, nucleus transfer queue check, express network check, "
        "weight network",
        "nucleus: job check",
    ]
    assert vm.matches(REGISTRY["NQUEUED_SAT_CAP"], "satellite link") and not vm.matches(
        REGISTRY["RW_OFFSET"], "satellite link"
    )


# ---------------------------------------------------------------- callbacks


def test_edit_rerenders_the_task_before_and_after(app_client) -> None:
    """Switching NW_ACTIVE off re-ranks task 1 of the sample grid: its top queue changes from CERN-PROD_Q8."""
    from app.callbacks.tuning import update_task_view
    from app.main import state

    rows = vm.editor_rows(state.config(), {}, vm.Edits({}, {}))
    same = _text(update_task_view(vm.raw_from_rows(rows), 1)[0])
    assert "No change for this task" in same
    for r in rows:
        if r["key"] == "NW_ACTIVE":
            r["value"] = False
    assert vm.raw_from_rows(rows) == {"NW_ACTIVE": False}
    out, trigger = update_task_view(vm.raw_from_rows(rows), 1)
    out = _text(out)
    assert trigger == {"NW_ACTIVE": False}
    assert "Top queue CERN-PROD_Q8 → MWT2_Q11" in out and "weight factors changed" in out


def test_invalid_edit_is_refused_inline_and_left_out(app_client) -> None:
    """An out-of-range value is marked on its row and in the summary with the allowed range, and is not applied."""
    from app.callbacks.tuning import update_edits

    transaction, summary, link, sim = update_edits({"NQUEUED_SAT_CAP": 0, "MAX_SITE_CANDIDATES": 3}, 1)
    rows = {r["key"]: r for r in transaction["update"]}
    assert "an integer in [1, 10000000]" in rows["NQUEUED_SAT_CAP"]["error"] and not rows["NQUEUED_SAT_CAP"]["edited"]
    assert rows["MAX_SITE_CANDIDATES"]["edited"] and rows["MAX_SITE_CANDIDATES"]["error"] == ""
    assert "refused: NQUEUED_SAT_CAP" in _text(summary) and "[1, 10000000]" in _text(summary)
    assert link == "/tuning?task=1&MAX_SITE_CANDIDATES=3"
    assert sim == "/simulate?hours=6&compare=1&MAX_SITE_CANDIDATES=3"  # the simulation of the same edits


def test_save_is_refused_while_an_edit_is_invalid(app_client) -> None:
    """Saving with a refused edit in the set writes nothing and names the refused key."""
    from app.callbacks.tuning import save_raw

    msg, redirect = save_raw({"NQUEUED_SAT_CAP": 0}, "alice", "s3cret", "why", 0)
    assert redirect is None
    assert "fix the refused edits first (NQUEUED_SAT_CAP)" in _text(msg)


def test_editor_rows_carry_value_kind_and_refusal() -> None:
    """Each editor row has the raw value, the stored value, the control kind and the refusal message."""
    cfg = Config()
    edits = parse_edits({"NW_ACTIVE": False, "NQUEUED_SAT_CAP": 0}, cfg, variants=False)
    rows = {r["key"]: r for r in vm.editor_rows(cfg, {"NW_ACTIVE": False, "NQUEUED_SAT_CAP": 0}, edits)}
    assert len(rows) == len(REGISTRY)
    assert (rows["NW_ACTIVE"]["kind"], rows["NW_ACTIVE"]["value"], rows["NW_ACTIVE"]["edited"]) == (
        "switch",
        False,
        True,
    )
    assert rows["NQUEUED_SAT_CAP"]["kind"] == "number" and rows["NQUEUED_SAT_CAP"]["error"]
    assert rows["NQUEUED_SAT_CAP"]["stored"] == 150 and rows["NQUEUED_SAT_CAP"]["used_by"].startswith(
        "production: link check, satellite link queue check"
    )


def test_grid_view_counts_moved_tasks(app_client) -> None:
    """The whole-grid view under NW_ACTIVE=false reports tasks whose top candidate changed."""
    from app.callbacks.tuning import grid_view

    assert "No edits yet" in _text(grid_view({}))
    text = _text(grid_view({"NW_ACTIVE": False}))
    assert "top candidate changed" in text and "brokerage runs recomputed" in text


# ---------------------------------------------------------------- saving with the operator role


@pytest.fixture()
def db_app(tmp_path: Path, snap: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """The app served from a fresh SQLite database holding the sample grid, with one operator 'alice'."""
    from app.main import state  # the one app must exist before callbacks are called
    from brokerage.store.database import make_engine
    from brokerage.store.repository import save_snapshot
    from brokerage.store.schema import upgrade

    url = f"sqlite:///{tmp_path / 'grid.sqlite'}"
    engine = make_engine(url)
    upgrade(engine)
    save_snapshot(engine, snap)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.delenv("BROKERAGE_SNAPSHOT", raising=False)
    monkeypatch.setenv("BROKERAGE_OPERATORS", "alice:s3cret")
    state.reset()
    yield engine
    state.reset()


def test_viewer_save_is_refused_and_nothing_is_written(db_app) -> None:
    """Without the operator secret a save is refused with the reason, and no version is written."""
    from app.callbacks.tuning import save_edits
    from brokerage.store.config_store import current_version, history

    msg, redirect = save_edits({"NQUEUED_SAT_CAP": 300}, "bob", "guess", "more files", 0)
    assert "Not saved" in _text(msg) and "unknown operator name or wrong secret" in _text(msg) and redirect is None
    msg, _ = save_edits({"NQUEUED_SAT_CAP": 300}, "alice", "wrong", "more files", 0)
    assert "unknown operator name or wrong secret" in _text(msg)  # the same words: names cannot be probed
    assert current_version(db_app) == 0 and history(db_app) == []


def test_operator_saves_then_restores(db_app) -> None:
    """An operator's save becomes version 1 with who and why; restoring version 0 writes version 2 with the defaults."""
    from app.callbacks.tuning import restore, save_edits
    from app.main import state
    from brokerage.store.config_store import history

    msg, redirect = save_edits({"NQUEUED_SAT_CAP": 300}, "alice", "s3cret", "more queued files", 0)
    assert "Saved as version 1" in _text(msg) and redirect == "/tuning?saved=1"
    assert state.config().get("NQUEUED_SAT_CAP") == 300 and state.config().version == 1
    v = history(db_app)[0]
    assert (v.version, v.who, v.comment, [c.key for c in v.changes]) == (
        1,
        "alice",
        "more queued files",
        ["NQUEUED_SAT_CAP"],
    )
    msg, redirect = restore(0, "alice", "s3cret")
    assert "Restored version 0 as version 2" in _text(msg)
    assert state.config().get("NQUEUED_SAT_CAP") == 150


def test_stale_save_is_refused_as_a_conflict(db_app) -> None:
    """A save based on an old version whose key someone else changed meanwhile is refused; the newer value stays."""
    from app.callbacks.tuning import save_edits
    from app.main import state

    save_edits({"NQUEUED_SAT_CAP": 300}, "alice", "s3cret", "first", 0)
    msg, redirect = save_edits({"NQUEUED_SAT_CAP": 400}, "alice", "s3cret", "second, from an old page", 0)
    assert "changed since version 0" in _text(msg) and redirect is None
    assert state.config().get("NQUEUED_SAT_CAP") == 300


def test_no_operators_configured_disables_saving(db_app, monkeypatch: pytest.MonkeyPatch) -> None:
    """With BROKERAGE_OPERATORS unset nobody can save, and the message says how to enable it."""
    from app.callbacks.tuning import save_edits

    monkeypatch.delenv("BROKERAGE_OPERATORS")
    msg, _ = save_edits({"NQUEUED_SAT_CAP": 300}, "alice", "s3cret", "x", 0)
    assert "no operators are configured" in _text(msg)
    assert os.environ.get("BROKERAGE_OPERATORS") is None


# ---------------------------------------------------------------- reports from the app


def test_export_task_report_under_the_edits_downloads_and_is_served(app_client) -> None:
    """A task's HTML report is written, records the what-if edit, is pushed to the browser and served by its link."""
    from app.callbacks.reports import export

    payload, status = export("task", "html", 1, {"NW_ACTIVE": False})
    assert payload["filename"].endswith(".html") and payload["base64"]
    html_text = base64.b64decode(payload["content"]).decode()
    assert "NW_ACTIVE" in html_text and "<svg" in html_text
    link = re.search(r'"href": "(/reports/[^"]+)"', _text(status)).group(1)
    resp = app_client.get(link)
    assert resp.status_code == 200 and resp.data.decode() == html_text


def test_export_all_tasks_csv_parses(app_client) -> None:
    """The whole-grid CSV report parses and covers every waiting task of the sample grid."""
    from app.callbacks.reports import export

    payload, _ = export("all", "csv", None, {})
    # the whole grid's tables are served gzip-compressed
    assert payload["filename"].endswith(".csv.gz") and payload["type"] == "application/gzip"
    text = gzip.decompress(base64.b64decode(payload["content"])).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {int(r["task"]) for r in rows if r["task"]} == {1, 2, 3, 4, 7, 8}


def test_export_refuses_invalid_edits_and_bad_paths(app_client) -> None:
    """A refused edit blocks the export, and the download route serves nothing outside its folder."""
    from app.callbacks.reports import export

    payload, status = export("task", "json", 1, {"NQUEUED_SAT_CAP": 0})
    assert payload is None and "fix the refused edits first" in _text(status)
    sneaky = app_client.get("/reports/0123456789abcdef/..%2F..%2Fpyproject.toml")
    assert b"[build-system]" not in sneaky.data and "attachment" not in (
        sneaky.headers.get("Content-Disposition") or ""
    )
    assert app_client.get("/reports/not-a-token/x.csv").status_code == 404
    assert app_client.get("/reports/0123456789abcdef/missing.csv").status_code == 404


def _small_runs_on_the_cluster() -> None:
    """On a worker: send even the sample grid's few brokerages to the cluster in chunks."""
    from brokerage.runs import chunks

    chunks.MIN_CLUSTER_TASKS = 1


def _grid_impact_on_the_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Any, Any, list[int]]:
    """The tuning page's grid impact of one edit as a job on the engine's cluster, with every run sent to the
    cluster in chunks; checked against the serial impact; (view, what-if, progress percents seen)."""
    from app.callbacks.tuning import grid_result_view
    from app.main import state
    from app.services.jobs import Jobs
    from app.services.whatif import WhatIf
    from brokerage.brokers.batch import run_grid_serial as run_grid
    from brokerage.runs import chunks
    from brokerage.whatif.impact import impact, rerun_grid, summary

    monkeypatch.setattr(chunks, "MIN_CLUSTER_TASKS", 1)  # the sample grid is small: send it to the cluster anyway
    jobs = Jobs()  # on the engine's cluster (embedded or DASK_SCHEDULER_ADDRESS), as the app's own job service
    jobs.client().run(_small_runs_on_the_cluster)
    whatif = WhatIf(state, jobs)
    edit = {"NQUEUED_SAT_CAP": 300}
    job_id, st = whatif.start_grid(edit, "10.0.0.1")
    seen: list[int] = []
    while not st.finished:
        seen.append(st.percent)
        time.sleep(0.02)
        st = jobs.poll(job_id)
    assert st.state == "done", st.error
    seen.append(st.percent)
    got = st.result
    before = run_grid(state.snapshot(), state.config())
    after = rerun_grid(state.snapshot(), before, state.config(), state.effective_config(edit))
    assert summary(got.impact) == summary(impact(before, after)) and got.recomputed == after.recomputed
    return grid_result_view(got, edit), got, seen


def test_grid_impact_runs_on_the_embedded_cluster(app_client, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The tuning page's grid impact runs on an embedded LocalCluster and equals the serial impact, with progress."""
    from brokerage import runs
    from brokerage.runs import engine

    monkeypatch.delenv(engine.SCHEDULER_ENV, raising=False)
    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=2))
    try:
        view, _, seen = _grid_impact_on_the_cluster(monkeypatch, tmp_path)
        assert runs.running_client() is not None and runs.running_client().cluster is not None
        assert "tune-grid-impact" in str(view) and seen and seen[-1] == 100
    finally:
        runs.close()


def test_grid_impact_runs_on_an_external_cluster(app_client, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With DASK_SCHEDULER_ADDRESS the grid impact runs on that scheduler's workers and equals the serial impact."""
    from brokerage import runs
    from brokerage.runs import engine
    from tests.dask_cluster import external_cluster

    with external_cluster(tmp_path, workers=2) as (address, _):
        monkeypatch.setenv(engine.SCHEDULER_ENV, address)
        monkeypatch.setattr(engine, "_engine", engine._Engine())
        try:
            view, _, _ = _grid_impact_on_the_cluster(monkeypatch, tmp_path)
            client = runs.running_client()
            assert client is not None and client.scheduler.address == address and client.cluster is None
            assert "tune-grid-impact" in str(view)
        finally:
            runs.close()


def test_edits_are_parsed_in_the_core_not_in_the_viewmodel() -> None:
    """The services and pages take parsed edits from the core (gdpconfig.parse_edits); the viewmodel only formats."""
    import ast

    root = Path(__file__).resolve().parents[2] / "app"
    importers = [
        p.name
        for p in (*root.joinpath("services").glob("*.py"), *root.joinpath("pages").glob("*.py"))
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module == "app.viewmodels.tuning"
    ]
    assert importers == [] and not hasattr(vm, "parse_edits")
