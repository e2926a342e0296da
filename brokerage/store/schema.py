"""Create or upgrade the database schema with the Alembic migrations shipped in brokerage/store/migrations."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from brokerage.store.database import make_engine, write_transaction

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def alembic_config(url: str | None = None) -> AlembicConfig:
    """An Alembic configuration built in code (no alembic.ini): script location and, optionally, the URL.

    Usage: ``command.history(alembic_config())``
    """
    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if url:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def head_revision() -> str:
    """The newest migration revision.

    Usage: ``head_revision() == "0001"``
    """
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    return head or ""


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (None: never migrated).

    Usage: ``current_revision(engine) == head_revision()``
    """
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine_or_url: Engine | str, revision: str = "head") -> None:
    """Create the schema or bring it up to REVISION; safe to run on an up-to-date database.

    Usage: ``upgrade(make_engine(database_url()))``
    """
    if isinstance(engine_or_url, str):
        engine = make_engine(engine_or_url)
        try:
            upgrade(engine, revision)
        finally:
            engine.dispose()
        return
    cfg = alembic_config()
    # under the schema write lock, so two `db init` at once cannot both try to create the tables
    with write_transaction(engine_or_url, "schema") as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
