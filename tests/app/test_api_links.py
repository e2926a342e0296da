"""Issue #33 item 16: the JSON behind every view: each page's /api answer, ?json never answered with HTML, and a
task's job brokerage under the what-if edits a tuning permalink carries."""

from __future__ import annotations

from typing import Any

import pytest

from app.viewmodels.apilink import api_url


@pytest.mark.parametrize(
    ("path", "query", "url"),
    [
        ("/", {}, "/api/overview"),
        ("/queues", {"task": "7"}, "/api/tasks/7/jobs"),
        ("/queues", {}, "/api/queues"),
        ("/nuclei", {"task": "4"}, "/api/tasks/4/nucleus"),
        ("/tuning", {"task": "1", "NQUEUED_SAT_CAP": "300"}, "/api/tasks/1/jobs?NQUEUED_SAT_CAP=300"),
        ("/network", {"metric": "queued", "link": "A>B"}, "/api/network?metric=queued"),
        ("/pending", {"criteria": "-cpucore"}, "/api/pending?criteria=-cpucore"),
        ("/dirac", {"pilot": "Site=X"}, "/api/dirac/match?pilot=Site%3DX"),
        ("/diff", {"from": "1", "to": "2"}, "/api/diff?from=1&to=2"),
        ("/tasks", {"window": "24h"}, "/api/task-states"),
        ("/nowhere", {}, None),
    ],
)
def test_every_page_names_its_api_answer(path: str, query: dict[str, str], url: str | None) -> None:
    """Each page maps to the /api route that answers what it shows (a picked task's brokerage, the edits kept)."""
    assert api_url(path, query) == url


def test_a_page_asked_with_json_answers_json(app_client: Any) -> None:
    """`/queues?task=1&json` is redirected to /api/tasks/1/jobs and ends in JSON, never the page's HTML; a path
    without an answer says so in JSON with 404."""
    r = app_client.get("/queues?task=1&json")
    assert r.status_code == 302 and r.headers["Location"].endswith("/api/tasks/1/jobs")
    body = app_client.get("/queues?task=1&json", follow_redirects=True)
    assert body.is_json and body.get_json()["task"] == 1
    missing = app_client.get("/nowhere?json")
    assert missing.status_code == 404 and missing.is_json


def test_task_jobs_api_honours_whatif_parameters(app_client: Any) -> None:
    """/api/tasks/<id>/jobs?KEY=VALUE brokers under that what-if (its config_version says so, the decision's config
    lists the edit) and refuses a bad value or unknown key with 400 naming it; without edits it is the stored one."""
    plain = app_client.get("/api/tasks/1/jobs").get_json()
    edited = app_client.get("/api/tasks/1/jobs?NQUEUED_SAT_CAP=300").get_json()
    assert plain["whatif"] == {} and edited["whatif"] == {"NQUEUED_SAT_CAP": 300}
    assert edited["config_version"] == "what-if on defaults (NQUEUED_SAT_CAP=300)"
    assert edited["config"].get("NQUEUED_SAT_CAP") == 300 and "NQUEUED_SAT_CAP" not in plain["config"]
    bad = app_client.get("/api/tasks/1/jobs?NQUEUED_SAT_CAP=-5")
    assert bad.status_code == 400 and bad.get_json()["field"] == "NQUEUED_SAT_CAP"
    unknown = app_client.get("/api/tasks/1/jobs?BOGUS=1")
    assert unknown.status_code == 400 and unknown.get_json()["field"] == "BOGUS"
