"""A function applied to chunks of work items over one snapshot, on the cluster or in-process below a threshold."""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError
from types import SimpleNamespace
from typing import Any, TypeVar

from distributed import Client, Future, as_completed
from distributed.comm.core import CommClosedError
from distributed.scheduler import KilledWorker

from brokerage.model.cache import GridCache, cache_for
from brokerage.model.errors import Cancelled, ClusterLost
from brokerage.model.gcpause import gc_paused
from brokerage.model.snapshot import GridSnapshot
from brokerage.runs import engine

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")
ChunkFn = Callable[[GridSnapshot, GridCache, Any, Sequence[Any]], R]  # (snap, cache, payload, items) -> result
Progress = Callable[[int, int], None]
Cancel = Callable[[], bool]

MIN_CLUSTER_TASKS = 200  # work items below which shipping them to the cluster costs more than it saves
CHUNKS_PER_WORKER = 8  # several chunks per worker keep the progress bar moving and the workers evenly loaded
MIN_CHUNK = 16  # items per chunk at least: each chunk costs the scheduler a round trip
MAX_CHUNK = 400  # items per chunk at most (a fraction of a second of brokerage): on a big run the last chunks
# are short, so no worker idles long while another finishes
WORKER_WAIT_S = 30  # how long a run waits for a worker on a cluster that has none
SNAPSHOTS_KEPT = 2  # snapshot versions kept published on the cluster (the current one and the one before)
_PREFIX = "brokerage-snapshot:"


# what a run meets when the workers holding its snapshot or chunks die: retried once, with the grid sent again
_LOST = (KilledWorker, CancelledError, CommClosedError, OSError, TimeoutError)


# ---------------------------------------------------------------- worker side

_worker_caches: OrderedDict[str, GridCache] = OrderedDict()  # per worker process: one GridCache per snapshot
_locks = SimpleNamespace(worker=threading.Lock(), publish=threading.Lock())  # replaced in a forked child


def worker_cache(snap: GridSnapshot) -> GridCache:
    """This process's GridCache of SNAP, kept across chunks (the SNAPSHOTS_KEPT most recent snapshots).

    Usage: ``cache = worker_cache(snap)``
    """
    with _locks.worker:
        cache = _worker_caches.get(snap.key)
        if cache is None or cache.snap is not snap:
            cache = _worker_caches[snap.key] = GridCache(snap)
        _worker_caches.move_to_end(snap.key)
        while len(_worker_caches) > SNAPSHOTS_KEPT:
            _worker_caches.popitem(last=False)
        return cache


class Batch:
    """A chunk's items in one opaque object: Dask does not walk it looking for tasks (it walks lists and tuples)."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[Any]) -> None:
        self.items = items

    def __reduce__(self) -> tuple[Any, ...]:
        return (Batch, (self.items,))


@gc_paused()
def run_chunk(fn: ChunkFn[R], snap: GridSnapshot, payload: Any, items: Sequence[Any] | Batch) -> R:
    """Worker side of a chunk: FN over ITEMS with the worker's GridCache of SNAP (the scattered snapshot).

    Usage: ``client.submit(run_chunk, fn, snap_future, payload, Batch(items))``
    """
    return fn(snap, worker_cache(snap), payload, items.items if isinstance(items, Batch) else items)


# ---------------------------------------------------------------- client side

_published: dict[tuple[int, str], tuple[GridSnapshot, Future]] = {}  # (id(client), name) -> the snapshot's future


def _new_locks_in_child() -> None:
    # another thread may have held a lock at the fork (a Dash background job is a forked child)
    _locks.publish, _locks.worker = threading.Lock(), threading.Lock()


os.register_at_fork(after_in_child=_new_locks_in_child)


def _name(snap: GridSnapshot) -> str:
    # the key is id@version; the table sizes tell apart two different grids that were given the same id
    sizes = "-".join(str(len(t)) for t in snap.tables.values())
    return f"{_PREFIX}{snap.key}:{sizes}"


def snapshot_future(client: Client, snap: GridSnapshot) -> Future:
    """SNAP on every worker of CLIENT's cluster, sent once per snapshot version and shared by every client.

    The snapshot is broadcast to the workers and published under its key, so another process's client (a
    background job, a second server worker) finds it there instead of sending it again. Older versions are
    unpublished (at most SNAPSHOTS_KEPT stay).
    Usage: ``fut = snapshot_future(get_client(), snap)``
    """
    name = _name(snap)
    with _locks.publish:
        held = _published.get((id(client), name))
        if held is not None and _alive(client, held[1]):
            return held[1]
        try:
            fut = client.get_dataset(name)
            if not _alive(client, fut):  # its workers died: the copy is gone, send the grid again
                client.unpublish_dataset(name)
                raise KeyError(name)
        except KeyError:
            fut = client.scatter(snap, broadcast=True, hash=False)
            try:
                client.publish_dataset(fut, name=name)
            except KeyError:  # another process published it meanwhile: use theirs
                fut = client.get_dataset(name)
            ours = [d for d in client.list_datasets() if str(d).startswith(_PREFIX) and d != name]
            for old in ours[: max(0, len(ours) - (SNAPSHOTS_KEPT - 1))]:
                client.unpublish_dataset(old)
        for key in [k for k in _published if k[0] == id(client) and k[1] != name]:
            del _published[key]
        _published[(id(client), name)] = (snap, fut)
        return fut


def _alive(client: Client, fut: Future) -> bool:
    """Whether a scattered snapshot is still held by a worker (data lost with its workers is not)."""
    if fut.status in ("lost", "cancelled", "error"):
        return False
    return fut.status == "finished" or bool(client.who_has(fut).get(fut.key))


def forget(client: Client) -> None:
    """Drop the snapshot futures held for CLIENT (it is being closed)."""
    with _locks.publish:
        for key in [k for k in _published if k[0] == id(client)]:
            del _published[key]


engine.on_close(forget)


def split(items: Sequence[T], workers: int) -> list[list[T]]:
    """ITEMS cut into contiguous chunks: CHUNKS_PER_WORKER per worker, more if chunks would exceed MAX_CHUNK
    items, each at least MIN_CHUNK long.

    Usage: ``split(keys, 2)``
    """
    wanted = max(workers * CHUNKS_PER_WORKER, -(-len(items) // MAX_CHUNK))
    n = max(1, min(wanted, len(items) // MIN_CHUNK))
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        if end > start:
            out.append(list(items[start:end]))
        start = end
    return out


def use_cluster(n_items: int) -> bool:
    """Whether N_ITEMS of work go to the cluster: MIN_CLUSTER_TASKS or more, and a cluster is wanted.

    ``configure(workers=0)`` or BROKERAGE_DASK_WORKERS=0 (with no scheduler address) keeps every run in-process.
    """
    return n_items >= MIN_CLUSTER_TASKS and (engine.scheduler_address() is not None or engine.local_workers() > 0)


@gc_paused()  # the results arriving are many small objects: collections would walk this process's whole heap
def map_chunks(
    fn: ChunkFn[R],
    snap: GridSnapshot,
    items: Sequence[Any],
    payload: Any = None,
    *,
    cache: GridCache | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    client: Client | None = None,
    affinity: Callable[[Any], int] | None = None,
) -> list[R]:
    """FN(snap, cache, payload, chunk) for contiguous chunks of ITEMS; the results in chunk order.

    With AFFINITY (item -> int) on the cluster, the items are first grouped by AFFINITY(item) modulo the workers,
    and each group's chunks go to the same worker every run (another one if it is gone), so a worker's caches of
    per-task data stay warm across runs; the chunks then follow the groups, not ITEMS' order (callers reorder).

    FN must be a plain importable function (it is pickled by name). On the cluster SNAP reaches each worker once
    per snapshot version and each worker keeps one GridCache per snapshot; below MIN_CLUSTER_TASKS items (or
    without a cluster) the chunks run here with CACHE. PROGRESS gets (items done, total) as chunks complete;
    CANCEL() returning True between chunks cancels the rest and raises Cancelled. A chunk lost with its worker
    is recomputed by the scheduler, so the result equals a serial run's. When every worker died (the snapshot
    went with them) the run is retried once with the grid sent again; a second loss raises ClusterLost.
    Usage: ``parts = map_chunks(outcomes_of, snap, keys, config, progress=bar)``
    """
    total = len(items)
    if client is None and not use_cluster(total):
        return _in_process(fn, snap, items, payload, cache, progress, cancel)
    client = client or engine.get_client()
    try:
        return _on_cluster(fn, snap, items, payload, client, progress, cancel, affinity)
    except _LOST as first:
        log.warning("dask: the run lost its workers (%s: %s); sending the grid again", type(first).__name__, first)
        try:
            return _on_cluster(fn, snap, items, payload, client, progress, cancel, affinity)
        except _LOST as second:
            raise ClusterLost(
                f"the Dask cluster lost its workers twice during this run ({type(first).__name__}, then "
                f"{type(second).__name__}: {second}); the grid was sent again in between; nothing was returned"
            ) from second


def _on_cluster(
    fn: ChunkFn[R],
    snap: GridSnapshot,
    items: Sequence[Any],
    payload: Any,
    client: Client,
    progress: Progress | None,
    cancel: Cancel | None,
    affinity: Callable[[Any], int] | None,
) -> list[R]:
    total = len(items)
    addresses = sorted(client.scheduler_info(n_workers=-1).get("workers", {}))
    if not addresses:  # workers restarting after a crash: wait a while for one, else this run has lost them
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
        addresses = sorted(client.scheduler_info(n_workers=-1).get("workers", {}))
    workers = max(1, len(addresses))
    snap_fut = snapshot_future(client, snap)
    if affinity is None or workers == 1:
        chunks = split(items, workers)
        futures = [client.submit(run_chunk, fn, snap_fut, payload, Batch(c), pure=False) for c in chunks]
    else:
        groups: list[list[Any]] = [[] for _ in range(workers)]
        for item in items:
            groups[affinity(item) % workers].append(item)
        placed = [(addresses[g], c) for g, group in enumerate(groups) for c in split(group, 1) if c]
        chunks = [c for _, c in placed]
        futures = [
            client.submit(run_chunk, fn, snap_fut, payload, Batch(c), pure=False, workers=[a], allow_other_workers=True)
            for a, c in placed
        ]
    index = {f.key: i for i, f in enumerate(futures)}
    results: list[Any] = [None] * len(chunks)
    done = 0
    try:
        for fut, result in as_completed(futures, with_results=True, loop=client.loop):
            if isinstance(result, BaseException):  # a cancelled chunk (its data lost) comes back as its error
                raise result
            i = index[fut.key]
            results[i] = result
            done += len(chunks[i])
            if progress:
                progress(done, total)
            if cancel and cancel():
                raise Cancelled(f"cancelled after {done} of {total} items")
    except BaseException:
        client.cancel(futures)
        raise
    return results


@gc_paused()
def _in_process(
    fn: ChunkFn[R],
    snap: GridSnapshot,
    items: Sequence[Any],
    payload: Any,
    cache: GridCache | None,
    progress: Progress | None,
    cancel: Cancel | None,
) -> list[R]:
    cache = cache_for(snap, cache)
    chunks = split(items, 1) if progress or cancel else [list(items)]
    out, done = [], 0
    for chunk in chunks:
        if cancel and cancel():
            raise Cancelled(f"cancelled after {done} of {len(items)} items")
        out.append(fn(snap, cache, payload, chunk))
        done += len(chunk)
        if progress:
            progress(done, len(items))
    return out
