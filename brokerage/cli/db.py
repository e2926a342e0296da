"""The ``db`` command group: schema, demo grid, import/export, and versioned gdpconfig editing."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from datetime import UTC
from typing import Any, NoReturn

import click

from brokerage.cli.common import chosen_vo
from brokerage.model.errors import BrokerageError
from brokerage.model.gdpconfig import REGISTRY, ConfigError, lookup_param
from brokerage.model.snapshot import SnapshotError
from brokerage.model.words import count
from brokerage.sim.task_states import TransitionError
from brokerage.store import config_store, database, errors, repository
from brokerage.store.database import Engine
from brokerage.store.importer import ImportFileError, import_file
from brokerage.store.schema import current_revision, head_revision, upgrade
from brokerage.synth.with_history import demo_grid

EXIT_USAGE = 2


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the core's errors into one stderr line and exit code 2, problem lists first (see cli/common.guarded)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with errors.database_errors():  # a database failure is a StoreError: "database error: <first line>"
                return fn(*args, **kwargs)
        except ImportFileError as exc:
            for problem in exc.problems:
                click.echo(f"  {problem}", err=True)
            _fail(f"{exc.source}: {count(len(exc.problems), 'problem')}; nothing imported")
        except (SnapshotError, TransitionError) as exc:
            for problem in exc.problems[1:]:
                click.echo(f"  {problem}", err=True)
            _fail(str(exc) if len(exc.problems) <= 1 else f"{len(exc.problems)} problems, the first: {exc.problems[0]}")
        except BrokerageError as exc:  # the store raises its database's errors as StoreError
            _fail(exc.line())

    return wrapper


def _engine(ctx: click.Context) -> Engine:
    engine: Engine | None = ctx.obj["engine"]
    if engine is None:  # refused when a subcommand first needs it, so `db SUBCOMMAND --help` works without a database
        _fail(ctx.obj["missing"])
    return engine


def _who(who: str | None) -> str:
    return who or os.environ.get("USER") or os.environ.get("LOGNAME") or "unknown"


@click.group("db")
@click.option(
    "--database-url",
    envvar="DATABASE_URL",
    default=None,
    metavar="URL",
    help="SQLAlchemy URL (default: $DATABASE_URL, else data/brokerage.sqlite)",
)
@click.pass_context
def db(ctx: click.Context, database_url: str | None) -> None:
    """The database: schema, demo grid, import/export and versioned gdpconfig."""
    url = database_url or database.database_url()
    ctx.ensure_object(dict)
    ctx.obj["url"] = url
    try:
        # only `db init` creates a database; every other subcommand refuses a missing file instead of making one
        ctx.obj["engine"] = database.make_engine(url, create=ctx.invoked_subcommand == "init")
    except (errors.DatabaseFileError, errors.StoreError) as exc:
        ctx.obj["engine"] = None  # `info` describes a missing file; any other subcommand fails in _engine
        ctx.obj["missing"] = str(exc)
        ctx.obj["no_file"] = isinstance(exc, errors.DatabaseFileError)
        return
    ctx.call_on_close(ctx.obj["engine"].dispose)


@db.command("init")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0), help="demo grid seed")
@click.pass_context
@_guarded
def init(ctx: click.Context, seed: int) -> None:
    """Create or upgrade the schema; fill an EMPTY database with the demo grid (never overwrites a grid)."""
    engine = _engine(ctx)
    before = current_revision(engine) if database.schema_ready(engine) else None
    upgrade(engine)
    shown = engine.url.render_as_string(hide_password=True)
    schema = "created the schema" if before is None else f"schema at revision {head_revision()}"
    if before is not None and before != head_revision():
        schema = f"upgraded the schema from {before} to {head_revision()}"
    if not repository.is_empty(engine):
        click.echo(f"{schema}; {shown} already holds grid {repository.snapshot_key(engine)}: left unchanged")
        return
    snap = demo_grid(seed)
    version = repository.save_snapshot(engine, snap, only_if_empty=True)
    if version is None:
        click.echo(f"{schema}; another process filled {shown} meanwhile: left unchanged")
        return
    t = snap.tables
    click.echo(
        f"{schema}; stored the demo grid {snap.snapshot_id} in {shown}: {len(t['queues'])} queues, "
        f"{len(t['sites'])} sites, {len(t['tasks'])} tasks, {len(t['task_status_log'])} status log entries"
    )


@db.command("info")
@click.pass_context
@_guarded
def info(ctx: click.Context) -> None:
    """Show the schema revision, the stored grid and the gdpconfig version."""
    if ctx.obj["engine"] is None and ctx.obj["no_file"]:
        click.echo(f"schema: none ({ctx.obj['missing']})")
        return
    engine = _engine(ctx)
    click.echo(f"database: {engine.url.render_as_string(hide_password=True)}")
    if not database.schema_ready(engine):
        click.echo("schema: none (run `brokerage db init`)")
        return
    click.echo(f"schema: revision {current_revision(engine)} (newest {head_revision()})")
    meta = repository.snapshot_meta(engine)
    grid = "none" if meta is None else f"{meta[0]}@{meta[1]} taken at {meta[2]:%Y-%m-%dT%H:%M:%SZ}"
    click.echo(f"grid: {grid}")
    click.echo(f"gdpconfig: version {config_store.current_version(engine)}")


@db.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.pass_context
@_guarded
def import_(ctx: click.Context, file: str) -> None:
    """Import a snapshot, CRIC queues, DDM endpoints or sites JSON file (all or nothing)."""
    engine = _engine(ctx)
    upgrade(engine)
    result = import_file(engine, file)
    click.echo(result.summary())
    for note in result.notes:
        click.echo(f"  note: {note}")


@db.command("export")
@click.argument("file", type=click.Path(dir_okay=False))
@click.pass_context
@_guarded
def export(ctx: click.Context, file: str) -> None:
    """Write the stored grid as a snapshot JSON file."""
    snap = repository.load_snapshot(_engine(ctx))
    try:
        snap.to_json(file)
    except OSError as exc:
        _fail(f"{file}: cannot write ({exc.strerror})")
    click.echo(f"wrote {file}: grid {snap.key}, {len(snap.tables['queues'])} queues, {len(snap.tables['tasks'])} tasks")


@db.command("versions")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.pass_context
@_guarded
def versions_(ctx: click.Context, as_json: bool) -> None:
    """List the stored grid versions, newest first; * marks the current one."""
    from brokerage.store.versions import list_versions

    found = list_versions(_engine(ctx))
    if as_json:
        click.echo(json.dumps({"versions": [v.to_dict() for v in found]}, indent=2))
        return
    if not found:
        click.echo("no grid stored yet")
        return
    for v in found:
        mark = "*" if v.current else " "
        size = f"{v.nbytes / 1e6:.1f} MB" if v.nbytes else "not archived yet"
        click.echo(
            f"{mark} v{v.version:<5} {v.snapshot_id:<28} taken {v.taken_at:%Y-%m-%dT%H:%M:%SZ}  "
            f"saved {v.saved_at:%Y-%m-%dT%H:%M:%SZ}  {size}"
        )
    current = next((v for v in found if v.current), None)
    if current is not None and current.version != found[0].version:
        click.echo(f"the current grid is v{current.version}, chosen over the newest v{found[0].version}")


@db.command("use")
@click.argument("version")
@click.pass_context
@_guarded
def use(ctx: click.Context, version: str) -> None:
    """Make grid VERSION (a number, or 'latest') the current one that commands and the dashboard read."""
    from brokerage.store.versions import use_version

    if version != "latest" and not version.isdigit():
        _fail(f"version: expected a version number or 'latest', not {version!r}")
    chosen = use_version(_engine(ctx), None if version == "latest" else int(version))
    click.echo(f"the current grid is now v{chosen}")


@db.command("prune")
@click.option("--keep", type=click.IntRange(1), default=None, help="keep the N newest versions")
@click.option("--older-than", "older_than", type=click.FloatRange(0), default=None, metavar="DAYS",
              help="delete versions saved more than DAYS ago")  # fmt: skip
@click.pass_context
@_guarded
def prune_(ctx: click.Context, keep: int | None, older_than: float | None) -> None:
    """Delete old grid versions by count or age (never the current one)."""
    from brokerage.store.versions import prune

    gone = prune(_engine(ctx), keep=keep, older_than_days=older_than)
    click.echo(
        f"deleted {count(len(gone), 'grid version')}" + (f": {', '.join(f'v{v}' for v in gone)}" if gone else "")
    )


@db.command("config-show")
@click.option("--vo", default=None, help="the VO whose rows are resolved (default: brokerage --vo, else atlas)")
@click.option("--all", "show_all", is_flag=True, help="every parameter, not only the stored ones")
@click.pass_context
@_guarded
def config_show(ctx: click.Context, vo: str | None, show_all: bool) -> None:
    """Show the stored gdpconfig (or every parameter with --all) and its version."""
    vo = vo or chosen_vo() or "atlas"
    config = config_store.load_config(_engine(ctx), vo=vo)
    click.echo(f"gdpconfig version {config.version} (vo {vo})")
    keys = list(config.effective()) if show_all else sorted(config.stored)
    # CONFIG rows brokerage does not read (e.g. imported from PanDA) are kept; say so instead of hiding them
    others = sorted(
        f"{r.app}/{r.component}/{r.key}" for r in config_store.config_rows(_engine(ctx)) if not _modelled(r.key)
    )
    if others:
        click.echo(f"not modelled (stored, not read by brokerage): {', '.join(others)}")
    if not keys:
        click.echo("no stored values: every parameter has its default (use --all to list them)")
        return
    click.echo(f"{'key':<40} {'component':<16} {'value':>14} {'default':>14}  source")
    for key in keys:
        param = lookup_param(key)
        source = "stored" if key in config.stored else "default"
        click.echo(f"{key:<40} {param.component:<16} {_fmt(config.get(key)):>14} {_fmt(param.default):>14}  {source}")


def _modelled(key: str) -> bool:
    try:
        lookup_param(key)
    except ConfigError:
        return False
    return True


def _fmt(value: Any) -> str:
    return "(unset)" if value is None else str(value)


@db.command("config-set")
@click.argument("assignments", nargs=-1, metavar="KEY=VALUE...")
@click.option("--unset", "unset", multiple=True, metavar="KEY", help="remove the stored value (back to the default)")
@click.option("--who", default=None, help="who makes the change (default: $USER)")
@click.option("--comment", default="", help="why")
@click.option(
    "--base-version",
    type=click.IntRange(0),
    default=None,
    help="the version you started from; refused if one of your keys changed since (default: the current one)",
)
@click.pass_context
@_guarded
def config_set(
    ctx: click.Context, assignments: tuple[str, ...], unset: tuple[str, ...], who: str | None, comment: str,
    base_version: int | None,
) -> None:  # fmt: skip
    """Store gdpconfig values as a new version (validated; refused on a concurrent change)."""
    engine = _engine(ctx)
    changes: dict[str, Any] = {}
    for item in assignments:
        if "=" not in item:
            raise ConfigError(item, "expected KEY=VALUE")
        key, raw = item.split("=", 1)
        changes[key.strip()] = raw
    for key in unset:
        lookup_param(key)
        changes[key] = None
    before = config_store.current_version(engine)
    base = before if base_version is None else base_version
    version = config_store.save_changes(engine, changes, _who(who), comment, base)
    if version == before:
        click.echo(f"nothing changed: gdpconfig stays at version {version}")
    else:
        click.echo(f"saved gdpconfig version {version}: {', '.join(sorted(changes))}")


@db.command("config-history")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1), help="newest versions to show")
@click.pass_context
@_guarded
def config_history(ctx: click.Context, limit: int) -> None:
    """List gdpconfig versions, newest first, with the keys each one changed."""
    records = config_store.history(_engine(ctx))
    if not records:
        click.echo("no gdpconfig versions yet")
        return
    for rec in records[:limit]:
        when = rec.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        click.echo(f"version {rec.version} (from {rec.parent_version}) by {rec.who} at {when}: {rec.comment}")
        for ch in rec.changes:
            vo = f"@{ch.vo}" if ch.vo else ""
            click.echo(f"  {ch.component}/{ch.key}{vo}: {_fmt(ch.old_value)} -> {_fmt(ch.new_value)}")


@db.command("config-diff")
@click.argument("a", type=click.IntRange(0))
@click.argument("b", type=click.IntRange(0))
@click.option("--vo", default="atlas", show_default=True)
@click.pass_context
@_guarded
def config_diff(ctx: click.Context, a: int, b: int, vo: str) -> None:
    """Show the keys whose stored value differs between versions A and B."""
    diff = config_store.diff_versions(_engine(ctx), a, b, vo)
    if not diff:
        click.echo(f"versions {a} and {b} store the same values")
    for key, (old, new) in diff.items():
        default = REGISTRY[key].default if key in REGISTRY else None
        click.echo(f"{key}: {_fmt(old)} -> {_fmt(new)}   (default {_fmt(default)})")


@db.command("config-restore")
@click.argument("version", type=click.IntRange(0))
@click.option("--who", default=None, help="who restores (default: $USER)")
@click.option("--comment", default="", help="why")
@click.pass_context
@_guarded
def config_restore(ctx: click.Context, version: int, who: str | None, comment: str) -> None:
    """Make a new gdpconfig version with the values of VERSION."""
    engine = _engine(ctx)
    before = config_store.current_version(engine)
    new = config_store.restore_version(engine, version, _who(who), comment)
    if new == before:
        click.echo(f"version {before} already stores the values of version {version}; nothing changed")
    else:
        click.echo(f"saved gdpconfig version {new} with the values of version {version}")
