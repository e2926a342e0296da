"""`brokerage snapshot from-panda` and `brokerage snapshot pull`: read a PanDA database (read-only) into the store."""

from __future__ import annotations

import re
import sys
import time
from datetime import UTC, datetime
from typing import NoReturn

import click

from brokerage.cli.common import chosen_vo
from brokerage.model.errors import BrokerageError
from brokerage.model.snapshot import SnapshotError
from brokerage.model.words import count
from brokerage.store import database, errors
from brokerage.store.panda_db import PandaSchemaError, read_panda, store_panda

EXIT_USAGE = 2
_DURATION = re.compile(r"^(\d+)\s*([smhd]?)$")
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_every(text: str) -> int:
    """Seconds in a duration such as 90s, 10m, 1h (a bare number is seconds).

    Usage: ``parse_every("10m") == 600``
    """
    found = _DURATION.match(text.strip())
    if not found or int(found.group(1)) == 0:
        raise click.BadParameter(f"{text!r}: expected a duration like 30s, 10m or 1h")
    return int(found.group(1)) * _SECONDS[found.group(2)]


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _pull_once(
    url: str, schema: str | None, meta: str | None, database_url: str | None, out: str | None, vo: str | None = None
) -> None:
    """Read the PanDA database once and write the snapshot to OUT or store it; errors exit 2 (nothing stored)."""
    try:
        with errors.database_errors():  # a database failure is a StoreError: "database error: <first line>"
            grid = read_panda(url, schema, meta, vo or chosen_vo())
            if out:
                grid.snapshot.to_json(out)
                click.echo(f"wrote {out}: {len(grid.snapshot.queues)} queues, {len(grid.snapshot.tasks)} tasks "
                           f"from {grid.snapshot.snapshot_id} (CONFIG not written; use --store)")  # fmt: skip
                notes = grid.notes
            else:
                engine = database.make_engine(database_url or database.database_url())
                try:
                    stored = store_panda(engine, grid)
                finally:
                    engine.dispose()
                click.echo(
                    f"stored grid version {stored.grid_version} ({len(grid.snapshot.queues)} queues, "
                    f"{len(grid.snapshot.tasks)} tasks, taken {grid.snapshot.taken_at:%Y-%m-%dT%H:%M:%SZ}) and gdpconfig "
                    f"version {stored.config_version}"
                )
                if stored.not_modelled:
                    click.echo(
                        f"  not modelled (kept in CONFIG, not read by brokerage): {', '.join(stored.not_modelled)}"
                    )
                notes = stored.notes
            for note in notes:
                click.echo(f"  note: {note}")
    except PandaSchemaError as exc:
        for problem in exc.problems:
            click.echo(f"  {problem}", err=True)
        _fail(f"{count(len(exc.problems), 'problem')} in the PanDA database; nothing stored")
    except SnapshotError as exc:
        for problem in exc.problems:
            click.echo(f"  {problem}", err=True)
        _fail(f"the PanDA data makes no valid grid ({count(len(exc.problems), 'problem')}); nothing stored")
    except BrokerageError as exc:  # the store raises the databases' errors as StoreError
        _fail(exc.line())
    except OSError as exc:
        _fail(f"{out}: cannot write ({exc.strerror})")


_URL_HELP = "the PanDA database, e.g. postgresql+psycopg://reader@host/panda (opened read-only)"
_SCHEMA_HELP = "schema of PanDA's tables, e.g. doma_panda (DOMA_PANDA as PanDA's config templates write it works too)"
_META_HELP = "schema of SiteData, e.g. doma_pandameta (default: --schema if it holds sitedata, else the one found)"
_VO_HELP = "read only this VO's tasks and job counts (JEDI counts per VO; default: brokerage --vo, else every VO)"


@click.command("from-panda")
@click.option("--url", required=True, metavar="URL", help=_URL_HELP)
@click.option("--schema", default=None, help=_SCHEMA_HELP)
@click.option("--meta-schema", "meta", default=None, help=_META_HELP)
@click.option("--vo", default=None, help=_VO_HELP)
@click.option("--out", default=None, type=click.Path(dir_okay=False), help="write the snapshot JSON here")
@click.option("--store", "store", is_flag=True, help="store it as a new grid version and CONFIG as a gdpconfig version")
@click.option("--database-url", envvar="DATABASE_URL", default=None, metavar="URL", help="where --store writes")
def from_panda(
    url: str, schema: str | None, meta: str | None, vo: str | None, out: str | None, store: bool,
    database_url: str | None,
) -> None:  # fmt: skip
    """Build a snapshot from a PanDA database's own tables; it never writes to that database."""
    if bool(out) == store:
        _fail("give exactly one of --out FILE or --store")
    _pull_once(url, schema, meta, database_url, out, vo)


@click.command("pull")
@click.option("--url", required=True, metavar="URL", help=_URL_HELP)
@click.option("--schema", default=None, help=_SCHEMA_HELP)
@click.option("--meta-schema", "meta", default=None, help=_META_HELP)
@click.option("--vo", default=None, help=_VO_HELP)
@click.option("--every", "every", default="10m", show_default=True, help="time between pulls: 30s, 10m, 1h")
@click.option("--times", default=0, type=click.IntRange(0), help="stop after N pulls (0 = run until stopped)")
@click.option("--database-url", envvar="DATABASE_URL", default=None, metavar="URL", help="where the grid is stored")
def pull(
    url: str, schema: str | None, meta: str | None, vo: str | None, every: str, times: int, database_url: str | None
) -> None:
    """Store a new grid version from the PanDA database every --every (the dashboard offers each new one)."""
    seconds = parse_every(every)
    done = 0
    while True:
        click.echo(f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ} pull {done + 1}")
        try:
            _pull_once(url, schema, meta, database_url, None, vo)
        except SystemExit:
            if times == 1:
                raise
            click.echo("  the pull failed; the stored grid is unchanged, trying again later", err=True)
        done += 1
        if times and done >= times:
            return
        time.sleep(seconds)
