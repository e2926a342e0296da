"""Helpers every command group shares: one-line failures, the core's errors as exit 2, the grid to work on."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import click

from brokerage.model.errors import BrokerageError, status_of
from brokerage.model.words import count

if TYPE_CHECKING:
    from brokerage.model.explain import Decision
    from brokerage.model.gdpconfig import Config
    from brokerage.model.snapshot import GridSnapshot

EXIT_USAGE = 2
# the exit status of each error of the core's tree (brokerage/model/errors.py), nearest class first: every refusal
# of what a person gave (input, gdpconfig, a database that cannot answer, a simulation it cannot run) exits 2
EXIT_CODES: dict[type[BaseException], int] = {BrokerageError: EXIT_USAGE}
SKIPPED_SHOWN = 3  # queues named per criteria code in text output, as JEDI's log lines name them


def fail(message: str, status: int = EXIT_USAGE) -> NoReturn:
    """Print one clear line to stderr and exit with STATUS (2: the input was refused)."""
    click.echo(f"error: {message}", err=True)
    sys.exit(status)


def fail_with(exc: BrokerageError) -> NoReturn:
    """Say EXC in its one line and exit with its status from EXIT_CODES.

    Usage: ``except BrokerageError as exc: fail_with(exc)``
    """
    fail(exc.line(), status_of(exc, EXIT_CODES, EXIT_USAGE))


def guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn every error of the core's tree into one stderr line and its exit code (EXIT_CODES)."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BrokerageError as exc:
            fail_with(exc)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def chosen_vo() -> str | None:
    """The root command's --vo (None when not given or outside a command)."""
    ctx = click.get_current_context(silent=True)
    return ctx.find_root().params.get("vo") if ctx is not None else None


def load_grid(snapshot: str | None) -> tuple[GridSnapshot, Config]:
    """The snapshot file if given, else the database at DATABASE_URL with its stored gdpconfig of the VO (--vo, else
    the grid's tasks' VO, else atlas)."""
    from brokerage.brokers.router import grid_vo
    from brokerage.model.gdpconfig import Config
    from brokerage.model.snapshot import GridSnapshot

    if snapshot:
        snap = GridSnapshot.from_json(snapshot)
        return snap, Config(vo=chosen_vo() or grid_vo(snap))
    from brokerage.store import database, errors, repository
    from brokerage.store.config_store import load_config

    try:
        with errors.database_errors():  # a database failure is a StoreError: "database error: <first line>"
            engine = database.make_engine(database.database_url(), create=False)
            if repository.is_empty(engine):
                fail("the database holds no grid; run `brokerage db init` or pass --snapshot")
            snap = repository.load_snapshot(engine)
            return snap, load_config(engine, vo=chosen_vo() or grid_vo(snap))
    except BrokerageError as exc:  # the store raises its database's errors as StoreError
        fail_with(exc)


def grid_overrides(snap: GridSnapshot, assignments: tuple[str, ...]) -> dict[str, Any]:
    """Parse ``--set KEY=VALUE`` items and check that family keys (DISK_THRESHOLD_<gshare>) name one of SNAP's;
    one ConfigError names every refused item.

    Usage: ``config.with_overrides(grid_overrides(snap, ("DISK_THRESHOLD_Analysis=50",)))``
    """
    from brokerage.model.gdpconfig import parse_assignments

    return parse_assignments(assignments, members=lambda table, column: set(snap.tables[table][column]))


def print_decision(decision: Decision, as_json: bool, versions: dict[str, Any] | None = None) -> None:
    """A decision as text (ranked candidates, funnel, skip counts) or, with AS_JSON, one JSON object."""
    versions = versions or {}
    if as_json:
        click.echo(json.dumps({**decision.to_dict(), **versions}, indent=2, default=str))
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
        names: dict[str, list[str]] = {}
        for s in decision.skipped:
            names.setdefault(s.criteria, []).append(s.candidate)
        for code, n in sorted(decision.criteria_counts().items(), key=lambda kv: (-kv[1], kv[0])):
            shown = names.get(code, [])[:SKIPPED_SHOWN]
            more = f" and {n - len(shown)} more" if n > len(shown) else ""
            click.echo(f"  {code:<24} {n:>5}  {', '.join(shown)}{more}")
    if decision.notes:
        click.echo(
            f"\n{count(len(decision.notes), 'note')}, e.g. {decision.notes[0].candidate}: {decision.notes[0].text}"
        )
    if decision.pending_minutes is not None:
        click.echo(f"\nthe task is pending for {decision.pending_minutes} min")
    if versions:
        click.echo(f"\nsnapshot {versions['snapshot_version']}, gdpconfig {versions['config_version']}")


SET_HELP = "what-if gdpconfig override KEY=VALUE (repeatable)"
