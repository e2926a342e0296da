"""JSON API of the DIRAC page: /api/dirac/taskqueues, /api/dirac/match, /api/dirac/ces."""

from __future__ import annotations

from typing import Any

from flask import Flask, jsonify, request

from app.services import Services
from app.viewmodels import dirac as vm


def _overrides() -> dict[str, Any]:
    """The DIRAC_ what-if overrides of the query; one ConfigError naming every refused one (400, app/api.py STATUS)."""
    return vm.query_edits(request.args).checked()


def register(server: Flask, services: Services) -> None:
    """Add the /api/dirac routes to SERVER (DIRAC_ query parameters are what-if gdpconfig overrides)."""

    def meta() -> dict[str, Any]:
        src = services.state.source()
        return {"snapshot": src.snap.key, "origin": src.origin, "config": src.config.fingerprint()}

    @server.get("/api/dirac/taskqueues")
    def api_dirac_taskqueues() -> Any:
        tqs = services.dirac.queues(_overrides())
        rows = [tqs.definition(i) for i in range(len(tqs))]
        return jsonify({**meta(), "buckets": list(tqs.buckets), "taskqueues": rows})

    @server.get("/api/dirac/match")
    def api_dirac_match() -> Any:
        pilot = request.args.get("pilot", "")
        try:
            seed = int(request.args.get("seed", "0"))
        except ValueError:
            return jsonify({"error": "seed: expected an integer", "field": "seed"}), 400
        result = services.dirac.run_match(pilot, _overrides(), seed)  # a bad pilot or edit: 400 naming the field
        return jsonify({**meta(), **result.to_dict()})

    @server.get("/api/dirac/ces")
    def api_dirac_ces() -> Any:
        options = vm.ce_options(services.state.snapshot().tables["dirac_ces"])
        return jsonify({**meta(), "ces": [{"ce": o["label"], "pilot": o["value"]} for o in options]})
