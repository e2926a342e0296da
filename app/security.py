"""HTTP hardening of the one Flask server: body limit, security headers and the trusted proxy's forwarded address."""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import secrets
import sys
from collections.abc import Callable, Iterable
from typing import Any

from dash.exceptions import DashException
from flask import Flask, Response, abort, current_app, jsonify, request
from werkzeug.exceptions import InternalServerError
from werkzeug.routing import IntegerConverter

from app.services.admission import JobsBusy
from brokerage.model.tables import BIG_MAX

# request bodies above this many bytes are answered 413 (Dash callbacks included); app/serving.py refuses them
# before reading them, Flask for the development server and chunked bodies
MAX_BODY_ENV = "BROKERAGE_MAX_BODY"
# addresses or networks of reverse proxies whose X-Forwarded-For is believed (comma-separated, e.g. 10.0.0.5,::1)
TRUSTED_PROXIES_ENV = "BROKERAGE_TRUSTED_PROXIES"
DEFAULT_MAX_BODY = 8 * 2**20

log = logging.getLogger("brokerage.requests")


def max_body(env: str | None = None) -> int:
    """The request-body limit in bytes from BROKERAGE_MAX_BODY (default 8 MiB); a bad value stops start-up.

    Usage: ``server.config["MAX_CONTENT_LENGTH"] = max_body()``
    """
    raw = (os.environ.get(MAX_BODY_ENV, "") if env is None else env).strip()
    if not raw:
        return DEFAULT_MAX_BODY
    if not raw.isdigit() or len(raw) > 12 or int(raw) < 1024:
        raise SystemExit(f"{MAX_BODY_ENV}: expected a number of bytes from 1024 to 10**12, got {raw!r}")
    return int(raw)


def content_security_policy(script_hashes: Iterable[str]) -> str:
    """The CSP of every answer: scripts and connections from this origin only (Dash's inline scripts by hash),
    never framed by another site.

    Usage: ``content_security_policy(app.csp_hashes())``
    """
    # plotly.js's standard bundle compiles functions at run time when it redraws a graph (a resized window):
    # without 'unsafe-eval' the graphs keep the width they were first drawn at (tests/browser/test_levers.py)
    scripts = " ".join(["'self'", "'unsafe-eval'", *(h if h.startswith("'") else f"'{h}'" for h in script_hashes)])
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src {scripts}",
            "style-src 'self' 'unsafe-inline'",  # React and the grid set inline styles
            "img-src 'self' data: blob:",
            "font-src 'self' data:",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


def add_headers(server: Flask, script_hashes: Callable[[], Iterable[str]]) -> None:
    """Send X-Frame-Options, a Content-Security-Policy and nosniff with every answer of SERVER.

    SCRIPT_HASHES is called once, on the first answer (Dash knows its inline scripts once every callback exists).
    Usage: ``add_headers(app.server, app.csp_hashes)``
    """
    policy: list[str] = []

    @server.after_request
    def _headers(resp: Response) -> Response:
        if not policy:
            policy.append(content_security_policy(script_hashes()))
        resp.headers.setdefault("Content-Security-Policy", policy[0])
        resp.headers["X-Frame-Options"] = "DENY"
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers.setdefault("Referrer-Policy", "same-origin")
        return resp


def trusted_networks(env: str | None = None) -> list[Any]:
    """The networks of BROKERAGE_TRUSTED_PROXIES; a malformed entry stops start-up with its name.

    Usage: ``trusted_networks("10.0.0.5, 192.168.0.0/16")``
    """
    raw = os.environ.get(TRUSTED_PROXIES_ENV, "") if env is None else env
    nets = []
    for item in filter(None, (x.strip() for x in raw.split(","))):
        try:
            nets.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise SystemExit(f"{TRUSTED_PROXIES_ENV}: {item!r} is not an IP address or network") from None
    return nets


def _in(addr: str, nets: list[Any]) -> bool:
    try:
        ip = ipaddress.ip_address(addr.strip().strip("[]"))
    except ValueError:
        return False
    return any(ip in n for n in nets)


def forwarded_client(remote: str, forwarded_for: str, nets: list[Any]) -> str:
    """The client's address: REMOTE itself unless it is a trusted proxy; then the right-most address of
    X-Forwarded-For that is not a trusted proxy (the left part is whatever the client claimed).

    Usage: ``forwarded_client("10.0.0.5", "203.0.113.9", trusted_networks("10.0.0.5")) == "203.0.113.9"``
    """
    if not nets or not _in(remote, nets):
        return remote
    hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
    for hop in reversed(hops):
        if not _in(hop, nets):
            try:
                return str(ipaddress.ip_address(hop.strip("[]")))
            except ValueError:
                return remote  # a forged, malformed entry: the proxy's own address, never the text
    return remote


class ForwardedFor:
    """WSGI middleware setting REMOTE_ADDR from X-Forwarded-For when the peer is a trusted proxy.

    Usage: ``server.wsgi_app = ForwardedFor(server.wsgi_app, trusted_networks())``
    """

    def __init__(self, app: Callable[..., Any], nets: list[Any]) -> None:
        self.app, self.nets = app, nets

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        remote = environ.get("REMOTE_ADDR", "")
        environ["REMOTE_ADDR"] = forwarded_client(remote, environ.get("HTTP_X_FORWARDED_FOR", ""), self.nets)
        return self.app(environ, start_response)


class BoundedInt(IntegerConverter):
    """``<int:...>`` in a route: 0..2**53-1 written in at most 16 digits; anything longer does not match the route
    (a 5,000-digit id is a 400 or 404 naming the path, never a 500 from int())."""

    regex = r"\d{1,16}"

    def __init__(self, url_map: Any, **kw: Any) -> None:
        super().__init__(url_map, **{"max": BIG_MAX, **kw})


# what a callback raises when its input is not what its page sends (a forged or stale request): answered 400
FORGED_INPUT = (
    ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, RecursionError, DashException,
)  # fmt: skip


def _callback_error(exc: Exception) -> Any:
    if request.path.endswith("/_dash-update-component"):
        log.warning("callback refused its input (%s: %s)", type(exc).__name__, str(exc)[:200])
        return jsonify({"error": "the callback's input is not one its page sends", "status": 400}), 400
    current_app.log_exception(sys.exc_info())  # not a callback: a fault of ours, answered as Flask does
    return InternalServerError(original_exception=exc)


CSRF_COOKIE = "brokerage_csrf"  # set on every answer that finds none; its value goes back in the header below
CSRF_HEADER = "X-CSRF-Token"


def _csrf_cookie(resp: Response) -> Response:
    if not request.cookies.get(CSRF_COOKIE):
        resp.set_cookie(CSRF_COOKIE, secrets.token_urlsafe(32), samesite="Strict", secure=request.is_secure, path="/")
    return resp


def require_csrf() -> None:
    """Inside a request that starts work: abort 403 unless the X-CSRF-Token header repeats the brokerage_csrf
    cookie (another site can make a browser send the cookie, never read it or set the header).

    Usage: ``require_csrf()`` first in a POST route
    """
    cookie, given = request.cookies.get(CSRF_COOKIE, ""), request.headers.get(CSRF_HEADER, "")
    if not cookie or not hmac.compare_digest(cookie.encode(), given.encode()):
        abort(
            403,
            f"starting work needs the {CSRF_HEADER} header set to the value of the {CSRF_COOKIE} cookie "
            "(any page or API answer of this server sets it)",
        )


def busy_response(exc: JobsBusy) -> Any:
    """A refused long job as 429 Too Many Requests with Retry-After.

    Usage: ``except JobsBusy as exc: return busy_response(exc)``
    """
    resp = jsonify({"error": str(exc), "status": 429})
    resp.status_code = 429
    resp.headers["Retry-After"] = str(exc.retry_after_s)
    return resp


def harden(server: Flask, script_hashes: Callable[[], Iterable[str]]) -> None:
    """Body limit, security headers, bounded integer routes, 400 for forged callback input and the trusted
    proxies' forwarded address on SERVER (before any route is added).

    Usage: ``harden(app.server, app.csp_hashes)``
    """
    server.config["MAX_CONTENT_LENGTH"] = max_body()
    server.url_map.converters["int"] = BoundedInt
    for kind in FORGED_INPUT:
        server.register_error_handler(kind, _callback_error)
    add_headers(server, script_hashes)
    server.after_request(_csrf_cookie)
    server.register_error_handler(JobsBusy, busy_response)
    nets = trusted_networks()
    if nets:
        server.wsgi_app = ForwardedFor(server.wsgi_app, nets)  # type: ignore[method-assign]
