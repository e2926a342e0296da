"""Whole-grid brokerage runs per (snapshot, config), kept on disk so every worker and background job shares them."""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import diskcache

from app import data
from brokerage.gdpconfig import Config
from brokerage.lifecycle.waiting import waiting_task_ids
from brokerage.snapshot import GridSnapshot
from brokerage.whatif import ALL_BROKERS, GridRun, Progress, rerun_grid, run_grid

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent
CACHE_DIR = Path(os.environ.get("BROKERAGE_CACHE_DIR", str(ROOT / "data" / "cache")))
LOCK_EXPIRE_S = 300  # a crashed computation frees the lock after this long
RUN_TTL_S = 6 * 3600  # a run is keyed on the snapshot and config versions; the TTL only bounds disk use

_disk: diskcache.Cache | None = None
_memo: dict[str, GridRun] = {}
_lock = threading.Lock()
_warming: set[str] = set()


def _reset_in_child() -> None:
    # a forked child must not inherit a held lock; it opens its own disk-cache connection, and keeps the
    # parent's referenced, since freeing it could wait on a SQLite mutex held by a thread that is gone
    global _lock, _disk
    _lock = threading.Lock()
    data.keep_from_parent(_disk)
    _disk = None
    _warming.clear()


os.register_at_fork(after_in_child=_reset_in_child)


def disk() -> diskcache.Cache:
    """The on-disk store of grid runs (opened lazily, so forked background jobs open their own handle)."""
    global _disk
    if _disk is None:
        _disk = diskcache.Cache(str(CACHE_DIR / "gridruns"), size_limit=512 * 2**20)
    return _disk


WORKERS = int(os.environ.get("BROKERAGE_GRID_WORKERS", str(min(4, os.cpu_count() or 1))))
CHUNKS_PER_WORKER = 8  # several chunks per worker keep the progress bar moving and the workers evenly loaded
MIN_PARALLEL_TASKS = 200  # below this, starting processes costs more than it saves


# A forked worker can hang for good when another thread of the parent held a lock at the moment of the
# fork (seen in 2 of 8 start-ups where a request and the warm-up thread both wanted the baseline). A run
# whose workers stay silent this long finishes the missing chunks in the parent instead of waiting forever.
STALL_S = float(os.environ.get("BROKERAGE_GRID_STALL_S", "30"))


def _run_chunk(job: tuple[int, Config, frozenset[str], list[int]]) -> tuple[int, GridRun]:
    i, cfg, brokers, ids = job
    return i, run_grid(data.snapshot(), cfg, brokers=brokers, task_ids=ids)


def parallel_run(
    snap: GridSnapshot,
    config: Config,
    *,
    brokers: Iterable[str] = ALL_BROKERS,
    task_ids: Sequence[int] | None = None,
    progress: Progress | None = None,
) -> GridRun:
    """run_grid over WORKERS forked processes (each inherits the loaded snapshot); same result, merged.

    Usage: ``rerun_grid(snap, base, stored, cfg, runner=parallel_run)``
    """
    ids = waiting_task_ids(snap) if task_ids is None else [int(t) for t in task_ids]
    if WORKERS < 2 or len(ids) < MIN_PARALLEL_TASKS or snap is not data.snapshot():
        return run_grid(snap, config, brokers=brokers, task_ids=ids, progress=progress)
    t0 = time.perf_counter()
    n = WORKERS * CHUNKS_PER_WORKER
    chunks = [ids[i::n] for i in range(n) if ids[i::n]]
    wanted = frozenset(brokers)
    merged = GridRun({}, {}, 0.0, 0)
    missing = set(range(len(chunks)))

    def add(i: int, part: GridRun) -> None:
        merged.outcomes.update(part.outcomes)
        merged.errors.update(part.errors)
        merged.recomputed += part.recomputed
        missing.discard(i)
        if progress:  # in tasks, as the chunks come back
            progress((len(chunks) - len(missing)) * len(ids) // len(chunks), len(ids))

    with multiprocessing.get_context("fork").Pool(WORKERS) as pool:
        parts = pool.imap_unordered(_run_chunk, [(i, config, wanted, c) for i, c in enumerate(chunks)])
        try:
            while missing:
                add(*parts.next(timeout=STALL_S))
        except multiprocessing.TimeoutError:
            log.warning("grid run: workers silent for %.0f s; %d of %d chunks run in-process", STALL_S,
                        len(missing), len(chunks))  # fmt: skip
    for i in sorted(missing):  # the pool is terminated on leaving the block above
        add(i, run_grid(snap, config, brokers=wanted, task_ids=chunks[i]))
    merged.seconds = time.perf_counter() - t0
    return merged


def _key(snap_key: str, fp: str) -> str:
    return f"run:{snap_key}:{fp}"


def _get(key: str) -> GridRun | None:
    run = _memo.get(key)
    if run is None:
        run = disk().get(key)
        if run is not None:
            _memo[key] = run
    return run


def _put(key: str, run: GridRun) -> None:
    _memo[key] = run
    if len(_memo) > 16:  # a few what-ifs per process are enough; the disk keeps the rest
        _memo.pop(next(iter(_memo)))
    disk().set(key, run, expire=RUN_TTL_S)


def base_key() -> str:
    """Cache key of the stored config's run on the current snapshot."""
    return _key(data.snapshot().key, data.config().fingerprint())


def base_run_if_ready() -> GridRun | None:
    """The stored config's grid run if it has been computed already (never computes)."""
    return _get(base_key())


def base_run(progress: Progress | None = None) -> GridRun:
    """Every waiting task brokered under the stored config (computed once per snapshot and config version).

    Usage: ``base_run().outcomes[("production", 4242)].top``
    """
    key = base_key()
    run = _get(key)
    if run is not None:
        return run
    # one process computes, the others (workers, background jobs) wait for its result instead of repeating it
    with diskcache.Lock(disk(), f"lock:{key}", expire=LOCK_EXPIRE_S):
        run = _get(key)
        if run is None:
            run = parallel_run(data.snapshot(), data.config(), progress=progress)
            _put(key, run)
    return run


def whatif_runs(overrides: Mapping[str, Any], progress: Progress | None = None) -> tuple[GridRun, GridRun]:
    """(stored, what-if) grid runs; the what-if re-brokers only tasks of brokers that read an edited key.

    Usage: ``before, after = whatif_runs({"NQUEUED_SAT_CAP": 300})``
    """
    stored = data.config()
    cfg = data.effective_config(overrides)
    before = base_run(progress if not overrides else None)
    if cfg.fingerprint() == stored.fingerprint():
        return before, before
    key = _key(data.snapshot().key, cfg.fingerprint())
    after = _get(key)
    if after is None:
        after = rerun_grid(data.snapshot(), before, stored, cfg, progress=progress, runner=parallel_run)
        _put(key, after)
    return before, after


def warm_base_in_background() -> None:
    """Start computing the stored config's run in a thread (a no-op when it is cached or already being computed)."""
    try:
        key = base_key()
    except Exception:  # no grid yet: nothing to warm
        return
    with _lock:
        if key in _warming or _get(key) is not None:
            return
        _warming.add(key)

    def work() -> None:
        try:
            base_run()
        except Exception:
            log.exception("warming the stored config's grid run failed")
        finally:
            _warming.discard(key)

    threading.Thread(target=work, name="warm-grid-run", daemon=True).start()
