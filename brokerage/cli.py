"""The ``brokerage`` command: demo grids, job and nucleus brokerage, reports, database; plugins add more (serve)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from brokerage.runs.options import cluster_options
from brokerage.words import count

if TYPE_CHECKING:
    from brokerage.explain import Decision
    from brokerage.gdpconfig import Config
    from brokerage.snapshot import GridSnapshot

EXIT_USAGE = 2


def fail(message: str) -> NoReturn:
    """Print one clear line to stderr and exit with status 2."""
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the core's validation errors into one stderr line and exit code 2."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # imported when a command runs, so `brokerage --version` and `--help` start without numpy and pandas
        from brokerage.checks.software import ArchitectureError
        from brokerage.gdpconfig import ConfigError
        from brokerage.snapshot import SnapshotError

        try:
            return fn(*args, **kwargs)
        except SnapshotError as exc:
            fail(str(exc))
        except ConfigError as exc:
            fail(exc.line())
        except KeyError as exc:
            fail(str(exc.args[0]) if exc.args else str(exc))
        except ArchitectureError as exc:
            fail(f"malformed task architecture: {exc}")

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def load_grid(snapshot: str | None) -> tuple[GridSnapshot, Config]:
    """The snapshot file if given, else the database at DATABASE_URL (with its stored gdpconfig)."""
    from brokerage.gdpconfig import Config
    from brokerage.snapshot import GridSnapshot

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
    from brokerage.gdpconfig import check_family_members, parse_assignments

    overrides = parse_assignments(assignments)
    check_family_members(overrides, lambda table, column: set(snap.tables[table][column]))
    return overrides


CORE_COMMANDS: dict[str, tuple[str, str]] = {
    "db": ("brokerage.store.cli:db", "The database: schema, demo grid, import/export and versioned gdpconfig."),
    "nucleus": ("brokerage.brokers.nucleus_cli:nucleus", "Choose a nucleus for a production task and explain it."),
    "report": ("brokerage.report.cli:report", "Export the brokerage of tasks or of every waiting task."),
    "dirac": ("brokerage.dirac.cli:dirac", "DIRAC task-queue matching (seed 004): task queues and pilot matches."),
    "diff": ("brokerage.diff.cli:diff", "Which tasks' brokerage changed between two grid versions, and why."),
    "simulate": ("brokerage.sim.cli:simulate", "Move the grid forward in time: jobs, timeouts, throttling, tasks."),
    "sim-runs": ("brokerage.sim.cli:sim_runs", "List the simulation runs stored in the database, or show one."),
    "tasks": ("brokerage.tasks_cli:tasks", "List tasks by status, label, user or name (find ids for jobs/explain)."),
}
"""The core's subcommands by name, with their one-line help; each module is imported when its command is used (a
broken one fails that command loudly, never silently vanishes), so `brokerage --help` stays light."""
PLUGIN_GROUP = "brokerage.commands"  # entry points adding subcommands from other packages (the app adds `serve`)


SNAPSHOT_COMMANDS: dict[str, tuple[str, str]] = {
    "from-panda": ("brokerage.store.panda_cli:from_panda", "Build a snapshot from a PanDA database, read-only."),
    "pull": ("brokerage.store.panda_cli:pull", "Store a new grid version from a PanDA database every interval."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are listed by name here and imported on first use; ``brokerage`` itself also
    loads the ``brokerage.commands`` entry-point plugins the same way (a broken one raises, never vanishes)."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]], plugins: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy
        self.plugins = plugins

    def list_commands(self, ctx: click.Context) -> list[str]:
        plugins = [ep.name for ep in entry_points(group=self.plugins)] if self.plugins else []
        return sorted({*super().list_commands(ctx), *self.lazy, *plugins})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        own = super().get_command(ctx, name)
        if own is not None:
            return own
        if name in self.lazy:
            module, attr = self.lazy[name][0].split(":")
            return getattr(import_module(module), attr)
        if self.plugins:
            for ep in entry_points(group=self.plugins, name=name):
                return ep.load()
        return None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help`` without importing the lazy subcommands."""
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy and name not in self.commands:
                rows.append((name, self.lazy[name][1]))
            else:
                cmd = self.get_command(ctx, name)
                if cmd is not None and not cmd.hidden:
                    rows.append((name, cmd.get_short_help_str(formatter.width - 6 - len(name))))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, lazy=CORE_COMMANDS, plugins=PLUGIN_GROUP)
@click.version_option(package_name="brokerage-dashboard")
def main() -> None:
    """See, explain and tune PanDA/JEDI-style brokerage."""


@main.group(cls=LazyGroup, lazy=SNAPSHOT_COMMANDS)
def snapshot() -> None:
    """Grid snapshots: demo grids, schema, validation, a PanDA database."""


@snapshot.command("demo")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="where to write the JSON")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--queues", default=700, show_default=True, type=click.IntRange(1, 200000))
@click.option("--tasks", default=3000, show_default=True, type=click.IntRange(0, 200000))
@click.option("--later", type=click.IntRange(0), default=None, metavar="SEED",
              help="the same grid as a pull 10 minutes later (moved link backlogs, job counts, disk space, one queue)")  # fmt: skip
@guarded
def snapshot_demo(out: str, seed: int, queues: int, tasks: int, later: int | None) -> None:
    """Write a realistic demo grid (deterministic from --seed)."""
    from brokerage.synth import demo_snapshot

    snap = demo_snapshot(seed=seed, queues=queues, tasks=tasks)
    if later is not None:
        from brokerage.diff.drift import later as pulled_later

        snap = pulled_later(snap, seed=later)
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
    from brokerage.snapshot import GridSnapshot, SnapshotError

    try:
        snap = GridSnapshot.from_json(file)
    except SnapshotError as exc:
        for p in exc.problems:
            click.echo(p, err=True)
        fail(f"{file}: {count(len(exc.problems), 'problem')}")
    click.echo(f"{file}: valid ({len(snap.queues)} queues, {len(snap.tasks)} tasks)")


def _print_decision(decision: Decision, as_json: bool, versions: dict[str, Any] | None = None) -> None:
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
        for code, n in sorted(decision.criteria_counts().items(), key=lambda kv: -kv[1]):
            click.echo(f"  {code:<24} {n}")
    if decision.notes:
        click.echo(
            f"\n{count(len(decision.notes), 'note')}, e.g. {decision.notes[0].candidate}: {decision.notes[0].text}"
        )
    if decision.pending_minutes is not None:
        click.echo(f"\nthe task is pending for {decision.pending_minutes} min")
    if versions:
        click.echo(f"\nsnapshot {versions['snapshot_version']}, gdpconfig {versions['config_version']}")


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
    from brokerage.gdpconfig import parse_assignments
    from brokerage.versions import stamp

    parse_assignments(assignments)  # bad --set values fail before the grid is loaded
    snap, config = load_grid(snapshot_path)
    config = config.with_overrides(grid_overrides(snap, assignments))
    decision = run_job_brokerage(snap, task_id, config)
    _print_decision(decision, as_json, stamp(snap, config))


@main.command("explain")
@click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False), help="snapshot JSON (default: DB)")
@click.option("--task", "task_id", required=True, type=int, help="jediTaskID")
@click.option("--queue", "queue", default=None, help="the PanDA queue to explain (job brokerage)")
@click.option("--nucleus", "nucleus", default=None, help="the nucleus to explain (task brokerage)")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help=_SET_HELP)
@click.option("--no-grid", is_flag=True, help="skip counting the other tasks each gdpconfig lever would change")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@cluster_options
@guarded
def explain(
    snapshot_path: str | None, task_id: int, queue: str | None, nucleus: str | None, assignments: tuple[str, ...],
    no_grid: bool, as_json: bool,
) -> None:  # fmt: skip
    """Where a queue (or a nucleus) stands for a task and the verified levers that would change it."""
    if (queue is None) == (nucleus is None):
        fail("give exactly one of --queue NAME (job brokerage) or --nucleus NAME (task brokerage)")
    from brokerage import runs
    from brokerage.cache import GridCache
    from brokerage.gdpconfig import parse_assignments
    from brokerage.levers import explain_queue
    from brokerage.whatif import top_changed_count

    parse_assignments(assignments)  # bad --set values fail before the grid is loaded
    snap, stored = load_grid(snapshot_path)
    config = stored.with_overrides(grid_overrides(snap, assignments))
    cache = GridCache(snap)
    count = None
    if not no_grid:  # whole-grid runs go through the Dask engine (in-process below its size threshold)
        base = runs.run_grid(snap, config, cache=cache)

        def count(cfg: Config) -> int:
            return top_changed_count(snap, base, config, cfg, exclude=task_id, run_with=runs.run_grid, cache=cache)

    if nucleus is not None:
        from brokerage.levers_nucleus import explain_nucleus

        out = explain_nucleus(snap, task_id, nucleus, config, cache=cache, count_grid=count)
    else:
        out = explain_queue(snap, task_id, str(queue), config, cache=cache, count_grid=count)
    if as_json:
        click.echo(json.dumps(out.to_dict(), indent=2, default=str))
        return
    where = f"rank {out.rank} (weight {out.weight:.4g})" if out.rank else out.status
    label = "nucleus" if nucleus is not None else "queue"
    click.echo(f"task {out.task}, {label} {out.queue} ({out.broker} brokerage): {where}")
    for b in out.blocking:
        click.echo(f"  blocked by the {b['stage']} ({b['criteria']}): {b['reason']}")
    for note in out.notes:
        click.echo(f"  note: {note}")
    if not out.levers:
        click.echo("  no single lever found that would change this")
    for lever in out.levers:
        what = (
            f"{lever.key}={lever.value}"
            if lever.kind == "gdpconfig"
            else f"{lever.table}.{lever.field}[{lever.row}]={lever.value}"
        )
        others = (
            ""
            if lever.other_tasks_changed is None
            else f"; {count(lever.other_tasks_changed, 'other task')} change top"
        )
        click.echo(f"  lever {what}: {lever.effect}{others}")
    click.echo(f"  snapshot {out.snapshot_version}, gdpconfig {out.config_version}")
