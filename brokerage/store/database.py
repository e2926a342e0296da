"""Engines, the SQLite file's identity, and locking transactions (SQLite in WAL mode, or PostgreSQL)."""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Engine, event

from brokerage.store.errors import DatabaseFileError, StoreBusyError, StoreError, on_engine_error
from brokerage.store.models import SnapshotMeta

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SQLITE = REPO_ROOT / "data" / "brokerage.sqlite"
# a writer waits this long for another writer's lock, then gets a plain "busy" message: a server thread must
# not hang for half a minute (BROKERAGE_SQLITE_BUSY_MS overrides it, e.g. for long batch imports)
SQLITE_BUSY_TIMEOUT_MS = int(os.environ.get("BROKERAGE_SQLITE_BUSY_MS", "3000"))
# PostgreSQL advisory lock ids: writers of the same kind queue up, readers never wait.
_PG_LOCKS = {"grid": 7_310_001, "config": 7_310_002, "schema": 7_310_003, "sim": 7_310_004}

URL_HELP = "expected sqlite:///path/file.sqlite or postgresql+psycopg://user@host/db"


# --- engines ------------------------------------------------------------------------------------------------


def database_url() -> str:
    """DATABASE_URL from the environment, else the embedded SQLite file data/brokerage.sqlite.

    Usage: ``engine = make_engine(database_url())``
    """
    url = os.environ.get("DATABASE_URL", "").strip()
    return url or f"sqlite:///{DEFAULT_SQLITE}"


def display_url(url: str) -> str | None:
    """URL with its password hidden, fit for a message; None when it cannot be parsed (nothing of it is shown).

    Usage: ``display_url("postgresql://alice:secret@db/grid") == "postgresql://alice:***@db/grid"``
    """
    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except Exception:  # any unparsable URL: never print what might hold a password
        return None


def make_engine(url: str, *, create: bool = True) -> Engine:
    """An engine for URL: SQLite in WAL mode with foreign keys and a busy timeout, or PostgreSQL via psycopg 3.

    With ``create=False`` a missing SQLite file is a StoreError instead of a new empty database.
    Usage: ``engine = make_engine("sqlite:///data/brokerage.sqlite")``
    """
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    try:
        parsed = sa.make_url(url)
        backend = parsed.get_backend_name()
        if backend not in ("sqlite", "postgresql"):
            raise StoreError(f"DATABASE_URL: the {backend!r} database is not supported; {URL_HELP}")
        if backend == "sqlite":
            path = Path(parsed.database) if parsed.database and parsed.database != ":memory:" else None
            if path is not None and not create and not path.exists():
                raise DatabaseFileError(f"the database file {path} does not exist; create it with `brokerage db init`")
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            engine = sa.create_engine(parsed)
            _configure_sqlite(engine, path)
        else:
            engine = sa.create_engine(parsed, pool_pre_ping=True)
        event.listen(engine, "handle_error", on_engine_error)  # driver errors leave the store as StoreError
        return engine
    except sa.exc.ArgumentError as exc:  # never echo the URL: it may hold a password
        raise StoreError(f"DATABASE_URL is not a usable database URL ({str(exc).splitlines()[0]}); {URL_HELP}") from exc


@cache
def get_engine(url: str | None = None) -> Engine:
    """One shared engine per URL for a process (the dashboard); defaults to database_url().

    Usage: ``get_engine().dialect.name``
    """
    return make_engine(url or database_url())


# engine -> (file, (st_dev, st_ino)) when the engine first connected
_FILE_IDS: weakref.WeakKeyDictionary[Engine, tuple[Path, tuple[int, int]]] = weakref.WeakKeyDictionary()


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def check_database_file(engine: Engine) -> None:
    """Raise DatabaseFileError if ENGINE's SQLite file was deleted or replaced since the engine first opened it.

    A connection keeps writing into a deleted file's inode, so without this check saves would vanish silently.
    Usage: ``check_database_file(engine)`` before a write
    """
    known = _FILE_IDS.get(engine)
    if known is None:
        return
    path, ident = known
    now = _file_id(path)
    if now is None:
        raise DatabaseFileError(
            f"the database file {path} was deleted while the server was running; nothing was saved "
            "(restore the file or run `brokerage db init`, then restart the server)"
        )
    if now != ident:
        raise DatabaseFileError(
            f"the database file {path} was replaced while the server was running; nothing was saved "
            "(restart the server to use the new file)"
        )


def _configure_sqlite(engine: Engine, path: Path | None = None) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # pysqlite's own implicit BEGIN cannot be made IMMEDIATE; emit BEGIN ourselves (see _on_begin)
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")  # safe in WAL mode; full fsync per commit is not needed
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()
        if path is not None and engine not in _FILE_IDS and (ident := _file_id(path)) is not None:
            _FILE_IDS[engine] = (path, ident)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")


@contextmanager
def write_transaction(engine: Engine, lock: str = "grid") -> Iterator[Connection]:
    """A transaction that holds the write lock LOCK until commit: BEGIN IMMEDIATE on SQLite, an advisory
    transaction lock on PostgreSQL. Writers of one kind run one after another; readers are not blocked.

    Usage: ``with write_transaction(engine, "config") as conn: ...``
    """
    if engine.dialect.name == "sqlite":
        check_database_file(engine)
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            conn.execution_options(sqlite_begin="IMMEDIATE")
            check_database_file(engine)  # the first connect records the file; a reused one re-checks it
        try:
            tx = conn.begin()
        except sa.exc.OperationalError as exc:
            if "locked" in str(exc.orig) or "busy" in str(exc.orig):
                raise StoreBusyError() from exc
            raise
        with tx:
            if engine.dialect.name == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCKS[lock]})
            yield conn


@contextmanager
def read_transaction(engine: Engine) -> Iterator[Connection]:
    """A read-only transaction that sees one consistent state of every table.

    Usage: ``with read_transaction(engine) as conn: ...``
    """
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            yield conn


def schema_ready(engine: Engine) -> bool:
    """True if the schema exists (``brokerage db init`` has run).

    Usage: ``if not schema_ready(engine): upgrade(engine)``
    """
    return sa.inspect(engine).has_table(SnapshotMeta.__tablename__)
