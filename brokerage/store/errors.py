"""The store's errors: what it refuses, and database failures turned into one message at its boundary."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa


class StoreError(ValueError):
    """A store operation refers to something the database does not hold."""


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


@contextmanager
def database_errors() -> Iterator[None]:
    """Raise any SQLAlchemy error inside the block as DatabaseError("database error: <first line>").

    Usage: ``with database_errors(): engine = make_engine(url); load_snapshot(engine)``
    """
    try:
        yield
    except sa.exc.SQLAlchemyError as exc:
        raise DatabaseError(f"database error: {first_line(exc)}") from exc
