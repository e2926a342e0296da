"""JSON API of simulations: /api/simulation?hours=H&seed=N&compare=1&KEY=VALUE starts or joins the run, then polls it."""

from __future__ import annotations

from typing import Any

from flask import Flask, abort, jsonify, request

from app.services import Services
from app.services.jobs import JobsBusy
from app.services.roles import client_address
from app.services.simulations import SimulationRequestError, parse_request


def register(server: Flask, services: Services) -> None:
    """Add /api/simulation over SERVICES to SERVER."""

    @server.get("/api/simulation")
    def api_simulation() -> Any:
        try:
            req, refused = parse_request(services.state.config(), request.args.to_dict())
        except SimulationRequestError as exc:
            abort(400, str(exc))
        if refused:
            abort(400, "; ".join(refused[k] for k in sorted(refused)))
        try:
            job_id, state = services.simulations.start(req, client_address())
        except JobsBusy as exc:
            return jsonify({"error": str(exc)}), 503
        body: dict[str, Any] = {"job": job_id, "state": state.state, "percent": state.percent, "label": state.label}
        if state.state == "done":
            body["result"] = state.result
        elif state.state == "failed":
            body["error"] = state.error
        return jsonify(body), 200 if state.finished else 202
