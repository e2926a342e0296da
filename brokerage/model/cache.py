"""Derived data of one snapshot (numpy views, indices, memoised verdicts), held by the caller and bounded."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from brokerage.model.snapshot import GridSnapshot

T = TypeVar("T")
_MISSING = object()

STRUCTURES = 20_000  # derived structures kept (a few per snapshot, one or two per task brokered)
MEMO_ENTRIES = 8192  # memoised verdicts and shared values kept ...
MEMO_CELLS = 16_000_000  # ... or fewer on big grids: entries x candidates (most hold a few arrays over queues)


class _Bounded:
    """A dict bounded to CAPACITY entries that drops the oldest one; safe across threads.

    A hit is one dict lookup (no lock, no reordering): brokers look up tens of verdicts per task.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, capacity)
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[..., T], *args: Any) -> T:
        value = self._data.get(key, _MISSING)
        if value is not _MISSING:
            return value
        value = build(*args)  # outside the lock: a build may itself use the cache
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class GridCache:
    """What brokers derive from one snapshot, kept between calls by whoever holds this object.

    ``get`` keeps named structures (the queue arrays, replica indices, a task's input at every queue);
    ``memo`` keeps verdicts and values under keys derived from what they declare they read (see
    ``brokerage.framework.Reads``). Both are bounded. ``memoise=False`` turns verdict sharing off (every call
    computes afresh), which must not change any decision.
    Usage: ``cache = GridCache(snap); production.broker(snap, 4242, config, cache=cache)``
    """

    def __init__(self, snap: GridSnapshot, *, memoise: bool = True) -> None:
        self.snap = snap
        self.memoise = memoise
        self._structures = _Bounded(STRUCTURES)
        n = max(len(snap.tables["queues"]), 1)
        self._memo = _Bounded(max(64, min(MEMO_ENTRIES, MEMO_CELLS // n)))

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """BUILD() once per KEY for this snapshot (a structure that depends on the snapshot alone, or on KEY).

        Usage: ``qa = cache.get("queue_arrays", lambda: build(cache))``
        """
        return self._structures.get(key, build)

    def memo(self, key: Hashable, build: Callable[..., T], *args: Any) -> T:
        """BUILD(*ARGS) shared by every call with the same KEY (computed afresh when memoising is off)."""
        if not self.memoise:
            return build(*args)
        return self._memo.get(key, build, *args)

    def peek(self, key: Hashable) -> Any:
        """The structure kept under KEY, or None when none is (nothing is built).

        Usage: ``records = cache.peek("task_records")``
        """
        value = self._structures._data.get(key, _MISSING)
        return None if value is _MISSING else value

    def put(self, key: Hashable, value: Any) -> None:
        """Keep VALUE under KEY, as a build by ``get`` would (a structure carried over from another cache).

        Usage: ``cache.put("task_records", records)``
        """
        self._structures.get(key, lambda: value)

    def sizes(self) -> dict[str, int]:
        """Entries held, for monitoring: ``{"structures": n, "memo": m}``."""
        return {"structures": len(self._structures), "memo": len(self._memo)}


def cache_for(snap: GridSnapshot, cache: GridCache | None) -> GridCache:
    """CACHE, or a new one for SNAP when the caller holds none; a cache of another snapshot is an error.

    Usage: ``cache = cache_for(snap, cache)``
    """
    if cache is None:
        return GridCache(snap)
    if cache.snap is not snap:
        raise ValueError(f"the cache belongs to snapshot {cache.snap.key}, not to {snap.key}")
    return cache


# Structures built from one snapshot table alone (grid.task_row's records, checks.software's index): a snapshot
# that holds the very same table object can take them over instead of building them again.
SINGLE_TABLE_STRUCTURES = {"task_records": "tasks", "software_index": "queue_software"}


def derived_cache(base: GridCache, snap: GridSnapshot) -> GridCache:
    """A GridCache for SNAP, a copy of BASE's snapshot with some tables replaced, that starts with BASE's
    structures of the tables SNAP still shares (the same DataFrame objects); everything else is built afresh.

    Usage: ``cache2 = derived_cache(cache, snap.replace(queues=edited))``
    """
    new = GridCache(snap, memoise=base.memoise)
    for key, table in SINGLE_TABLE_STRUCTURES.items():
        if snap.tables[table] is base.snap.tables[table]:
            value = base._structures._data.get(key, _MISSING)
            if value is not _MISSING:
                new._structures._data[key] = value
    return new
