"""The store's errors: what it refuses, and database failures turned into one message at its boundary.

StoreError is the core's (brokerage/model/errors.py): every error here is one of the tree's, and SQLAlchemy's
errors leave the store only as DatabaseError or StoreBusyError (``database_errors``, and every engine made by
``database.make_engine`` through ``on_engine_error``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from brokerage.model.errors import StoreError


class DatabaseFileError(StoreError):
    """The SQLite file is missing, or was deleted or replaced under a running process: writes are refused."""


class StoreBusyError(StoreError):
    """Another writer held the database lock longer than the busy timeout."""

    def __init__(self) -> None:
        super().__init__("the database is busy with another write; nothing was saved, try again in a moment")


class DatabaseError(StoreError):
    """The database failed an operation (unreachable server, refused statement, driver error)."""


def first_line(exc: BaseException) -> str:
    """The first line of the driver's message for a database error (SQLAlchemy adds SQL and links below it)."""
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip()
    return text.splitlines()[0] if text else type(orig).__name__


def database_error(exc: BaseException) -> StoreError:
    """EXC (a SQLAlchemy or driver error) as the tree's StoreError: busy when a lock timed out, else
    DatabaseError("database error: <first line>").

    Usage: ``raise database_error(exc) from exc``
    """
    first = first_line(exc)
    if "database is locked" in first or "database is busy" in first:
        return StoreBusyError()
    return DatabaseError(f"database error: {first}")


@contextmanager
def database_errors() -> Iterator[None]:
    """Raise any SQLAlchemy error inside the block as the tree's StoreError (``database_error``); also a decorator
    (``@database_errors()``).

    Usage: ``with database_errors(): engine = make_engine(url); load_snapshot(engine)``
    """
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        raise database_error(exc) from exc


def on_engine_error(ctx: sa.engine.ExceptionContext) -> None:
    """The engines' ``handle_error`` hook: every driver error, on connect or execute, raised as a StoreError
    (pre-pings aside: the pool handles those itself)."""
    if ctx.is_pre_ping:
        return
    raise database_error(ctx.sqlalchemy_exception or ctx.original_exception) from ctx.sqlalchemy_exception
