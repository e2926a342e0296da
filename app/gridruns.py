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

from app.state import AppState
from app.state.lru import Lru, after_fork_in_child
from brokerage.cache import GridCache
from brokerage.gdpconfig import Config
from brokerage.lifecycle.waiting import waiting_task_ids
from brokerage.snapshot import GridSnapshot
from brokerage.whatif import ALL_BROKERS, GridRun, Progress, rerun_grid, run_grid

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent
CACHE_DIR = Path(os.environ.get("BROKERAGE_CACHE_DIR", str(ROOT / "data" / "cache")))
LOCK_EXPIRE_S = 300  # a crashed computation frees the lock after this long
MEMO_RUNS = 16  # a few what-ifs per process are enough; the disk keeps the rest
RUN_TTL_S = 6 * 3600  # a run is keyed on the snapshot and config versions; the TTL only bounds disk use

# the snapshot a forked worker brokers: handed over by the pool's initializer, never pickled (fork inherits it)
_worker: dict[str, Any] = {}


def _adopt(snap: GridSnapshot) -> None:
    _worker["snap"] = snap
    _worker["cache"] = GridCache(snap)


def worker_snapshot() -> GridSnapshot:
    """The snapshot this forked grid-run worker was handed."""
    return _worker["snap"]


WORKERS = int(os.environ.get("BROKERAGE_GRID_WORKERS", str(min(4, os.cpu_count() or 1))))
CHUNKS_PER_WORKER = 8  # several chunks per worker keep the progress bar moving and the workers evenly loaded
MIN_PARALLEL_TASKS = 200  # below this, starting processes costs more than it saves


# A forked worker can hang for good when another thread of the parent held a lock at the moment of the
# fork (seen in 2 of 8 start-ups where a request and the warm-up thread both wanted the baseline). A run
# whose workers stay silent this long finishes the missing chunks in the parent instead of waiting forever.
STALL_S = float(os.environ.get("BROKERAGE_GRID_STALL_S", "30"))


def _run_chunk(job: tuple[int, Config, frozenset[str], list[int]]) -> tuple[int, GridRun]:
    i, cfg, brokers, ids = job
    return i, run_grid(worker_snapshot(), cfg, brokers=brokers, task_ids=ids, cache=_worker["cache"])


def parallel_run(
    snap: GridSnapshot,
    config: Config,
    *,
    brokers: Iterable[str] = ALL_BROKERS,
    task_ids: Sequence[int] | None = None,
    progress: Progress | None = None,
    cache: GridCache | None = None,
) -> GridRun:
    """run_grid over WORKERS forked processes (each inherits SNAP); same result, merged.

    Usage: ``rerun_grid(snap, base, stored, cfg, run_with=parallel_run)``
    """
    ids = waiting_task_ids(snap) if task_ids is None else [int(t) for t in task_ids]
    if WORKERS < 2 or len(ids) < MIN_PARALLEL_TASKS:
        return run_grid(snap, config, brokers=brokers, task_ids=ids, progress=progress, cache=cache)
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

    with multiprocessing.get_context("fork").Pool(WORKERS, _adopt, (snap,)) as pool:
        parts = pool.imap_unordered(_run_chunk, [(i, config, wanted, c) for i, c in enumerate(chunks)])
        try:
            while missing:
                add(*parts.next(timeout=STALL_S))
        except multiprocessing.TimeoutError:
            log.warning("grid run: workers silent for %.0f s; %d of %d chunks run in-process", STALL_S,
                        len(missing), len(chunks))  # fmt: skip
    for i in sorted(missing):  # the pool is terminated on leaving the block above
        add(i, run_grid(snap, config, brokers=wanted, task_ids=chunks[i], cache=cache))
    merged.seconds = time.perf_counter() - t0
    return merged


def _key(snap_key: str, fp: str) -> str:
    return f"run:{snap_key}:{fp}"


class GridRuns:
    """Whole-grid runs of one AppState's grid, per (snapshot, config), memoised in memory and on disk.

    Usage: ``runs = GridRuns(state); before, after = runs.whatif_runs({"NQUEUED_SAT_CAP": 300})``
    """

    def __init__(self, state: AppState, cache_dir: Path = CACHE_DIR) -> None:
        self.state = state
        self.cache_dir = cache_dir
        self._disk: diskcache.Cache | None = None
        self._memo: Lru[GridRun] = Lru(MEMO_RUNS)
        self._lock = threading.Lock()
        self._warming: set[str] = set()
        after_fork_in_child(self._reset_in_child)

    def _reset_in_child(self) -> None:
        # a forked child must not inherit a held lock; it opens its own disk-cache connection, and keeps the
        # parent's referenced, since freeing it could wait on a SQLite mutex held by a thread that is gone
        self._lock = threading.Lock()
        self.state.loader.keep_from_parent(self._disk)
        self._disk = None
        self._warming.clear()

    def disk(self) -> diskcache.Cache:
        """The on-disk store of grid runs (opened lazily, so forked background jobs open their own handle)."""
        if self._disk is None:
            self._disk = diskcache.Cache(str(self.cache_dir / "gridruns"), size_limit=512 * 2**20)
        return self._disk

    def _get(self, key: str) -> GridRun | None:
        run = self._memo.peek(key)
        if run is None:
            run = self.disk().get(key)
            if run is not None:
                self._memo.put(key, run)
        return run

    def _put(self, key: str, run: GridRun) -> None:
        self._memo.put(key, run)
        self.disk().set(key, run, expire=RUN_TTL_S)

    def base_key(self) -> str:
        """Cache key of the stored config's run on the current snapshot."""
        snap_key, fp = self.state.keys()
        return _key(snap_key, fp)

    def base_run_if_ready(self) -> GridRun | None:
        """The stored config's grid run if it has been computed already (never computes)."""
        return self._get(self.base_key())

    def base_run(self, progress: Progress | None = None) -> GridRun:
        """Every waiting task brokered under the stored config (computed once per snapshot and config version).

        Usage: ``runs.base_run().outcomes[("production", 4242)].top``
        """
        key = self.base_key()
        run = self._get(key)
        if run is not None:
            return run
        # one process computes, the others (workers, background jobs) wait for its result instead of repeating it
        with diskcache.Lock(self.disk(), f"lock:{key}", expire=LOCK_EXPIRE_S):
            run = self._get(key)
            if run is None:
                run = parallel_run(
                    self.state.snapshot(), self.state.config(), progress=progress, cache=self.state.grid_cache()
                )
                self._put(key, run)
        return run

    def whatif_runs(self, overrides: Mapping[str, Any], progress: Progress | None = None) -> tuple[GridRun, GridRun]:
        """(stored, what-if) grid runs; the what-if re-brokers only tasks of brokers that read an edited key.

        Usage: ``before, after = runs.whatif_runs({"NQUEUED_SAT_CAP": 300})``
        """
        snap, stored = self.state.snapshot(), self.state.config()
        cfg = self.state.effective_config(overrides)
        before = self.base_run(progress if not overrides else None)
        if cfg.fingerprint() == stored.fingerprint():
            return before, before
        key = _key(snap.key, cfg.fingerprint())
        after = self._get(key)
        if after is None:
            after = rerun_grid(
                snap, before, stored, cfg, progress=progress, run_with=parallel_run, cache=self.state.grid_cache()
            )
            self._put(key, after)
        return before, after

    def warm_base_in_background(self) -> None:
        """Start computing the stored config's run in a thread (a no-op when it is cached or already being computed)."""
        try:
            key = self.base_key()
        except Exception:  # no grid yet: nothing to warm
            return
        with self._lock:
            if key in self._warming or self._get(key) is not None:
                return
            self._warming.add(key)

        def work() -> None:
            try:
                self.base_run()
            except Exception:
                log.exception("warming the stored config's grid run failed")
            finally:
                self._warming.discard(key)

        threading.Thread(target=work, name="warm-grid-run", daemon=True).start()
