"""Read-only JSON API of grid versions and their diffs: /api/versions, /api/diff?from=&to=[&task=]."""

from __future__ import annotations

from typing import Any

from flask import Flask, abort, jsonify, request

from app.security import busy_response
from app.services import Services
from app.services.diffs import DiffError
from app.services.jobs import JobsBusy as AdmissionRefused


def _version(name: str) -> int:
    raw = request.args.get(name, "").strip().lstrip("vV")
    if not raw.isdigit():
        abort(400, f"{name}: expected a stored grid version number (e.g. {name}=3), not {request.args.get(name)!r}")
    return int(raw)


def register(server: Flask, services: Services) -> None:
    """Add /api/versions and /api/diff over SERVICES to SERVER."""

    @server.get("/api/versions")
    def api_versions() -> Any:
        return jsonify({"versions": services.diffs.versions()})

    @server.get("/api/diff")
    def api_diff() -> Any:
        old, new = _version("from"), _version("to")
        task_raw = request.args.get("task", "").strip()
        if task_raw and not task_raw.isdigit():
            abort(400, f"task: expected a jediTaskID (a non-negative integer), not {task_raw!r}")
        try:
            return jsonify(services.diffs.diff(old, new, int(task_raw) if task_raw else None))
        except DiffError as exc:
            abort(404, str(exc))
        except AdmissionRefused as exc:
            return busy_response(exc)
