"""The ``brokerage`` command: demo grids, job and nucleus brokerage, reports, database; plugins add more (serve)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, NoReturn

import click

from brokerage.checks.software import ArchitectureError
from brokerage.explain import Decision
from brokerage.gdpconfig import Config, ConfigError, check_family_members, parse_assignments
from brokerage.snapshot import GridSnapshot, SnapshotError

EXIT_USAGE = 2


def fail(message: str) -> NoReturn:
    """Print one clear line to stderr and exit with status 2."""
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the core's validation errors into one stderr line and exit code 2."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except SnapshotError as exc:
            fail(str(exc))
        except ConfigError as exc:
            fail(f"bad gdpconfig value: {exc}")
        except KeyError as exc:
            fail(str(exc.args[0]) if exc.args else str(exc))
        except ArchitectureError as exc:
            fail(f"malformed task architecture: {exc}")

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def load_grid(snapshot: str | None) -> tuple[GridSnapshot, Config]:
    """The snapshot file if given, else the database at DATABASE_URL (with its stored gdpconfig)."""
    if snapshot:
        return GridSnapshot.from_json(snapshot), Config()
    from sqlalchemy.exc import SQLAlchemyError

    from brokerage.store import repository
    from brokerage.store.config_store import load_config

    try:
        engine = repository.make_engine(repository.database_url(), create=False)
        if repository.is_empty(engine):
            fail("the database holds no grid; run `brokerage db init` or pass --snapshot")
        return repository.load_snapshot(engine), load_config(engine)
    except repository.StoreError as exc:
        fail(str(exc))
    except SQLAlchemyError as exc:
        orig = getattr(exc, "orig", None) or exc
        fail(f"database error: {str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__}")


def grid_overrides(snap: GridSnapshot, assignments: tuple[str, ...]) -> dict[str, Any]:
    """Parse ``--set KEY=VALUE`` items and check that family keys (DISK_THRESHOLD_<gshare>) name one of SNAP's.

    Usage: ``config.with_overrides(grid_overrides(snap, ("DISK_THRESHOLD_Analysis=50",)))``
    """
    overrides = parse_assignments(assignments)
    check_family_members(overrides, lambda table, column: set(snap.tables[table][column]))
    return overrides


@click.group()
@click.version_option(package_name="brokerage-dashboard")
def main() -> None:
    """See, explain and tune PanDA/JEDI-style brokerage."""


@main.group()
def snapshot() -> None:
    """Grid snapshots: demo grids, schema, validation."""


@snapshot.command("demo")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="where to write the JSON")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--queues", default=700, show_default=True, type=click.IntRange(1, 200000))
@click.option("--tasks", default=3000, show_default=True, type=click.IntRange(0, 200000))
@guarded
def snapshot_demo(out: str, seed: int, queues: int, tasks: int) -> None:
    """Write a realistic demo grid (deterministic from --seed)."""
    from brokerage.synth import demo_snapshot

    snap = demo_snapshot(seed=seed, queues=queues, tasks=tasks)
    snap.to_json(out)
    click.echo(f"wrote {out}: {len(snap.queues)} queues, {len(snap.sites)} sites, {len(snap.tasks)} tasks", err=True)


@snapshot.command("schema")
@click.option("--out", "out", type=click.Path(dir_okay=False), help="file to write (default: stdout)")
def snapshot_schema(out: str | None) -> None:
    """Print the JSON Schema of snapshot files."""
    from brokerage.snapshot import json_schema

    text = json.dumps(json_schema(), indent=2)
    if out:
        Path(out).write_text(text + "\n")
    else:
        click.echo(text)


@snapshot.command("validate")
@click.argument("file", type=click.Path(dir_okay=False))
def snapshot_validate(file: str) -> None:
    """Check a snapshot file and list every problem."""
    try:
        snap = GridSnapshot.from_json(file)
    except SnapshotError as exc:
        for p in exc.problems:
            click.echo(p, err=True)
        fail(f"{file}: {len(exc.problems)} problem(s)")
    click.echo(f"{file}: valid ({len(snap.queues)} queues, {len(snap.tasks)} tasks)")


def _print_decision(decision: Decision, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(decision.to_dict(), indent=2, default=str))
        return
    label = decision.label
    click.echo(f"{decision.broker} brokerage of task {decision.task}: {decision.status}")
    if decision.message:
        click.echo(f"  {decision.message}")
    if decision.candidates:
        keys = list(decision.candidates[0].factors)
        extra = ["probability"] if "probability" in decision.candidates[0].details else []
        header = f"{'rank':>4}  {label:<28} {'weight':>12} " + " ".join(f"{k:>10}" for k in keys + extra)
        click.echo(header)
        for c in decision.candidates:
            cols = [f"{c.factors[k]:>10.4g}" for k in keys] + [f"{c.details[k]:>10.3f}" for k in extra]
            click.echo(f"{c.rank:>4}  {c.name:<28} {c.weight:>12.5g} " + " ".join(cols))
    click.echo("")
    for line in decision.summary_lines():
        click.echo(line)
    if decision.skipped:
        click.echo("")
        click.echo("skipped by criteria:")
        for code, n in sorted(decision.criteria_counts().items(), key=lambda kv: -kv[1]):
            click.echo(f"  {code:<24} {n}")
    if decision.notes:
        click.echo(f"\n{len(decision.notes)} note(s), e.g. {decision.notes[0].candidate}: {decision.notes[0].text}")
    if decision.pending_minutes is not None:
        click.echo(f"\nthe task is pending for {decision.pending_minutes} min")


_SET_HELP = "what-if gdpconfig override KEY=VALUE (repeatable)"


@main.command("jobs")
@click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False), help="snapshot JSON (default: DB)")
@click.option("--task", "task_id", required=True, type=int, help="jediTaskID")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help=_SET_HELP)
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@guarded
def jobs(snapshot_path: str | None, task_id: int, assignments: tuple[str, ...], as_json: bool) -> None:
    """Run the job brokerage for a task (production or analysis, by its prodSourceLabel)."""
    from brokerage.brokers.router import run_job_brokerage

    parse_assignments(assignments)  # bad --set values fail before the grid is loaded
    snap, config = load_grid(snapshot_path)
    decision = run_job_brokerage(snap, task_id, config.with_overrides(grid_overrides(snap, assignments)))
    _print_decision(decision, as_json)


# The core's subcommands, imported normally: a broken one fails `brokerage` loudly instead of vanishing.
# They import this module's helpers only when they run, so importing them here is not circular.
from brokerage.brokers.nucleus_cli import nucleus  # noqa: E402
from brokerage.dirac.cli import dirac  # noqa: E402
from brokerage.report.cli import report  # noqa: E402
from brokerage.store.cli import db  # noqa: E402

CORE_COMMANDS: tuple[click.Command, ...] = (db, nucleus, report, dirac)
PLUGIN_GROUP = "brokerage.commands"  # entry points adding subcommands from other packages (the app adds `serve`)


def register_commands(group: click.Group) -> None:
    """Add the core's subcommands and every ``brokerage.commands`` entry point to GROUP (a broken one raises).

    Usage: ``register_commands(main)``
    """
    for command in CORE_COMMANDS:
        group.add_command(command)
    for ep in entry_points(group=PLUGIN_GROUP):
        group.add_command(ep.load(), ep.name)


register_commands(main)
