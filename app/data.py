"""Composition root: where the grid comes from, the effective config, and memoised brokerage calls."""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask_caching import Cache

from brokerage.brokers.registry import run_job_brokerage
from brokerage.explain import Decision
from brokerage.gdpconfig import Config
from brokerage.snapshot import GridSnapshot, empty_snapshot

log = logging.getLogger(__name__)

cache = Cache()
DECISION_CACHE_SIZE = 1024  # decisions kept per process (a few MB)
SNAPSHOT_TTL_S = float(os.environ.get("SNAPSHOT_TTL", "10"))  # how often the database's snapshot key is re-checked


@dataclass
class Source:
    """The loaded grid: snapshot, config, a human label of where it came from, and any load problem."""

    snap: GridSnapshot
    config: Config
    origin: str
    problem: str = ""
    loaded_at: float = 0.0


_lock = threading.Lock()
_inherited: list[Any] = []  # handles from the parent process, kept alive (unused) in a forked child


def _after_fork_in_child() -> None:
    """Make a forked child (grid-run worker, background job) independent of the parent's other threads.

    Another thread of the parent may have been inside SQLite (or held our lock) at the moment of the fork;
    its lock stays held forever in the child. Freeing an inherited SQLite connection takes SQLite's mutex,
    so the child's garbage collector hung on the parent's dead connections (seen with gdb: stuck in
    sqlite3_free from gc). The child therefore never collects what it inherited, keeps the parent's
    engines referenced, and opens fresh ones.
    """
    global _lock
    _lock = threading.Lock()
    gc.freeze()
    _inherited.append(dict(_engines))
    _engines.clear()


def keep_from_parent(handle: Any) -> None:
    """Keep HANDLE (inherited from the parent process) referenced for the life of a forked child."""
    if handle is not None:
        _inherited.append(handle)


os.register_at_fork(after_in_child=_after_fork_in_child)
_current: Source | None = None


def cache_config() -> dict[str, Any]:
    """flask-caching settings from env: CACHE_TYPE (SimpleCache), CACHE_DIR, CACHE_REDIS_URL."""
    kind = os.environ.get("CACHE_TYPE", "SimpleCache")
    cfg: dict[str, Any] = {"CACHE_TYPE": kind, "CACHE_DEFAULT_TIMEOUT": int(os.environ.get("CACHE_TIMEOUT", "600"))}
    if kind == "FileSystemCache":
        cfg["CACHE_DIR"] = os.environ.get("CACHE_DIR", "data/cache")
        cfg["CACHE_THRESHOLD"] = 5000
    elif kind == "RedisCache":
        cfg["CACHE_REDIS_URL"] = os.environ.get("CACHE_REDIS_URL", "redis://127.0.0.1:6379/0")
    return cfg


def _database_url() -> str | None:
    """DATABASE_URL; else, unless BROKERAGE_SNAPSHOT names a file, the embedded SQLite database if it exists."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    if os.environ.get("BROKERAGE_SNAPSHOT"):
        return None
    from brokerage.store import repository

    # never create an empty file by opening the default path: the setup command creates and fills it
    return repository.database_url() if repository.DEFAULT_SQLITE.exists() else None


def _load() -> Source:
    """Pick the source: DATABASE_URL, else BROKERAGE_SNAPSHOT (JSON file), else data/brokerage.sqlite, else a demo grid."""
    url = _database_url()
    path = os.environ.get("BROKERAGE_SNAPSHOT")
    if url:
        from brokerage.store import repository
        from brokerage.store.config_store import load_config

        engine = _engine(url)
        if repository.is_empty(engine):
            return Source(empty_snapshot(), Config(), "database", f"the database at {_safe_url(url)} holds no grid yet")
        return Source(repository.load_snapshot(engine), load_config(engine), f"database {_safe_url(url)}")
    if path:
        return Source(GridSnapshot.from_json(path), Config(), f"snapshot file {os.path.basename(path)}")
    try:
        from brokerage.synth import demo_snapshot
    except ImportError:
        return Source(
            empty_snapshot(), Config(), "empty grid", "no DATABASE_URL, no BROKERAGE_SNAPSHOT, no demo generator"
        )
    kw = {k: int(os.environ[e]) for k, e in (("queues", "DEMO_QUEUES"), ("tasks", "DEMO_TASKS")) if e in os.environ}
    return Source(demo_snapshot(seed=int(os.environ.get("DEMO_SEED", "0")), **kw), Config(), "demo grid")


def _safe_url(url: str) -> str:
    """The URL without its password."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://…@{rest.split('@', 1)[1]}"
    return url


def _db_key() -> str | None:
    """The stored grid's snapshot key (one cheap query), or None when it cannot be read."""
    from brokerage.store import repository

    try:
        url = _database_url()
        return repository.snapshot_key(_engine(url)) if url else None
    except Exception:  # an unreachable database keeps the grid already loaded
        log.warning("cannot read the stored snapshot key", exc_info=True)
        return None


def _config_version() -> int | None:
    """The newest stored gdpconfig version (one cheap query), or None when it cannot be read."""
    from brokerage.store.config_store import current_version

    try:
        url = _database_url()
        return current_version(_engine(url)) if url else None
    except Exception:  # an unreachable database keeps the config already loaded
        log.warning("cannot read the stored gdpconfig version", exc_info=True)
        return None


def _with_fresh_config(src: Source) -> Source:
    """SRC with its gdpconfig re-read from the database (another worker or the CLI saved a version)."""
    from brokerage.store.config_store import load_config

    url = _database_url()
    if not url:
        return src
    return Source(src.snap, load_config(_engine(url)), src.origin, src.problem, src.loaded_at)


_engines: dict[str, Any] = {}


def _engine(url: str) -> Any:
    """One SQLAlchemy engine per URL for the process."""
    if url not in _engines:
        from brokerage.store import repository

        _engines[url] = repository.make_engine(url)
    return _engines[url]


def reload_config() -> None:
    """Re-read the stored gdpconfig (after a save or restore), keeping the loaded snapshot."""
    global _current
    with _lock:
        if _current is not None:
            _current = _with_fresh_config(_current)


def engine() -> Any:
    """The SQLAlchemy engine of the current database, or None when the grid does not come from one."""
    url = _database_url()
    return _engine(url) if url else None


def source() -> Source:
    """The current grid, loaded once per snapshot version (a database is re-checked every SNAPSHOT_TTL seconds)."""
    global _current
    with _lock:
        stale = False
        if _current is not None and _database_url() and time.time() - _current.loaded_at > SNAPSHOT_TTL_S:
            key = _db_key()
            _current.loaded_at = time.time()
            stale = key is not None and key != _current.snap.key
            if not stale and _config_version() not in (None, _current.config.version):
                _current = _with_fresh_config(_current)
        if _current is None or stale:
            try:
                src = _load()
            except Exception as exc:  # a broken source must show as a message, not take the app down
                log.exception("cannot load the grid")
                src = Source(empty_snapshot(), Config(), "no grid", f"{type(exc).__name__}: {exc}")
            src.loaded_at = time.time()
            _current = src
        return _current


def reset(new: Source | None = None) -> None:
    """Forget the loaded grid (tests and reloads); optionally install NEW as the current source."""
    global _current
    with _lock:
        _current = new
        if new is not None:
            new.loaded_at = time.time()
    _job_decision.cache_clear()
    _nucleus_decision.cache_clear()
    with contextlib.suppress(Exception):  # the cache is not initialised outside the app
        cache.clear()


def snapshot() -> GridSnapshot:
    """The current snapshot."""
    return source().snap


def config() -> Config:
    """The effective gdpconfig."""
    return source().config


def keys() -> tuple[str, str]:
    """The small cache key of the current data: (snapshot key, config fingerprint)."""
    src = source()
    return src.snap.key, src.config.fingerprint()


_configs: dict[str, Config] = {}


def effective_config(overrides: Mapping[str, Any] | None = None) -> Config:
    """The stored config with what-if OVERRIDES on top (validated; ConfigError names a bad key)."""
    base = config()
    cfg = base.with_overrides(overrides) if overrides else base
    _configs[cfg.fingerprint()] = cfg
    return cfg


def _config_of(fp: str) -> Config:
    """The config a memoised call was asked about (registered by effective_config just before the call)."""
    return _configs.get(fp) or config()


# Memoised calls take only small string/int keys; the snapshot itself is looked up inside, never hashed.
# Decisions stay in process memory: their explanations hold lazily built sentences, which do not pickle,
# and a decision is rebuilt in a few milliseconds, cheaper than a round trip to a shared cache.
@functools.lru_cache(maxsize=DECISION_CACHE_SIZE)
def _job_decision(snap_key: str, task_id: int, cfg_fp: str) -> Decision:
    return run_job_brokerage(snapshot(), task_id, _config_of(cfg_fp))


def job_decision(task_id: int, overrides: Mapping[str, Any] | None = None) -> Decision:
    """Job brokerage of TASK_ID on the current grid under the stored config (+ OVERRIDES), memoised."""
    cfg = effective_config(overrides)
    return _job_decision(snapshot().key, int(task_id), cfg.fingerprint())


@functools.lru_cache(maxsize=DECISION_CACHE_SIZE)
def _nucleus_decision(snap_key: str, task_id: int, cfg_fp: str) -> Decision:
    from brokerage.brokers.nucleus import broker

    return broker(snapshot(), task_id, _config_of(cfg_fp), seed=0)


def nucleus_decision(task_id: int, overrides: Mapping[str, Any] | None = None) -> Decision:
    """Task (nucleus) brokerage of TASK_ID under the stored config (+ OVERRIDES), memoised."""
    cfg = effective_config(overrides)
    return _nucleus_decision(snapshot().key, int(task_id), cfg.fingerprint())


def has_nucleus_broker() -> bool:
    """Whether the task-to-nucleus broker module exists."""
    try:
        import brokerage.brokers.nucleus  # noqa: F401
    except ImportError:
        return False
    return True


def stabilizer_frame() -> Any:
    """The Analysis Stabilizer for every (PQ, user, share), computed once per snapshot and config."""
    from brokerage.brokers.stabilizer import stabilizer_grid

    _, fp = keys()
    return snapshot().cached(f"app:stabilizer:{fp}", lambda: stabilizer_grid(snapshot(), config()))
