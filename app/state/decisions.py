"""Bounded cache of brokerage decisions keyed on (snapshot key, config fingerprint, broker, task)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from app.state.lru import Lru
from brokerage.model.explain import Decision

DECISION_CACHE_SIZE = 1024  # decisions kept per process (a few MB)
DERIVED_CACHE_SIZE = 16  # whole-grid tables (e.g. the Stabilizer) per (snapshot, config)

DecisionKey = tuple[str, str, str, int]


class DecisionCache:
    """Decisions kept in process memory, least recently used dropped first.

    Their explanations hold lazily built sentences, which do not pickle, and a decision is rebuilt in a few
    milliseconds, cheaper than a round trip to a shared cache. The key holds the snapshot key (id and version)
    and the config fingerprint, so a new snapshot or a saved config never meets an old decision.
    Usage: ``cache.get((snap.key, cfg.fingerprint(), "jobs", 4242), lambda: run_job_brokerage(snap, 4242, cfg))``
    """

    def __init__(self, size: int = DECISION_CACHE_SIZE, derived_size: int = DERIVED_CACHE_SIZE) -> None:
        self._decisions: Lru[Decision] = Lru(size)
        self._derived: Lru[Any] = Lru(derived_size)

    def get(self, key: DecisionKey, build: Callable[[], Decision]) -> Decision:
        """The decision under KEY, brokered by BUILD() on a miss."""
        return self._decisions.get(key, build)

    def derived(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """A whole-grid table under KEY (which must hold the snapshot key and config fingerprint)."""
        return self._derived.get(key, build)

    def clear(self) -> None:
        """Forget every decision and table."""
        self._decisions.clear()
        self._derived.clear()

    def sizes(self) -> dict[str, int]:
        """Entries held, for monitoring."""
        return {"decisions": len(self._decisions), "derived": len(self._derived)}
