"""Whole-grid brokerage runs per (snapshot, config) on the Dask engine, kept on disk for every worker and background job."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import diskcache

from app.state import AppState
from app.state.lru import Lru, after_fork_in_child
from brokerage.brokers.batch import GridRun
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.waiting import waiting_task_ids
from brokerage.whatif.compare import Progress
from brokerage.whatif.impact import rerun_grid

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent.parent
CACHE_DIR = Path(os.environ.get("BROKERAGE_CACHE_DIR", str(ROOT / "data" / "cache")))
LOCK_EXPIRE_S = 300  # a crashed computation frees the lock after this long
MEMO_RUNS = 16  # a few what-ifs per process are enough; the disk keeps the rest
RUN_TTL_S = 6 * 3600  # a run is keyed on the snapshot and config versions; the TTL only bounds disk use


def cluster_run(snap: GridSnapshot, config: Config, **kw: Any) -> GridRun:
    """``brokerage.runs.run_grid`` (the cluster, or in-process for small runs), with run_grid's arguments."""
    from brokerage import runs

    return runs.run_grid(snap, config, **kw)


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
        # Dash background jobs are forked children: they must not inherit a held lock; they open their own
        # disk-cache connection and keep the parent's referenced (freeing it could wait on a SQLite mutex held by
        # a thread that is gone)
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
                run = cluster_run(
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
                snap, before, stored, cfg, progress=progress, run_with=cluster_run, cache=self.state.grid_cache()
            )
            self._put(key, after)
        return before, after

    def start_engine(self) -> None:
        """Start this server process's Dask client now if the grid is big enough to use it (once per process).

        Background jobs are forked from the server process and reach its embedded cluster by address; starting it
        here, before the first whole-grid job forks, keeps them from starting clusters of their own.
        """
        from brokerage import runs

        if runs.use_cluster(len(waiting_task_ids(self.state.snapshot()))):
            runs.get_client()

    def warm_base_in_background(self) -> None:
        """Start the Dask engine, then compute the stored config's run in a thread (a no-op when it is cached or
        already being computed)."""
        try:
            key = self.base_key()
            self.start_engine()
        except Exception:  # no grid (or no cluster) yet: nothing to warm, the first run says what is wrong
            log.warning("warming the grid-run engine failed", exc_info=True)
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
