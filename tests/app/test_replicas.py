"""Replicated simulations in the app: request keys, the job with its stored replicas, the API, the views."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from brokerage.model.gdpconfig import Config


def _text(component: Any) -> str:
    return json.dumps(component.to_plotly_json(), default=lambda o: o.to_plotly_json()
                      if hasattr(o, "to_plotly_json") else str(o))  # fmt: skip


def _wait(sims: Any, job_id: str) -> Any:
    for _ in range(1200):
        state = sims.poll(job_id)
        if state.finished:
            return state
        time.sleep(0.05)
    raise AssertionError("the replicated simulation did not finish")


def test_request_takes_replicas_and_a_sweep_and_names_bad_ones() -> None:
    """replicas is 1 to 20 and sweep is KEY=v1,v2,... with values valid for KEY: a bad one names the field."""
    from app.services.simulations import SimulationRequestError, parse_request

    req, _ = parse_request(Config(), {"compare": "1", "replicas": "5", "THROTTLE_THRESHOLD": "1.5"})
    assert req.replicas == 5 and req.replicated
    assert not parse_request(Config(), {"compare": "1", "THROTTLE_THRESHOLD": "1.5"})[0].replicated
    sweep = parse_request(Config(), {"sweep": "THROTTLE_THRESHOLD=1,1.5,2"})[0]  # 2 is the stored value
    assert sweep.sweep == ("THROTTLE_THRESHOLD", (1.0, 1.5, 2.0)) and sweep.replicated
    for query, words in (({"replicas": "0"}, "replicas: '0' is not allowed"), ({"replicas": "21"}, "1 to 20"),
                         ({"sweep": "THROTTLE_THRESHOLD"}, "sweep: 'THROTTLE_THRESHOLD' is not allowed"),
                         ({"sweep": "THROTTLE_THRESHOLD=0"}, "THROTTLE_THRESHOLD"),
                         ({"sweep": "NO_SUCH=1"}, "NO_SUCH")):  # fmt: skip
        with pytest.raises(SimulationRequestError, match=words):
            parse_request(Config(), query)


def test_replica_job_stores_every_run_with_its_seed_and_shows_intervals(
    app_client, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """A compare job with 3 replicas and 2 keys runs stored, what-if and each key alone on seeds 4, 5, 6, stores
    all 12 runs with their seeds, and the view shows the verdict, the error bars and the attribution."""
    from app.callbacks.simulate import result_view
    from app.main import services
    from app.services.simulations import parse_request
    from brokerage.runs import engine
    from brokerage.store.database import make_engine
    from brokerage.store.schema import upgrade

    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))
    db = make_engine(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    upgrade(db)
    monkeypatch.setattr(services.state, "engine", lambda: db)
    req, _ = parse_request(services.state.config(), {"hours": "0.5", "seed": "4", "compare": "1", "replicas": "3",
                                                     "THROTTLE_THRESHOLD": "0.5", "NQUEUED_SAT_CAP": "5"})  # fmt: skip
    job_id, _ = services.simulations.start(req)
    state = _wait(services.simulations, job_id)
    assert state.state == "done", state.error
    doc = state.result
    assert doc["seeds"] == [4, 5, 6] and doc["keys"] == ["THROTTLE_THRESHOLD", "NQUEUED_SAT_CAP"]
    assert len(doc["run_ids"]) == 12
    stored = app_client.get("/api/simulation/runs?limit=50").get_json()["runs"]
    assert sorted((r["label"], r["seed"]) for r in stored if r["label"] == "only NQUEUED_SAT_CAP") == [
        ("only NQUEUED_SAT_CAP", s) for s in (4, 5, 6)]  # fmt: skip
    row = doc["measures"][0]
    assert {"means", "difference", "interval", "significant", "attribution"} <= set(row)
    text = _text(result_view(doc))
    assert "sim-intervals" in text and "sim-attribution" in text and "sim-verdict" in text
    assert "3 replicas" in text and "paired t" in text
    db.dispose()


def test_api_answers_a_replicated_comparison(app_client, monkeypatch: pytest.MonkeyPatch) -> None:
    """POST /api/simulation?compare=1&replicas=2&KEY=VALUE (with the CSRF token) starts the replicas; GET answers
    with per-measure means, difference, interval and significant once done."""
    from brokerage.runs import engine
    from tests.app.test_simulate import start

    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))
    url = "/api/simulation?hours=0.5&compare=1&replicas=2&THROTTLE_THRESHOLD=0.5"
    assert start(app_client, url).status_code in (200, 202)
    for _ in range(1200):
        r = app_client.get(url)
        if r.status_code == 200:
            break
        assert r.status_code == 202
        time.sleep(0.05)
    doc = r.get_json()["result"]
    assert doc["kind"] == "compare" and doc["replicas"] == 2
    assert all({"means", "difference", "interval", "significant"} <= set(m) for m in doc["measures"])


def _doc() -> dict[str, Any]:
    from brokerage.sim.replicas import compare_plan, summarise, sweep_plan

    def runs(values: list[float]) -> list[dict[str, Any]]:
        return [{"meta": {"seed": i}, "headline": {}, "measures": {"jobs_finished": v, "share_gap:MC": 5.0}}
                for i, v in enumerate(values)]  # fmt: skip

    plan = compare_plan(Config(), {"THROTTLE_THRESHOLD": 1.5, "NQUEUED_SAT_CAP": 300})
    compare = summarise(plan, {"stored": runs([100, 110, 120]), "what-if": runs([120, 131, 139]),
                               "only THROTTLE_THRESHOLD": runs([119, 130, 140]),
                               "only NQUEUED_SAT_CAP": runs([100, 111, 119])}, 2, [0, 1, 2])  # fmt: skip
    splan = sweep_plan(Config(), "THROTTLE_THRESHOLD", [1.0, 2.0, 3.0])
    sweep = summarise(splan, {"stored": runs([100, 110, 120]), splan.labels[1]: runs([90, 100, 111]),
                              splan.labels[2]: runs([100, 110, 120]), splan.labels[3]: runs([101, 112, 119])},
                      2, [0, 1, 2])  # fmt: skip
    return {"compare": compare, "sweep": sweep}


def test_interval_figure_draws_error_bars_as_percent_of_the_stored_mean() -> None:
    """jobs finished: +20 (95 % interval 20 ± 4.303 · 1 / √3) of a stored mean 110 is drawn at 18.2 % with error bars
    to the interval's ends, blue because the interval excludes 0; the attribution draws each key and interactions."""
    from app.viewmodels import replicas as vm

    doc = _doc()["compare"]
    (trace,) = vm.interval_figure(doc)["data"]
    assert trace["y"] == [0] and trace["x"][0] == pytest.approx(100 * 20 / 110)
    assert vm.interval_figure(doc)["layout"]["yaxis"]["ticktext"] == ["jobs finished"]
    half = 100 * 4.303 / 3**0.5 / 110
    assert trace["error_x"]["array"][0] == pytest.approx(half, rel=1e-4) and trace["marker"]["color"] == [vm.REAL]
    names = [t["name"] for t in vm.attribution_figure(doc)["data"]]
    assert names == ["THROTTLE_THRESHOLD", "NQUEUED_SAT_CAP", "(interactions)"]
    real, rest = vm.verdict_lines(doc)
    assert real[0].startswith("jobs finished: 20 more under the what-if") and "share MC" in rest


def test_sweep_figure_is_a_line_with_a_band() -> None:
    """A sweep measure: the band's upper and lower edges (filled between), the mean line, the stored mean dashed."""
    from app.viewmodels import replicas as vm

    fig = vm.sweep_figure(_doc()["sweep"], "jobs_finished")
    upper, lower, mean, stored = fig["data"]
    assert lower["fill"] == "tonexty" and mean["x"] == [1.0, 2.0, 3.0] and mean["y"][1] == 110
    assert stored["line"]["dash"] == "dash" and stored["y"] == [110, 110]
    assert all(lo <= m <= hi for lo, m, hi in zip(lower["y"], mean["y"], upper["y"], strict=True))
