"""A small bounded, thread-safe least-recently-used map."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")
_MISSING = object()


class Lru(Generic[T]):
    """At most CAPACITY entries; the least recently used one is dropped first.

    Usage: ``lru = Lru(1024); value = lru.get(key, lambda: build())``
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, int(capacity))
        self._data: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """The value under KEY, built by BUILD() on a miss (outside the lock: a build may use this map)."""
        with self._lock:
            value: Any = self._data.get(key, _MISSING)
            if value is not _MISSING:
                self._data.move_to_end(key)
                return value
        value = build()
        self.put(key, value)
        return value

    def peek(self, key: Hashable) -> T | None:
        """The value under KEY, or None; never builds."""
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Hashable, value: T) -> None:
        """Store VALUE under KEY, dropping the least recently used entries beyond the capacity."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)

    def discard(self, key: Hashable) -> None:
        """Forget the entry under KEY, if any."""
        with self._lock:
            self._data.pop(key, None)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)
