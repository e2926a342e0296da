"""The /api/… answer behind each page: the navbar's JSON link and a page's ?json both lead there."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

from app.viewmodels.tuning import edits_from_query

PLAIN = {"/": "/api/overview", "/stabilizer": "/api/stabilizer", "/tasks": "/api/task-states",
         "/pending": "/api/pending", "/versions": "/api/versions"}  # fmt: skip


def _task(query: Mapping[str, str], key: str = "task") -> str | None:
    value = str(query.get(key, "") or "").strip()
    return value if value.isdigit() else None


def _keep(query: Mapping[str, str], *keys: str) -> str:
    kept = {k: query[k] for k in keys if query.get(k)}
    return "?" + urlencode(kept) if kept else ""


def api_url(path: str, query: Mapping[str, str]) -> str | None:
    """The /api URL answering what page PATH shows for QUERY (a task's brokerage when one is picked, the what-if
    edits of a tuning permalink kept); None for a page without one.

    Usage: ``api_url("/queues", {"task": "7"}) == "/api/tasks/7/jobs"``
    """
    path = "/" + path.strip("/") if path.strip("/") else "/"
    task = _task(query)
    if path in PLAIN:
        return PLAIN[path] + (_keep(query, "criteria") if path == "/pending" else "")
    if path == "/queues":
        return f"/api/tasks/{task}/jobs" if task else "/api/queues"
    if path == "/nuclei":
        return f"/api/tasks/{task}/nucleus" if task else "/api/nuclei"
    if path == "/tuning" and task:
        edits = {k: v for k, v in edits_from_query(query).items() if k != "json"}
        return f"/api/tasks/{task}/jobs" + ("?" + urlencode(sorted(edits.items())) if edits else "")
    if path == "/task" and _task(query, "id"):
        return f"/api/tasks/{_task(query, 'id')}/jobs"
    if path == "/network":
        return "/api/network" + _keep(query, "metric")
    if path == "/dirac":
        return "/api/dirac/match" + _keep(query, "pilot", "seed") if query.get("pilot") else "/api/dirac/taskqueues"
    if path == "/diff":
        return "/api/diff" + _keep(query, "from", "to", "task")
    if path == "/simulate":
        return "/api/simulation" + ("?" + urlencode({k: v for k, v in query.items() if k != "json"}) if query else "")
    return None
