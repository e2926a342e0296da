"""The app's state: the snapshot source with reload, its per-snapshot GridCache, and bounded decision caches."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from app.state.answers import Answers
from app.state.decisions import DECISION_CACHE_SIZE, DecisionCache
from app.state.lru import Lru
from app.state.source import SnapshotSource, Source
from brokerage.model.cache import GridCache
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot

__all__ = ["Answers", "AppState", "DecisionCache", "Lru", "SnapshotSource", "Source", "cache_config"]

CONFIG_CACHE_SIZE = 64  # what-if configs kept (one per distinct set of edits recently asked about)


def cache_config() -> dict[str, Any]:
    """flask-caching settings from env: RedisCache on REDIS_URL when the deployment has Redis (every server process
    shares it), else a SimpleCache per process bounded to CACHE_THRESHOLD entries; CACHE_TYPE (with CACHE_DIR or
    CACHE_REDIS_URL) overrides.

    Usage: ``Cache(server, config=cache_config())``
    """
    redis = os.environ.get("REDIS_URL", "").strip()
    kind = os.environ.get("CACHE_TYPE") or ("RedisCache" if redis else "SimpleCache")
    cfg: dict[str, Any] = {
        "CACHE_TYPE": kind,
        "CACHE_DEFAULT_TIMEOUT": int(os.environ.get("CACHE_TIMEOUT", "600")),
        "CACHE_KEY_PREFIX": "brokerage:",
        "CACHE_THRESHOLD": int(os.environ.get("CACHE_THRESHOLD", "256")),
    }
    if kind == "FileSystemCache":
        cfg["CACHE_DIR"] = os.environ.get("CACHE_DIR", "data/cache")
    elif kind == "RedisCache":
        cfg["CACHE_REDIS_URL"] = os.environ.get("CACHE_REDIS_URL") or redis or "redis://127.0.0.1:6379/0"
    return cfg


class AppState:
    """One process's view of the grid: the current snapshot and config, and memoised decisions over them.

    Usage: ``state = AppState(); state.job_decision(4242, {"NQUEUED_SAT_CAP": 300}).ranked_names``
    """

    def __init__(self, source: SnapshotSource | None = None, decisions: int = DECISION_CACHE_SIZE) -> None:
        self.loader = source or SnapshotSource()
        self.decisions = DecisionCache(decisions)
        self.answers = Answers(self.source)  # tables and API bodies per (snapshot, config): flask-caching
        self._configs: Lru[Config] = Lru(CONFIG_CACHE_SIZE)

    # ---------------------------------------------------------------- the grid

    def source(self) -> Source:
        """The current grid (snapshot, config, origin, load problem), reloaded when the database's key changes."""
        return self.loader.current()

    def snapshot(self) -> GridSnapshot:
        """The current snapshot."""
        return self.source().snap

    def config(self) -> Config:
        """The stored (effective) gdpconfig."""
        return self.source().config

    def grid_cache(self) -> GridCache:
        """The current snapshot's GridCache (replaced together with the snapshot on reload).

        Usage: ``production.broker(state.snapshot(), 4242, cfg, cache=state.grid_cache())``
        """
        grid = self.source().grid
        assert grid is not None  # Source always builds one
        return grid

    def keys(self) -> tuple[str, str]:
        """The small cache key of the current data: (snapshot key, config fingerprint)."""
        src = self.source()
        return src.snap.key, src.config.fingerprint()

    def engine(self) -> Any:
        """The SQLAlchemy engine of the current database, or None when the grid does not come from one."""
        return self.loader.engine()

    def reload_config(self) -> None:
        """Re-read the stored gdpconfig after a save or restore (old decisions age out of the LRU)."""
        self.loader.reload_config()

    def reset(self, new: Source | None = None) -> None:
        """Forget the loaded grid and every cached decision and answer; optionally install NEW as the current source."""
        self.loader.reset(new)
        self.decisions.clear()
        self._configs.clear()
        self.answers.clear()

    def sizes(self) -> dict[str, int]:
        """Entries held by the bounded caches, for monitoring: decisions, derived tables, what-if configs."""
        return {**self.decisions.sizes(), "configs": len(self._configs)}

    # ---------------------------------------------------------------- configs and decisions

    def effective_config(self, overrides: Mapping[str, Any] | None = None) -> Config:
        """The stored config with what-if OVERRIDES on top (validated; ConfigError names a bad key).

        Usage: ``state.effective_config({"NW_ACTIVE": False}).fingerprint()``
        """
        return self._effective(self.config(), overrides)

    def _effective(self, base: Config, overrides: Mapping[str, Any] | None) -> Config:
        if not overrides:
            return base
        key = (base.fingerprint(), tuple(sorted((k, repr(v)) for k, v in overrides.items())))
        return self._configs.get(key, lambda: base.with_overrides(overrides))

    def _grid_and_config(self, overrides: Mapping[str, Any] | None) -> tuple[GridSnapshot, Config, GridCache]:
        """Snapshot, effective config and the snapshot's cache read from one Source, so a reload cannot mix them."""
        src = self.source()
        assert src.grid is not None  # Source always builds one
        return src.snap, self._effective(src.config, overrides), src.grid

    def job_decision(self, task_id: int, overrides: Mapping[str, Any] | None = None) -> Decision:
        """Job brokerage of TASK_ID on the current grid under the stored config (+ OVERRIDES), memoised.

        Usage: ``state.job_decision(4242).candidates[0].name``
        """
        from brokerage.brokers.router import run_job_brokerage

        (snap, cfg, grid), tid = self._grid_and_config(overrides), int(task_id)
        return self.decisions.get(
            (snap.key, cfg.fingerprint(), "jobs", tid), lambda: run_job_brokerage(snap, tid, cfg, cache=grid)
        )

    def nucleus_decision(self, task_id: int, overrides: Mapping[str, Any] | None = None) -> Decision:
        """Task (nucleus) brokerage of TASK_ID under the stored config (+ OVERRIDES), memoised (seed 0).

        Usage: ``state.nucleus_decision(4242).candidates[0].details["probability"]``
        """
        from brokerage.brokers.router import run_nucleus_brokerage

        (snap, cfg, grid), tid = self._grid_and_config(overrides), int(task_id)
        return self.decisions.get(
            (snap.key, cfg.fingerprint(), "nucleus", tid), lambda: run_nucleus_brokerage(snap, tid, cfg, cache=grid)
        )

    def stabilizer_frame(self) -> Any:
        """The Analysis Stabilizer for every (PQ, user, share), computed once per snapshot and config.

        Usage: ``state.stabilizer_frame().query("throttled")``
        """
        from brokerage.brokers.stabilizer import stabilizer_grid

        snap, cfg, grid = self._grid_and_config(None)
        return self.decisions.derived((snap.key, cfg.fingerprint(), "stabilizer"), lambda: stabilizer_grid(grid, cfg))
