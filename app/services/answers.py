"""Answers worth keeping: tables and API bodies memoised with flask-caching on small keys (what, snapshot key, config
fingerprint, parameters), so a new grid version or a saved config never meets an old answer."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from app.state import AppState, Source, cache_config

log = logging.getLogger(__name__)
T = TypeVar("T")


class Answers:
    """Memoised answers over one AppState: Redis with REDIS_URL (shared by every server process), else a bounded
    SimpleCache per process. Before ``init_app`` (or when the cache fails) every answer is computed.

    Usage: ``answers.get("queues", lambda src: qvm.queue_rows(src.snap))``
    """

    def __init__(self, state: AppState) -> None:
        self.state = state
        self.cache: Any = None

    def init_app(self, server: Any, config: dict[str, Any] | None = None) -> None:
        """Bind the cache to the Flask SERVER (settings from ``cache_config()`` unless CONFIG is given)."""
        from flask_caching import Cache

        self.cache = Cache(server, config=config or cache_config())

    def key(self, what: str, src: Source, *params: Any) -> str:
        """The cache key of WHAT on SRC's snapshot and config with PARAMS."""
        return "|".join([what, src.snap.key, src.config.fingerprint(), *(repr(p) for p in params)])

    def get(self, what: str, build: Callable[[Source], T], *params: Any, timeout: int | None = None) -> T:
        """WHAT for the current grid and PARAMS: the kept answer, or BUILD(source) kept for the next request."""
        src = self.state.source()
        if self.cache is None:
            return build(src)
        key = self.key(what, src, *params)
        try:
            hit = self.cache.get(key)
        except Exception:  # an unreachable Redis costs the cache, never the answer
            log.warning("answer cache unavailable", exc_info=True)
            return build(src)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        value = build(src)
        try:
            self.cache.set(key, value, timeout=timeout)
        except Exception:
            log.warning("answer cache unavailable", exc_info=True)
        return value

    def clear(self) -> None:
        """Forget every kept answer (tests; a grid version change needs nothing: it changes the keys)."""
        if self.cache is not None:
            self.cache.clear()
