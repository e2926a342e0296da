"""Failed operator checks, counted per client address and name with doubling waits, atomically across processes."""

from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import time
from pathlib import Path
from typing import Any, Protocol

import redis

PAIR_FREE = 5  # failed checks of one name from one client address before each further one must wait
CLIENT_FREE = 20  # failed checks from one client address, any names, before each further one must wait
MAX_WAIT_S = 300  # the wait doubles from 1 s up to this
FORGET_S = 24 * 3600  # a counter not touched for this long starts again from zero


def wait_after(failures: int, free: int, since_last: float) -> float:
    """Seconds still to wait after FAILURES failures of which FREE cost nothing, SINCE_LAST seconds after the last.

    Usage: ``wait_after(7, 5, 0.5) == 3.5``  (the 8th attempt waits 2**2 s after the 7th failure)
    """
    if failures < free:
        return 0.0
    return max(0.0, min(2.0 ** (failures - free), MAX_WAIT_S) - since_last)


def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "backslashreplace")).hexdigest()[:32]


class Counters(Protocol):
    """Where failure counters live: reserve() must be atomic across every process that shares them."""

    def reserve(self, keys: list[tuple[str, int]], now: float) -> float: ...

    def clear(self, key: str) -> None: ...

    def reset(self) -> None: ...


class SqliteCounters:
    """Counters in a SQLite file (one transaction per attempt, so gunicorn workers on one machine share them)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._db() as db:
            db.execute("CREATE TABLE IF NOT EXISTS attempts (key TEXT PRIMARY KEY, failures INT, last REAL)")

    def _db(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30, isolation_level=None)

    def reserve(self, keys: list[tuple[str, int]], now: float) -> float:
        """Seconds to wait for the first key still waiting; else count one more failure on every key and 0.

        The attempt is counted before its secret is checked (and cleared on success), so concurrent attempts
        cannot all pass the same check."""
        db = self._db()
        try:
            db.execute("BEGIN IMMEDIATE")  # one writer at a time: the read and the count are one step
            db.execute("DELETE FROM attempts WHERE last < ?", (now - FORGET_S,))
            wait = 0.0
            for k, free in keys:
                row = db.execute("SELECT failures, last FROM attempts WHERE key = ?", (k,)).fetchone()
                if row:
                    wait = max(wait, wait_after(row[0], free, now - row[1]))
            if wait == 0:
                for k, _ in keys:
                    db.execute(
                        "INSERT INTO attempts VALUES (?, 1, ?) ON CONFLICT(key) DO UPDATE "
                        "SET failures = failures + 1, last = excluded.last",
                        (k, now),
                    )
            db.execute("COMMIT")
            return wait
        finally:
            db.close()

    def clear(self, key: str) -> None:
        """Forget KEY's failures (its check succeeded)."""
        db = self._db()
        try:
            db.execute("DELETE FROM attempts WHERE key = ?", (key,))
        finally:
            db.close()

    def reset(self) -> None:
        """Forget every counter."""
        db = self._db()
        try:
            db.execute("DELETE FROM attempts")
        finally:
            db.close()


# the same step as SqliteCounters.reserve, run by Redis as one script (atomic for every client of that Redis)
_RESERVE_LUA = """
local now = tonumber(ARGV[1])
local wait = 0
for i, key in ipairs(KEYS) do
  local n = tonumber(redis.call('HGET', key, 'n') or '0')
  local last = tonumber(redis.call('HGET', key, 'last') or '0')
  local free = tonumber(ARGV[i + 1])
  if n >= free then
    local w = math.min(2 ^ (n - free), tonumber(ARGV[#ARGV])) - (now - last)
    if w > wait then wait = w end
  end
end
if wait <= 0 then
  for _, key in ipairs(KEYS) do
    redis.call('HINCRBY', key, 'n', 1)
    redis.call('HSET', key, 'last', ARGV[1])
    redis.call('EXPIRE', key, FORGET_S)
  end
  wait = 0
end
return tostring(wait)
""".replace("FORGET_S", str(FORGET_S))


class RedisCounters:
    """Counters in Redis (every worker on every machine that uses that Redis shares them)."""

    def __init__(self, url: str) -> None:
        self.redis: Any = redis.Redis.from_url(url)
        self.script = self.redis.register_script(_RESERVE_LUA)

    def reserve(self, keys: list[tuple[str, int]], now: float) -> float:
        """As SqliteCounters.reserve, in one Redis script."""
        names = [f"brokerage-auth:{k}" for k, _ in keys]
        return float(self.script(keys=names, args=[now, *(free for _, free in keys), MAX_WAIT_S]))

    def clear(self, key: str) -> None:
        """Forget KEY's failures."""
        self.redis.delete(f"brokerage-auth:{key}")

    def reset(self) -> None:
        """Forget every counter."""
        for name in self.redis.scan_iter("brokerage-auth:*"):
            self.redis.delete(name)


class AttemptLimiter:
    """Failed operator checks per (client address, name) and per client address, with waits that double.

    A stranger's failures count against the stranger's address only, so they cannot lock the owner of a name out.
    Usage: ``wait = limiter.reserve("10.0.0.1", "alice")``; 0 means check the secret, then ``succeeded(...)``
    """

    def __init__(self, counters: Counters) -> None:
        self.counters = counters

    def reserve(self, client: str, user: str) -> int:
        """Whole seconds CLIENT must wait before trying USER again (0: try now; the try is counted as failed)."""
        keys = [(_key("pair", client, user), PAIR_FREE), (_key("client", client), CLIENT_FREE)]
        wait = self.counters.reserve(keys, time.time())
        return math.ceil(wait) if wait > 0 else 0

    def succeeded(self, client: str, user: str) -> None:
        """The check of USER from CLIENT succeeded: that pair starts again from zero."""
        self.counters.clear(_key("pair", client, user))

    def reset(self) -> None:
        """Forget every counter (tests, or an operator unlocking after a known incident)."""
        self.counters.reset()


def counters_from(uri: str, default_dir: Path) -> Counters:
    """The counters of BROKERAGE_AUTH_LIMIT_STORAGE: redis://..., sqlite:///path, or '' for a file in DEFAULT_DIR.

    Usage: ``counters_from("redis://127.0.0.1:6379/0", Path("data/cache"))``
    """
    if uri.startswith(("redis://", "rediss://", "unix://")):
        return RedisCounters(uri)
    if uri.startswith("sqlite:///"):
        return SqliteCounters(Path(uri.removeprefix("sqlite:///")))
    if uri in ("", "memory://"):
        return SqliteCounters(default_dir / f"auth-attempts-{os.getuid()}.sqlite")
    raise SystemExit(f"BROKERAGE_AUTH_LIMIT_STORAGE: {uri!r} is not redis://host:port/db or sqlite:///path")
