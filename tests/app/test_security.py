"""HTTP hardening (issue #34 items 2, 3, 7, 10): body limit, security headers, bounded ids, forged callback input,
the trusted proxy's forwarded address."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.security import content_security_policy, forwarded_client, max_body, trusted_networks
from tests.app.forged import FORGED, forged_payloads, post


def test_every_answer_carries_the_frame_csp_and_nosniff_headers(app_client: Any) -> None:
    """Pages and API answers say X-Frame-Options DENY, CSP frame-ancestors 'none' (no foreign iframe can hold the
    tuning page with Save) and X-Content-Type-Options nosniff; scripts only from this origin or by hash."""
    for path in ("/", "/tuning?task=1", "/api/overview", "/api/no-such-route"):
        h = app_client.get(path).headers
        assert h["X-Frame-Options"] == "DENY", path
        assert h["X-Content-Type-Options"] == "nosniff", path
        csp = h["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp, path
        script_src = next(p for p in csp.split("; ") if p.startswith("script-src"))
        assert "'unsafe-inline'" not in script_src and "*" not in script_src


def test_the_policy_allows_dash_inline_scripts_by_hash() -> None:
    """Each hash Dash reports for its inline scripts is listed once, quoted, in script-src."""
    csp = content_security_policy(["'sha256-abc='", "sha256-def="])
    assert "script-src 'self' 'unsafe-eval' 'sha256-abc=' 'sha256-def='" in csp


def test_a_callback_body_above_the_limit_is_413(app_client: Any) -> None:
    """A Dash callback POST of more than BROKERAGE_MAX_BODY (8 MiB) is answered 413 without being parsed."""
    body = b'{"output": "x.children", "inputs": [' + b'"a",' * (max_body() // 4) + b'"a"]}'
    resp = app_client.post("/_dash-update-component", data=body, content_type="application/json")
    assert resp.status_code == 413


def test_the_body_limit_setting_is_checked_at_start_up() -> None:
    """BROKERAGE_MAX_BODY must be a whole number of bytes from 1024: anything else stops start-up naming it."""
    assert max_body("") == 8 * 2**20 and max_body("65536") == 65536
    for bad in ("8M", "-1", "10", "9" * 30):
        with pytest.raises(SystemExit, match="BROKERAGE_MAX_BODY"):
            max_body(bad)


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/tasks/" + "9" * 5000 + "/jobs", 400),
        ("/api/tasks/9007199254740992/nucleus", 404),  # 2**53: above the largest task id
        ("/api/tasks/99999999999999999999/history", 400),
        ("/api/simulation/runs/" + "9" * 5000, 404),
        ("/api/simulation/runs/18446744073709551616", 404),
    ],
)
def test_huge_ids_in_paths_are_refused_not_500(app_client: Any, path: str, status: int) -> None:
    """An id beyond 2**53-1 (or 5,000 digits) in a route does not match it: 400 or 404 naming the path, never a 500
    from int() or the database."""
    resp = app_client.get(path)
    assert resp.status_code == status and "error" in resp.get_json()


def test_forged_callback_inputs_never_answer_500(app_client: Any) -> None:
    """Every server-side callback, given inputs no page sends (5,000-digit strings, 10**30, nested lists, lone
    surrogates, wrong types), answers 2xx or 400, never 500."""
    app_client.get("/")
    deps = json.loads(app_client.get("/_dash-dependencies").data)
    payloads = [(out, p) for out, p in forged_payloads(deps) if p["inputs"][0].get("value") in FORGED[:7]]
    failures = [(out, p["inputs"][0]["value"]) for out, p in payloads if post(app_client, p) >= 500]
    assert len(payloads) > 200 and failures == []


def test_the_forwarded_address_is_believed_only_from_a_trusted_proxy() -> None:
    """X-Forwarded-For counts only when the peer is in BROKERAGE_TRUSTED_PROXIES; then the right-most address that
    is not a trusted proxy is the client (what a client writes to the left is ignored)."""
    nets = trusted_networks("10.0.0.5, 192.168.0.0/16")
    assert forwarded_client("203.0.113.9", "1.2.3.4", nets) == "203.0.113.9"  # not a proxy: header ignored
    assert forwarded_client("10.0.0.5", "1.2.3.4, 198.51.100.7", nets) == "198.51.100.7"
    assert forwarded_client("10.0.0.5", "198.51.100.7, 192.168.1.1", nets) == "198.51.100.7"
    assert forwarded_client("10.0.0.5", "not-an-address", nets) == "10.0.0.5"
    assert forwarded_client("10.0.0.5", "1.2.3.4", []) == "10.0.0.5"
    with pytest.raises(SystemExit, match="BROKERAGE_TRUSTED_PROXIES"):
        trusted_networks("10.0.0.5, proxy.example.org")


def test_a_get_never_starts_a_simulation(app_client: Any) -> None:
    """GET /api/simulation?hours=48 (what a cross-origin <img> sends) answers 404 and starts nothing; starting is
    a POST whose X-CSRF-Token header repeats the brokerage_csrf cookie, else 403."""
    from app.main import services
    from app.services.simulations import parse_request

    url = "/api/simulation?hours=48&seed=991"
    got = app_client.get(url)
    assert got.status_code == 404 and "POST" in got.get_json()["error"]
    req, _ = parse_request(services.state.config(), {"hours": "48", "seed": "991"})
    assert services.simulations.poll(services.simulations.job_id(req)).state == "unknown"
    assert app_client.post(url).status_code == 403  # no token
    assert app_client.post(url, headers={"X-CSRF-Token": "forged"}).status_code == 403
    assert app_client.get("/api/simulation/job/5?hours=48&seed=991").status_code == 404


def test_a_refused_long_job_is_429_with_retry_after(app_client: Any) -> None:
    """A long job refused for the client's quota or a full queue answers 429 with Retry-After (not 503)."""
    from app.main import app
    from app.security import busy_response
    from app.services.jobs import JobsBusy

    with app.server.test_request_context("/api/simulation"):
        resp = busy_response(JobsBusy("you already have 3 long jobs", 30))
    assert resp.status_code == 429 and resp.headers["Retry-After"] == "30"


def test_simulation_memory_is_estimated_and_refused_above_the_budget(app_client: Any, monkeypatch: Any) -> None:
    """A run's memory is estimated from the grid before it starts (150 MiB + 210 B per job of job_counts and per
    job two generation cycles of chunk_njobs make each simulated hour); one job-count row of 2x10**7 jobs needs
    about 4.1 GiB and is refused (400) above the 2 GiB budget, naming both; nothing is started."""
    from app.main import services
    from app.services.simulations import RUN_BASE_BYTES, estimated_bytes, memory_budget
    from tests.builders import grid, queue, task

    small = grid([queue("A", "S1")], [task(1, chunk_njobs=10)], job_counts=[
        {"panda_queue": "A", "gshare": "Express", "jobstatus": "running", "njobs": 1000}])  # fmt: skip
    assert estimated_bytes(small, 1.5) == RUN_BASE_BYTES + 210 * (1000 + 10 * 2 * 2)
    assert memory_budget("") == 2 * 2**30 and memory_budget("5000000000") == 5_000_000_000
    snap = services.state.snapshot()
    rows = snap.tables["job_counts"].copy()
    rows.loc[rows.index[0], "njobs"] = 2 * 10**7
    heavy = snap.replace(job_counts=rows)
    assert estimated_bytes(heavy, 1) > 4 * 2**30
    monkeypatch.setattr(services.state, "snapshot", lambda: heavy)
    app_client.get("/api/overview")
    token = app_client.get_cookie("brokerage_csrf").value
    r = app_client.post("/api/simulation?hours=1&seed=5", headers={"X-CSRF-Token": token})
    assert r.status_code == 400
    assert "GiB, more than the 2.0 GiB a run may use (BROKERAGE_SIM_MEMORY)" in r.get_json()["error"]
