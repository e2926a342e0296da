"""Answers kept with flask-caching per (snapshot key, config fingerprint): whole-grid API bodies and page tables."""

from __future__ import annotations

import dataclasses
from typing import Any


def test_whole_grid_api_answers_are_kept_per_grid_and_config(app_client: Any) -> None:
    """The second GET of a whole-grid route is answered from the cache with the same body; another config (a saved
    version) is another key, so it is computed again; per-task and job routes are never kept."""
    from app.main import state

    state.answers.clear()
    first = app_client.get("/api/queues")
    again = app_client.get("/api/queues")
    assert (first.headers["X-Answer-Cache"], again.headers["X-Answer-Cache"]) == ("miss", "hit")
    assert again.get_json() == first.get_json()
    src = state.source()
    try:
        state.loader.reset(dataclasses.replace(src, config=src.config.with_overrides({"NQUEUED_SAT_CAP": 300})))
        assert app_client.get("/api/queues").headers["X-Answer-Cache"] == "miss"
    finally:
        state.loader.reset(src)
    assert app_client.get("/api/queues").headers["X-Answer-Cache"] == "hit"
    assert "X-Answer-Cache" not in app_client.get("/api/tasks/1/jobs").headers
    assert "X-Answer-Cache" not in app_client.get("/api/versions").headers


def test_a_failed_answer_is_not_kept(app_client: Any) -> None:
    """Only 200 answers are kept: a refused query is answered afresh each time."""
    for _ in range(2):
        bad = app_client.get("/api/network?metric=nope")
        assert bad.status_code == 400 and bad.headers["X-Answer-Cache"] == "miss"


def test_page_tables_come_from_the_answer_cache(app_client: Any) -> None:
    """The queues table is built once per snapshot and config: a second build returns the kept rows."""
    from app.main import state
    from app.viewmodels import queues as qvm

    state.answers.clear()
    calls: list[int] = []

    def build(src: Any) -> Any:
        calls.append(1)
        return qvm.queue_rows(src.snap)

    rows = state.answers.get("queue_rows", build)
    assert state.answers.get("queue_rows", build) == rows and calls == [1]


def test_answers_are_shared_through_redis(snap: Any) -> None:
    """With Redis (REDIS_URL in a deployment) an answer kept by one server process is read by another: two answer
    caches on two Flask apps share it. Needs TEST_REDIS_URL (scripts/test.sh starts a Redis)."""
    import os

    import pytest
    from flask import Flask

    from app.state import Answers, Source
    from brokerage.model.gdpconfig import Config

    url = os.environ.get("TEST_REDIS_URL")
    if not url:
        pytest.skip("TEST_REDIS_URL is not set")
    src = Source(snap, Config(), "test")
    config = {"CACHE_TYPE": "RedisCache", "CACHE_REDIS_URL": url, "CACHE_KEY_PREFIX": f"test-{os.getpid()}:"}
    one, two = Answers(lambda: src), Answers(lambda: src)
    one.init_app(Flask("one"), config)
    two.init_app(Flask("two"), config)
    one.clear()
    assert one.get("rows", lambda s: [len(s.snap.queues)]) == [len(snap.queues)]
    assert two.get("rows", lambda s: ["computed again"]) == [len(snap.queues)]
    one.clear()
