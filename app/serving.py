"""The gunicorn worker of the dashboard: requests are read by an event loop, the app runs on a thread pool."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import tornado.httpserver
from gunicorn.workers.gtornado import TornadoWorker
from tornado import httputil
from tornado.ioloop import PeriodicCallback
from tornado.wsgi import WSGIContainer

from app.security import max_body


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        raise SystemExit(f"{name}: expected a number, got {raw!r}") from None
    if not value > 0:
        raise SystemExit(f"{name}: expected a positive number, got {raw!r}")
    return value


# request bodies above this are answered 413 before a byte of the body is read (Dash callbacks included)
MAX_BODY = max_body()
HEADER_TIMEOUT_S = _env_number("BROKERAGE_HEADER_TIMEOUT", 10)  # the request line and headers, all of them
BODY_TIMEOUT_S = _env_number("BROKERAGE_BODY_TIMEOUT", 30)  # the whole body once the headers are in
MAX_HEADER = 64 * 1024


def too_large_response(length: int, limit: int = MAX_BODY) -> bytes:
    """The raw 413 answer to a request announcing LENGTH body bytes (the connection is closed after it).

    Usage: ``stream.write(too_large_response(10**9))``
    """
    body = json.dumps(
        {"error": f"request body of {length} bytes is larger than the limit of {limit} bytes", "status": 413}
    ).encode()
    head = (
        "HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body


class _SizeGate(httputil.HTTPMessageDelegate):
    """Answers 413 and closes when a request announces a body above MAX_BODY; otherwise passes everything on."""

    def __init__(self, inner: httputil.HTTPMessageDelegate, conn: httputil.HTTPConnection) -> None:
        self.inner, self.conn = inner, conn

    def headers_received(
        self, start_line: httputil.RequestStartLine | httputil.ResponseStartLine, headers: httputil.HTTPHeaders
    ) -> Awaitable[None] | None:
        raw = headers.get("Content-Length", "").split(",")[0].strip()
        if raw.isdigit() and len(raw) <= 20 and int(raw) > MAX_BODY:
            stream = self.conn.detach()  # type: ignore[attr-defined]  # stop HTTP processing: the body is never read
            stream.write(too_large_response(int(raw))).add_done_callback(lambda _f: stream.close())
            return None
        return self.inner.headers_received(start_line, headers)

    def data_received(self, chunk: bytes) -> Awaitable[None] | None:
        return self.inner.data_received(chunk)

    def finish(self) -> None:
        self.inner.finish()

    def on_connection_close(self) -> None:
        self.inner.on_connection_close()


def buffered(app: Callable[..., Any], access: Callable[..., None] | None = None) -> Callable[..., list[bytes]]:
    """APP answering with its whole body at once: a streamed answer (Flask's stream_with_context) is read in the
    thread that started it, since its context lives in that thread. ACCESS (gunicorn's ``log.access``) gets one
    line per request, as gunicorn's own workers write it (``--access-logfile``, ``--access-logformat``).

    Usage: ``WSGIContainer(buffered(flask_app, worker.log.access), executor=pool)``
    """

    def run(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        began = time.monotonic()
        seen: dict[str, Any] = {}

        def remember(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            seen.update(status=status, headers=headers)
            return start_response(status, headers, *exc)

        result = app(environ, remember)
        try:
            body = b"".join(result)
        finally:
            if hasattr(result, "close"):
                result.close()
        if access is not None:
            _log_access(access, environ, seen, len(body), time.monotonic() - began)
        return [body]

    return run


def _log_access(
    access: Callable[..., None], environ: dict[str, Any], seen: dict[str, Any], sent: int, seconds: float
) -> None:
    query = environ.get("QUERY_STRING", "")
    environ.setdefault("RAW_URI", environ.get("PATH_INFO", "") + (f"?{query}" if query else ""))
    resp = SimpleNamespace(status=seen.get("status", "500"), headers=seen.get("headers", []), sent=sent)
    req = [(k[5:].replace("_", "-"), v) for k, v in environ.items() if k.startswith("HTTP_")]
    access(resp, req, environ, timedelta(seconds=seconds))


class BufferedWorker(TornadoWorker):
    """A gunicorn worker that reads each request without a thread (with header and body deadlines and a body limit)
    and only then runs the WSGI app on one of ``threads`` threads, so slow or large clients cannot hold them.

    Usage: ``worker_class = "app.serving.BufferedWorker"`` in gunicorn.conf.py
    """

    def run(self) -> None:
        """Serve until gunicorn stops the worker (gunicorn's TornadoWorker, with the app on a thread pool)."""
        from tornado.ioloop import IOLoop

        self.ioloop = IOLoop.current()
        self.alive = True
        self.server_alive = False
        self.callbacks = [PeriodicCallback(self.watchdog, 1000), PeriodicCallback(self.heartbeat, 1000)]
        for callback in self.callbacks:
            callback.start()
        pool = ThreadPoolExecutor(max_workers=max(1, self.cfg.threads), thread_name_prefix="app")
        worker = self

        class _Server(tornado.httpserver.HTTPServer):
            def start_request(self, server_conn: object, request_conn: httputil.HTTPConnection) -> Any:
                return _SizeGate(super().start_request(server_conn, request_conn), request_conn)

            def on_close(self, server_conn: object) -> None:
                worker.handle_request()
                super().on_close(server_conn)

        server = _Server(
            WSGIContainer(buffered(self.wsgi, self.log.access), executor=pool),
            no_keep_alive=self.cfg.keepalive <= 0,
            idle_connection_timeout=HEADER_TIMEOUT_S,  # tornado's header deadline, and the keep-alive idle time
            body_timeout=BODY_TIMEOUT_S,
            max_body_size=MAX_BODY,  # a chunked body without Content-Length is cut off at the limit
            max_buffer_size=MAX_BODY + MAX_HEADER,
            max_header_size=MAX_HEADER,
        )
        self.server = server
        self.server_alive = True
        for s in self.sockets:
            s.setblocking(False)
            server.add_socket(s)
        self.ioloop.start()
        pool.shutdown(wait=False, cancel_futures=True)
