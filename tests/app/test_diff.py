"""The grid-diff page and /api/diff: two stored versions, the changed brokerages and the input that caused each."""

from __future__ import annotations

import json
from typing import Any

import pytest

from brokerage.brokers.router import run_job_brokerage
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.waiting import waiting_task_ids
from tests.app.test_tuning import db_app  # noqa: F401  the fixture: the app on a fresh SQLite database


def _text(tree: Any) -> str:
    """A component tree as JSON text, nested components included."""
    return json.dumps(
        tree.to_plotly_json(), default=lambda o: o.to_plotly_json() if hasattr(o, "to_plotly_json") else str(o)
    )


@pytest.fixture()
def two_versions(db_app: Any, snap: GridSnapshot) -> tuple[int, int, int, str]:  # noqa: F811
    """(old version, new version, task, queue): the new version has the task's top queue offline."""
    from brokerage.store.repository import save_snapshot
    from brokerage.store.versions import list_versions

    for tid in waiting_task_ids(snap):
        d = run_job_brokerage(snap, tid, Config())
        if len(d.candidates) >= 2:
            break
    top = d.candidates[0].name
    qs = snap.tables["queues"].copy()
    qs.loc[qs["panda_queue"] == top, "status"] = "offline"
    old = list_versions(db_app)[0].version
    new = save_snapshot(db_app, snap.replace(queues=qs))
    assert new is not None
    return old, new, tid, top


def test_api_diff_names_the_queue_that_went_offline(app_client: Any, two_versions: tuple[int, int, int, str]) -> None:
    """The task's top queue set offline in the new version: its top changes, caused by that queue's status row."""
    old, new, tid, top = two_versions
    r = app_client.get(f"/api/diff?from={old}&to=v{new}&task={tid}")
    assert r.status_code == 200, r.get_data(as_text=True)
    body = r.get_json()
    (t,) = [t for t in body["tasks"] if t["broker"] != "task"]
    assert t["task"] == tid and "top" in t["changed"] and t["before"]["top"][0] == top
    cause = t["causes"][0]
    assert (cause["table"], cause["row"], cause["level"]) == ("queues", [top], "row")
    assert f"status of {top} changed from online to offline" in cause["sentence"]
    assert body["config_version"] == "v0" and body["snapshot_version"].endswith(f"@{new}")
    versions = app_client.get("/api/versions").get_json()["versions"]
    assert [v["version"] for v in versions] == [new, old] and versions[0]["current"]


def test_api_diff_refuses_bad_versions_in_words(app_client: Any, two_versions: tuple[int, int, int, str]) -> None:
    """A malformed version is a 400 naming the parameter; a version not stored is a 404 listing the stored ones."""
    old, new, _, _ = two_versions
    r = app_client.get(f"/api/diff?from=yesterday&to={new}")
    assert r.status_code == 400 and "from: expected a stored grid version number" in r.get_json()["error"]
    r = app_client.get(f"/api/diff?from=99&to={new}")
    assert (
        r.status_code == 404 and f"from: no grid version 99 is stored (stored: {new}, {old})" in r.get_json()["error"]
    )


def test_diff_page_table_and_permalink(app_client: Any, two_versions: tuple[int, int, int, str]) -> None:
    """The page preselects the URL's versions and the callback's table names the task and the cause."""
    from app.callbacks.diff import diff_view
    from app.pages.diff import layout

    old, new, tid, top = two_versions
    page = _text(layout(**{"from": str(old), "to": str(new)}))
    assert f'"value": {old}' in page and f'"value": {new}' in page
    view = _text(diff_view(old, new, tid))
    assert f"status of {top} changed from online to offline" in view and "diff-sentence" in view
    same = _text(diff_view(new, new, None))
    assert "The same version twice" in same


def test_cause_counts_name_the_inputs_that_explain_most() -> None:
    """The summary counts each changed brokerage under the input of its first cause, largest first."""
    from app.viewmodels import diff as vm

    diff = {"tasks": [{"causes": [{"table": "network", "level": "row"}]}, {"causes": [{"table": "job_counts"}]},
                      {"causes": [{"table": "network", "level": "table"}]}, {"causes": []},
                      {"causes": [{"table": "queues", "level": "together"}]}]}  # fmt: skip
    assert vm.cause_counts(diff) == "network 2, job_counts 1, not attributed 1, several inputs together 1"
