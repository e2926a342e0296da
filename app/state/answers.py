"""Answers worth keeping: tables and API bodies memoised with flask-caching on small keys (what, snapshot key, config
fingerprint, parameters), so a new grid version or a saved config never meets an old answer."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from app.state.source import Source

log = logging.getLogger(__name__)
T = TypeVar("T")


class Answers:
    """Memoised answers of the grid SOURCE() gives: Redis with REDIS_URL (shared by every server process), else a
    bounded SimpleCache per process. Before ``init_app`` (or when the cache fails) every answer is computed.

    Usage: ``answers.get("queue_rows", lambda src: qvm.queue_rows(src.snap))``
    """

    def __init__(self, source: Callable[[], Source]) -> None:
        self.source = source
        self.cache: Any = None

    def init_app(self, server: Any, config: dict[str, Any] | None = None) -> None:
        """Bind the cache to the Flask SERVER (settings from ``cache_config()`` unless CONFIG is given)."""
        from flask_caching import Cache

        from app.state import cache_config

        self.cache = Cache(server, config=config or cache_config())

    def key(self, what: str, *params: Any, src: Source | None = None) -> str:
        """The cache key of WHAT with PARAMS on the snapshot and config of SRC (the current grid when None)."""
        src = src or self.source()
        return "|".join([what, src.snap.key, src.config.fingerprint(), *(str(p) for p in params)])

    def peek(self, key: str) -> Any:
        """The answer kept under KEY, or None (never computes)."""
        if self.cache is None:
            return None
        try:
            return self.cache.get(key)
        except Exception:  # an unreachable Redis costs the cache, never the answer
            log.warning("answer cache unavailable", exc_info=True)
            return None

    def put(self, key: str, value: Any, timeout: int | None = None) -> None:
        """Keep VALUE under KEY (a no-op without a cache)."""
        if self.cache is None:
            return
        try:
            self.cache.set(key, value, timeout=timeout)
        except Exception:
            log.warning("answer cache unavailable", exc_info=True)

    def get(self, what: str, build: Callable[[Source], T], *params: Any) -> T:
        """WHAT for the current grid and PARAMS: the kept answer, or BUILD(source) kept for the next request."""
        src = self.source()
        key = self.key(what, *params, src=src)
        hit = self.peek(key)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        value = build(src)
        self.put(key, value)
        return value

    def clear(self) -> None:
        """Forget every kept answer (tests; a grid version change needs nothing: it changes the keys)."""
        if self.cache is not None:
            self.cache.clear()
