"""Where the grid comes from (DATABASE_URL, BROKERAGE_SNAPSHOT, the embedded SQLite or a demo grid), reloaded on a new key."""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

from brokerage.brokers.router import grid_vo
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot, empty_snapshot

log = logging.getLogger(__name__)

SNAPSHOT_TTL_S = float(os.environ.get("SNAPSHOT_TTL", "10"))  # how often the database's snapshot key is re-checked


def config_vo(snap: GridSnapshot) -> str:
    """The VO whose CONFIG rows the app loads: BROKERAGE_VO, else the grid's tasks' VO, else atlas.

    Usage: ``load_config(engine, vo=config_vo(snap))``
    """
    return os.environ.get("BROKERAGE_VO") or grid_vo(snap)


@dataclass
class Source:
    """The loaded grid: snapshot, config, where it came from, any load problem, and the snapshot's derived data."""

    snap: GridSnapshot
    config: Config
    origin: str
    problem: str = ""
    loaded_at: float = 0.0
    grid: GridCache | None = None  # one per loaded snapshot; a config reload keeps it

    def __post_init__(self) -> None:
        if self.grid is None or self.grid.snap is not self.snap:
            self.grid = GridCache(self.snap)


def database_url() -> str | None:
    """DATABASE_URL; else, unless BROKERAGE_SNAPSHOT names a file, the embedded SQLite database if it exists."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    if os.environ.get("BROKERAGE_SNAPSHOT"):
        return None
    from brokerage.store import database

    # never create an empty file by opening the default path: the setup command creates and fills it
    return database.database_url() if database.DEFAULT_SQLITE.exists() else None


def safe_url(url: str) -> str:
    """The URL without its password."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://…@{rest.split('@', 1)[1]}"
    return url


class SnapshotSource:
    """The current grid of this process, loaded once per snapshot key; the database is re-checked every TTL_S.

    The environment is read at load time, so ``reset()`` after changing it picks the new source.
    Usage: ``src = SnapshotSource(); src.current().snap``
    """

    def __init__(self, ttl_s: float = SNAPSHOT_TTL_S) -> None:
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._current: Source | None = None
        self._engines: dict[str, Any] = {}

    def _engine(self, url: str) -> Any:
        """One SQLAlchemy engine per URL for the process."""
        if url not in self._engines:
            from brokerage.store import database

            self._engines[url] = database.make_engine(url)
        return self._engines[url]

    def engine(self) -> Any:
        """The SQLAlchemy engine of the current database, or None when the grid does not come from one."""
        url = database_url()
        return self._engine(url) if url else None

    def _load(self) -> Source:
        """DATABASE_URL, else BROKERAGE_SNAPSHOT (JSON file), else data/brokerage.sqlite, else a demo grid."""
        url = database_url()
        path = os.environ.get("BROKERAGE_SNAPSHOT")
        if url:
            from brokerage.store import repository
            from brokerage.store.config_store import load_config

            engine = self._engine(url)
            if repository.is_empty(engine):
                return Source(
                    empty_snapshot(), Config(), "database", f"the database at {safe_url(url)} holds no grid yet"
                )
            snap = repository.load_snapshot(engine)
            return Source(snap, load_config(engine, vo=config_vo(snap)), f"database {safe_url(url)}")
        if path:
            snap = GridSnapshot.from_json(path)
            return Source(snap, Config(vo=config_vo(snap)), f"snapshot file {os.path.basename(path)}")
        try:
            from brokerage.synth.demo import demo_snapshot
        except ImportError:
            return Source(
                empty_snapshot(), Config(), "empty grid", "no DATABASE_URL, no BROKERAGE_SNAPSHOT, no demo generator"
            )
        kw = {k: int(os.environ[e]) for k, e in (("queues", "DEMO_QUEUES"), ("tasks", "DEMO_TASKS")) if e in os.environ}
        return Source(demo_snapshot(seed=int(os.environ.get("DEMO_SEED", "0")), **kw), Config(), "demo grid")

    def _db_key(self) -> str | None:
        """The stored grid's snapshot key (one cheap query), or None when it cannot be read."""
        from brokerage.store import repository

        try:
            url = database_url()
            return repository.snapshot_key(self._engine(url)) if url else None
        except Exception:  # an unreachable database keeps the grid already loaded
            log.warning("cannot read the stored snapshot key", exc_info=True)
            return None

    def _config_version(self) -> int | None:
        """The newest stored gdpconfig version (one cheap query), or None when it cannot be read."""
        from brokerage.store.config_store import current_version

        try:
            url = database_url()
            return current_version(self._engine(url)) if url else None
        except Exception:  # an unreachable database keeps the config already loaded
            log.warning("cannot read the stored gdpconfig version", exc_info=True)
            return None

    def _with_fresh_config(self, src: Source) -> Source:
        """SRC with its gdpconfig re-read from the database (another worker or the CLI saved a version)."""
        from brokerage.store.config_store import load_config

        url = database_url()
        if not url:
            return src
        return dataclasses.replace(src, config=load_config(self._engine(url), vo=src.config.vo))

    def current(self) -> Source:
        """The current grid, loaded once per snapshot key (a database is re-checked every TTL_S seconds).

        Usage: ``source.current().config["NQUEUED_SAT_CAP"]``
        """
        with self._lock:
            cur = self._current
            stale = False
            if cur is not None and database_url() and time.time() - cur.loaded_at > self.ttl_s:
                key = self._db_key()
                cur.loaded_at = time.time()
                stale = key is not None and key != cur.snap.key
                if not stale and self._config_version() not in (None, cur.config.version):
                    cur = self._current = self._with_fresh_config(cur)
            if cur is None or stale:
                try:
                    cur = self._load()
                except Exception as exc:  # a broken source must show as a message, not take the app down
                    log.exception("cannot load the grid")
                    cur = Source(empty_snapshot(), Config(), "no grid", f"{type(exc).__name__}: {exc}")
                cur.loaded_at = time.time()
                self._current = cur
            return cur

    def reload_config(self) -> None:
        """Re-read the stored gdpconfig (after a save or restore), keeping the loaded snapshot."""
        with self._lock:
            if self._current is not None:
                self._current = self._with_fresh_config(self._current)

    def reset(self, new: Source | None = None) -> None:
        """Forget the loaded grid (tests and reloads); optionally install NEW as the current source."""
        with self._lock:
            self._current = new
            if new is not None:
                new.loaded_at = time.time()
