"""Whole-grid API answers kept with flask-caching per (snapshot key, config fingerprint, path and query): the body of
a 200 answer is kept, and the next GET of the same URL on the same grid and config is answered from it."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask, Response, g, request

from app.state import AppState

# whole-grid answers only: per-task answers come from the decision cache already, jobs and versions are not pure
# functions of the loaded grid
CACHED = re.compile(r"^/api/(overview|pending|queues|nuclei|network|stabilizer|task-states)$")
MAX_BYTES = 8 * 2**20  # a body larger than this is not kept


def register(server: Flask, state: AppState) -> None:
    """Answer cacheable API GETs of SERVER from STATE's answer cache, and keep the answers it computes."""

    @server.before_request
    def answer_from_cache() -> Any:
        if request.method != "GET" or not CACHED.match(request.path):
            return None
        g.answer_key = state.answers.key("api", request.full_path)
        body = state.answers.peek(g.answer_key)
        if body is None:
            return None
        return Response(body, mimetype="application/json", headers={"X-Answer-Cache": "hit"})

    @server.after_request
    def keep_answer(resp: Response) -> Response:
        key = g.pop("answer_key", None)
        if key is None or "X-Answer-Cache" in resp.headers:
            return resp
        if resp.status_code == 200 and resp.mimetype == "application/json" and not resp.direct_passthrough:
            body = resp.get_data()
            if len(body) <= MAX_BYTES:
                state.answers.put(key, body)
        resp.headers["X-Answer-Cache"] = "miss"
        return resp
