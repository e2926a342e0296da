"""The one app wires pages, callbacks and the JSON API correctly (Flask test client, no browser)."""

from __future__ import annotations

import collections

import pytest

PAGES = ["/", "/queues", "/queues?task=2&criteria=-cpucore", "/nuclei", "/network?metric=queued", "/stabilizer?user=alice",
         "/tasks?window=all", "/task?id=1", "/queue?name=AGLT2_Q2", "/no-such-page"]  # fmt: skip


@pytest.mark.parametrize("path", PAGES)
def test_every_page_renders(app_client, path: str) -> None:
    """Every page's shell is served with status 200."""
    assert app_client.get(path).status_code == 200


def test_layout_and_dependencies(app_client) -> None:
    """/_dash-layout and /_dash-dependencies answer, and every callback output is registered once."""
    assert app_client.get("/_dash-layout").status_code == 200
    deps = app_client.get("/_dash-dependencies").get_json()
    outputs = collections.Counter(d["output"] for d in deps)
    assert outputs and max(outputs.values()) == 1
    assert "network-heatmap.figure" in outputs
    assert any("queues-headline.children" in o and "queues-ranked.rowData" in o for o in outputs)
    single = [p for o in outputs for p in o.strip(".").split("...")]
    assert len(single) == len(set(single)), "an output property is targeted by two callbacks"


def test_decision_callback_through_http(app_client) -> None:
    """Picking a task over HTTP fills the mounted decision panel (multi-output callback); once the ranked rows are in,
    the charts callback draws the funnel."""
    deps = app_client.get("/_dash-dependencies").get_json()
    dep = next(d for d in deps if "queues-headline.children" in d["output"])
    outputs = [{"id": p.split(".")[0], "property": p.split(".")[1]} for p in dep["output"].strip(".").split("...")]
    inputs = [
        {"id": "queues-task", "property": "value", "value": 1},
        {"id": "queues-criteria", "property": "value", "value": []},
    ]
    body = {
        "output": dep["output"],
        "outputs": outputs,
        "inputs": inputs,
        "changedPropIds": ["queues-task.value"],
        "state": [],
    }
    r = app_client.post("/_dash-update-component", json=body)
    assert r.status_code == 200, r.data[:300]
    resp = r.get_json()["response"]
    assert resp["queues-ranked"]["rowData"][0]["rank"] == 1
    dep = next(d for d in deps if "queues-funnel.figure" in d["output"])
    body = {
        "output": dep["output"],
        "outputs": [
            {"id": p.split(".")[0], "property": p.split(".")[1]} for p in dep["output"].strip(".").split("...")
        ],
        "inputs": [{"id": "queues-ranked", "property": "rowData", "value": resp["queues-ranked"]["rowData"]}],
        "changedPropIds": ["queues-ranked.rowData"],
        "state": [{"id": "queues-task", "property": "value", "value": 1}],
    }
    r = app_client.post("/_dash-update-component", json=body)
    assert r.status_code == 200, r.data[:300]
    assert r.get_json()["response"]["queues-funnel"]["figure"]["data"][0]["type"] == "funnel"


@pytest.mark.parametrize(
    ("path", "key"),
    [("/api/queues", "queues"), ("/api/tasks/1/jobs", "candidates"), ("/api/tasks/1/nucleus", "candidates"),
     ("/api/network?metric=closeness", "z"), ("/api/stabilizer", "rows"), ("/api/task-states", "transitions"),
     ("/api/overview", "skip_census"), ("/api/nuclei", "nuclei"), ("/api/tasks/6/history", "history")],
)  # fmt: skip
def test_api_routes_return_json(app_client, path: str, key: str) -> None:
    """Each API route answers JSON carrying the view's data and the snapshot key."""
    r = app_client.get(path)
    assert r.status_code == 200 and r.is_json
    body = r.get_json()
    assert key in body and body["snapshot"] == "test@0"
    assert body["snapshot_version"] == "test@0" and body["config_version"] == "defaults"


def test_api_errors_are_json(app_client) -> None:
    """Unknown tasks and bad parameters give JSON errors naming the problem."""
    r = app_client.get("/api/tasks/999/jobs")
    assert r.status_code == 404 and "unknown task 999" in r.get_json()["error"]
    r = app_client.get("/api/network?metric=nope")
    assert r.status_code == 400 and "metric must be one of" in r.get_json()["error"]


@pytest.mark.parametrize(
    ("module", "params"),
    [("overview", {}), ("queues", {"task": "2", "criteria": "-cpucore"}), ("nuclei", {"task": "1"}), ("network", {"metric": "queued"}),
     ("stabilizer", {"user": "alice"}), ("tasks", {"window": "24h"}), ("task", {"id": "6"}), ("queue", {"name": "AGLT2_Q2"})],
)  # fmt: skip
def test_page_layouts_render_without_errors(app_client, module: str, params: dict) -> None:
    """Each registered page layout builds from its URL parameters without an inline error."""
    import dash

    page = dash.page_registry[f"app.pages.{module}"]
    tree = page["layout"](**params)
    assert "failed:" not in str(tree) and "Alert(" not in str(tree)  # no error, no unusable-parameter notice


def test_page_layout_errors_are_inline(app_client) -> None:
    """A bad URL parameter renders an inline alert naming the problem instead of a traceback."""
    import dash

    tree = dash.page_registry["app.pages.queue"]["layout"](name="NOPE")
    assert "Queue page: " in str(tree) and "unknown queue 'NOPE'" in str(tree) and "KeyError" not in str(tree)


@pytest.mark.parametrize("module", ["queues", "nuclei", "tuning"])
def test_unknown_task_in_a_permalink_is_said_inline(app_client, module: str) -> None:
    """A permalink naming no task of the snapshot shows a warning with the value, and the page still opens."""
    import dash

    tree = str(dash.page_registry[f"app.pages.{module}"]["layout"](task="999"))
    assert "task=999: no such task in this snapshot" in tree and "failed:" not in tree


@pytest.mark.parametrize(
    ("module", "params", "said"),
    [("network", {"metric": "bogus"}, "metric=bogus: not one of weight"),
     ("tasks", {"window": "3y"}, "window=3y: not one of 6h, 24h"),
     ("stabilizer", {"user": "Nobody Here"}, "user=Nobody Here: not one of"),
     ("stabilizer", {"queue": "FOO"}, "queue=FOO: not one of")],
)  # fmt: skip
def test_unusable_permalink_choices_are_said_inline(app_client, module: str, params: dict, said: str) -> None:
    """A permalink value a page cannot use is named in a warning with what is allowed, and the page still opens."""
    import dash

    tree = str(dash.page_registry[f"app.pages.{module}"]["layout"](**params))
    assert said in tree and "failed:" not in tree
