"""Read-only JSON API on the Flask server: every view's data at /api/..."""

from __future__ import annotations

from typing import Any

from flask import Flask, abort, jsonify, request

from app.services import Services
from brokerage.model.errors import (
    BrokerageError,
    Cancelled,
    ClusterLost,
    ConfigError,
    ConflictError,
    InputError,
    SimulationError,
    StoreError,
    UnknownIdError,
    status_of,
)
from brokerage.model.versions import stamp

# the HTTP status of each error of the core's tree (brokerage/model/errors.py), nearest class first
STATUS: dict[type[BaseException], int] = {
    UnknownIdError: 404,  # an unknown task, queue, nucleus, ...
    InputError: 400,  # a malformed request, snapshot, pilot, ...
    ConfigError: 400,  # a gdpconfig key or value refused (every problem listed)
    SimulationError: 400,  # a simulation refused: a command its task's status does not allow, ...
    ConflictError: 409,  # someone saved first
    Cancelled: 409,
    StoreError: 503,  # the database is missing, replaced, busy or failing
    ClusterLost: 503,  # the Dask cluster lost its workers twice during one run
    BrokerageError: 400,
}


def error_body(exc: BrokerageError) -> dict[str, Any]:
    """The JSON an API answers for EXC: its one line, the field it names, and every problem when there are several.

    Usage: ``error_body(ConfigError("NW_THRESHOLD", "a value is required"))["field"] == "NW_THRESHOLD"``
    """
    body: dict[str, Any] = {"error": exc.line()}
    field = getattr(exc, "key", None) or getattr(exc, "field", None)
    if isinstance(field, str):
        body["field"] = field
    problems = getattr(exc, "problems", None)
    if problems is not None and len(problems) > 1:
        body["problems"] = problems
    return body


def register(server: Flask, services: Services) -> None:
    """Add the /api routes over SERVICES to SERVER."""
    from app.viewmodels import network as nvm
    from app.viewmodels import nuclei as nuvm
    from app.viewmodels import overview as ovm
    from app.viewmodels import queues as qvm
    from app.viewmodels import stabilizer as svm
    from app.viewmodels import tasks as tvm
    from app.viewmodels.common import records

    state = services.state

    def meta() -> dict[str, Any]:
        src = state.source()
        return {
            "snapshot": src.snap.key,
            "taken_at": src.snap.taken_at.isoformat(),
            "origin": src.origin,
            "config": src.config.fingerprint(),
            **stamp(src.snap, src.config),
        }

    @server.get("/api/overview")
    def api_overview() -> Any:
        return jsonify(
            {
                **meta(),
                "counts": ovm.counts(state.snapshot()),
                "skip_census": ovm.census_from_run(services.whatif.base_run()),
            }
        )

    @server.get("/api/pending")
    def api_pending() -> Any:
        from app.viewmodels import pending as pvm

        def decide(key: tuple[str, int]) -> Any:
            return state.nucleus_decision(key[1]) if key[0] == "task" else state.job_decision(key[1])

        criteria = (request.args.get("criteria") or "").strip() or None
        rows = pvm.pending_rows(state.snapshot(), services.whatif.base_run(), decide, criteria)
        return jsonify({**meta(), "criteria": criteria, "counts": pvm.kind_counts(rows), "pending": rows})

    @server.get("/api/queues")
    def api_queues() -> Any:
        return jsonify({**meta(), "queues": qvm.queue_rows(state.snapshot())})

    @server.before_request
    def page_as_json() -> Any:
        """A page asked with ?json answers its /api/… JSON (a redirect), never the page's HTML."""
        from flask import redirect

        from app.viewmodels.apilink import api_url

        if "json" not in request.args or request.path.startswith(("/api/", "/_dash", "/assets/", "/reports/")):
            return None
        query = {k: v for k, v in request.args.to_dict().items() if k != "json"}
        url = api_url(request.path, query)
        if url is None:
            return jsonify(
                {"error": f"{request.path} has no JSON answer; the /api/… routes are listed in README.md"}
            ), 404
        return redirect(url, code=302)

    def whatif() -> dict[str, Any]:
        """The gdpconfig edits of the query string (KEY=VALUE, as the tuning page's permalinks carry them); a
        refused key answers 400 naming it and what is allowed."""
        from app.viewmodels.tuning import edits_from_query

        raw = {k: v for k, v in edits_from_query(request.args.to_dict()).items() if k != "json"}
        if not raw:
            return {}
        edits = services.whatif.edits(raw)
        if edits.refused:
            raise next(iter(edits.refused.values()))
        return dict(edits.overrides)

    def decision_body(decision: Any, overrides: dict[str, Any]) -> dict[str, Any]:
        src = state.source()
        versions = stamp(src.snap, src.config.with_overrides(overrides)) if overrides else {}
        return {**meta(), **decision.to_dict(), **versions, "whatif": overrides}

    @server.get("/api/tasks/<int:task_id>/jobs")
    def api_task_jobs(task_id: int) -> Any:
        overrides = whatif()  # ?KEY=VALUE: the brokerage under that what-if, as /tuning?task=ID&KEY=VALUE shows it
        return jsonify(decision_body(state.job_decision(task_id, overrides or None), overrides))  # unknown id: 404

    @server.get("/api/tasks/<int:task_id>/nucleus")
    def api_task_nucleus(task_id: int) -> Any:
        overrides = whatif()
        return jsonify(decision_body(state.nucleus_decision(task_id, overrides or None), overrides))

    @server.get("/api/nuclei")
    def api_nuclei() -> Any:
        return jsonify({**meta(), "nuclei": nuvm.nucleus_rows(state.grid_cache(), state.config())})

    @server.get("/api/network")
    def api_network() -> Any:
        metric = request.args.get("metric", "weight")
        if metric not in nvm.METRICS:
            abort(400, f"metric must be one of {', '.join(nvm.METRICS)}")
        return jsonify({**meta(), **nvm.matrix(state.grid_cache(), state.config(), metric)})

    @server.get("/api/stabilizer")
    def api_stabilizer() -> Any:
        df = state.stabilizer_frame()
        return jsonify({**meta(), "rows": svm.rows(df, request.args.get("user"), request.args.get("queue"))})

    @server.get("/api/task-states")
    def api_task_states() -> Any:
        snap = state.snapshot()
        window = request.args.get("window", "all")
        if window not in tvm.WINDOWS:
            abort(400, f"window must be one of {', '.join(tvm.WINDOWS)}")
        tr = tvm.transitions(snap.task_status_log, snap.taken_at, window)
        tis = tvm.time_in_state(tvm.durations(snap.task_status_log, snap.taken_at))
        return jsonify(
            {
                **meta(),
                "window": window,
                "status_counts": tvm.status_counts(snap.tasks),
                "transitions": records(tr),
                "time_in_state": records(tis),
            }
        )

    @server.get("/api/tasks/<int:task_id>/history")
    def api_task_history(task_id: int) -> Any:
        snap = state.snapshot()
        return jsonify(
            {**meta(), "task": task_id, "history": tvm.history(snap.task_status_log, snap.taken_at, task_id)}
        )

    @server.get("/api/tasks/<path:rest>")
    def api_task_bad_id(rest: str) -> Any:
        # reached only when <int:task_id> did not match: the id is malformed (or the sub-path unknown)
        head, _, tail = rest.partition("/")
        if tail in ("jobs", "nucleus", "history"):
            abort(400, f"task id must be a non-negative integer, not {head!r}")
        abort(404, f"no API route /api/tasks/{rest}")

    @server.route("/api/<path:rest>", methods=["GET", "POST", "PUT", "DELETE", "PATCH"])
    def api_unknown(rest: str) -> Any:
        # without this, Dash's catch-all page route answers unknown API paths with the HTML page and 200
        abort(404, f"no API route /api/{rest}")

    for code in (400, 404, 501):

        @server.errorhandler(code)
        def api_error(exc: Any) -> Any:
            if request.path.startswith("/api/"):
                return jsonify({"error": getattr(exc, "description", str(exc))}), getattr(exc, "code", 500)
            return exc

    @server.errorhandler(BrokerageError)
    def api_core_error(exc: BrokerageError) -> Any:
        # the core's errors are said with the status of their class (STATUS); elsewhere they stay unhandled errors
        if not request.path.startswith("/api/"):
            raise exc
        return jsonify(error_body(exc)), status_of(exc, STATUS, 400)

    @server.errorhandler(500)
    def api_internal_error(exc: Any) -> Any:
        # API clients get JSON, never the HTML error page (and never a traceback)
        if request.path.startswith("/api/"):
            return jsonify({"error": "internal error: the request could not be answered"}), 500
        return exc
