"""JSON API of simulations: POST /api/simulation?hours=H&seed=N&compare=1&KEY=VALUE (with the CSRF token) starts or
joins the run, GET polls it; /api/simulation/job/<PandaID> the same for a run replayed until that job is final (its
steps and causes); /api/simulation/runs lists the runs stored in the database and /api/simulation/runs/<id> one."""

from __future__ import annotations

from typing import Any

from flask import Flask, abort, jsonify, request

from app.security import CSRF_HEADER, busy_response, require_csrf
from app.services import Services
from app.services.jobs import JobsBusy
from app.services.roles import client_address
from app.services.simulations import SimulationRequestError, parse_request


def register(server: Flask, services: Services) -> None:
    """Add /api/simulation over SERVICES to SERVER."""

    def _request() -> Any:
        try:
            req, refused = parse_request(services.state.config(), request.args.to_dict())
        except SimulationRequestError as exc:
            abort(400, str(exc))
        if refused:
            abort(400, "; ".join(refused[k] for k in sorted(refused)))
        return req

    def _polled(job_id: str) -> Any:
        state = services.simulations.poll(job_id)
        if state.state == "unknown":
            abort(404, f"this simulation was not started: POST the same URL with the {CSRF_HEADER} header to start it")
        return _job_body(job_id, state)

    @server.post("/api/simulation")
    def api_simulation_start() -> Any:
        """Start (or join) the run: a POST with the page's CSRF token, never a GET (a link or image cannot)."""
        require_csrf()
        req = _request()
        try:
            job_id, state = services.simulations.start(req, client_address())
        except SimulationRequestError as exc:
            abort(400, str(exc))
        except JobsBusy as exc:
            return busy_response(exc)
        return _job_body(job_id, state)

    @server.get("/api/simulation")
    def api_simulation() -> Any:
        """Poll the run of the same query (404 until a POST started it)."""
        return _polled(services.simulations.job_id(_request()))

    @server.post("/api/simulation/job/<int:panda_id>")
    def api_simulation_job_start(panda_id: int) -> Any:
        """One job's simulated history: the run of ?hours&seed&KEY=VALUE&cmd= replayed until the job is final."""
        require_csrf()
        req = _request()
        try:
            job_id, state = services.simulations.start_history(req, panda_id, client_address())
        except SimulationRequestError as exc:
            abort(400, str(exc))
        except JobsBusy as exc:
            return busy_response(exc)
        return _job_body(job_id, state)

    @server.get("/api/simulation/job/<int:panda_id>")
    def api_simulation_job(panda_id: int) -> Any:
        """Poll a job's replay (404 until a POST started it)."""
        return _polled(services.simulations.history_job_id(_request(), panda_id))

    @server.get("/api/simulation/runs")
    def api_simulation_runs() -> Any:
        from brokerage.store.sim_runs import list_runs

        engine = services.state.engine()
        if engine is None:
            return jsonify({"runs": [], "note": "the grid does not come from a database: runs are not stored"})
        raw = request.args.get("limit", "50")
        if not raw.isdigit() or not 1 <= int(raw) <= 1000:
            abort(400, f"limit: {raw!r} is not allowed; expected an integer from 1 to 1000")
        return jsonify({"runs": [r.to_dict() for r in list_runs(engine, int(raw))]})

    @server.get("/api/simulation/runs/<int:run_id>")
    def api_simulation_run(run_id: int) -> Any:
        from brokerage.store.errors import StoreError
        from brokerage.store.sim_runs import load_run

        engine = services.state.engine()
        if engine is None:
            abort(404, "the grid does not come from a database: runs are not stored")
        try:
            info, result = load_run(engine, run_id)
        except StoreError as exc:
            abort(404, str(exc))
        return jsonify({"run": info.to_dict(), "result": result})


def _job_body(job_id: str, state: Any) -> Any:
    """The JSON answer for a background job: 202 while it runs, 200 with its result, its error when it failed."""
    body: dict[str, Any] = {"job": job_id, "state": state.state, "percent": state.percent, "label": state.label}
    if state.state == "done":
        body["result"] = state.result
    elif state.state == "failed":
        body["error"] = state.error
    return jsonify(body), 200 if state.finished else 202
