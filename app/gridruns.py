"""Whole-grid brokerage runs per (snapshot, config), kept on disk so every worker and background job shares them."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import diskcache

from app import data
from brokerage.whatif import GridRun, Progress, rerun_grid, run_grid

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
    # forked background jobs must not inherit a held lock or the parent's disk-cache connection
    global _lock, _disk
    _lock = threading.Lock()
    _disk = None
    _warming.clear()


os.register_at_fork(after_in_child=_reset_in_child)


def disk() -> diskcache.Cache:
    """The on-disk store of grid runs (opened lazily, so forked background jobs open their own handle)."""
    global _disk
    if _disk is None:
        _disk = diskcache.Cache(str(CACHE_DIR / "gridruns"), size_limit=512 * 2**20)
    return _disk


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
            run = run_grid(data.snapshot(), data.config(), progress=progress)
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
        after = rerun_grid(data.snapshot(), before, stored, cfg, progress=progress)
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


def after_fork() -> None:
    """In a forked background job: drop inherited handles (database pools, the disk cache) before use."""
    global _disk
    _disk = None
    data.dispose_engines()
