"""Pause Python's cyclic garbage collector while a batch of brokerages runs (reference counting still frees memory)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager


class CollectorPause:
    """Counts the batches running in this process; the collector is off while any runs (it is process-wide)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._was_enabled = False

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The collector off for the block; back to how it was when the last overlapping block ends."""
        with self._lock:
            if self._depth == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._was_enabled:
                    gc.enable()


_PAUSE = CollectorPause()


def gc_paused() -> AbstractContextManager[None]:
    """Run a block (or, as a decorator, a function) with the cyclic collector off; nested and concurrent uses turn
    it back on when the last one ends.

    A batch keeps thousands of decisions alive, and every young-generation collection walks them again: on the
    2,000-task re-rank that was about a fifth of the time. Brokerage builds no reference cycles it relies on the
    collector for; any cycle made meanwhile is collected once the collector is back on.

    Usage: ``with gc_paused(): decisions = [broker(snap, t, config) for t in ids]``
    """
    return _PAUSE.paused()
