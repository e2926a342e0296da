"""The ``brokerage`` command: demo grids, job and nucleus brokerage, reports, database; plugins add more (serve)."""

from __future__ import annotations

import json
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import click

from brokerage.cli.common import fail, guarded
from brokerage.model.profiles import PROFILE_NAMES
from brokerage.model.words import count

CORE_COMMANDS: dict[str, tuple[str, str]] = {
    "jobs": ("brokerage.cli.jobs:jobs", "Run the job brokerage for a task (production or analysis, by its label)."),
    "explain": (
        "brokerage.cli.jobs:explain",
        "Where a queue or nucleus stands for a task, and the levers that would change it.",
    ),
    "db": ("brokerage.cli.db:db", "The database: schema, demo grid, import/export and versioned gdpconfig."),
    "nucleus": ("brokerage.cli.nucleus:nucleus", "Choose a nucleus for a production task and explain it."),
    "report": ("brokerage.cli.report:report", "Export the brokerage of tasks or of every waiting task."),
    "dirac": ("brokerage.cli.dirac:dirac", "DIRAC task-queue matching (seed 004): task queues and pilot matches."),
    "diff": ("brokerage.cli.diff:diff", "Which tasks' brokerage changed between two grid versions, and why."),
    "simulate": (
        "brokerage.cli.simulate:simulate",
        "Move the grid forward in time: jobs, timeouts, throttling, tasks.",
    ),
    "sim-runs": ("brokerage.cli.simulate:sim_runs", "List the simulation runs stored in the database, or show one."),
    "tasks": ("brokerage.cli.tasks:tasks", "List tasks by status, label, user or name (find ids for jobs/explain)."),
    "crosscheck": ("brokerage.cli.crosscheck:crosscheck", "Run PanDA's own brokers and ours on one grid; compare."),
}
"""The core's subcommands by name, with their one-line help; each module is imported when its command is used (a
broken one fails that command loudly, never silently vanishes), so `brokerage --help` stays light."""
PLUGIN_GROUP = "brokerage.commands"  # entry points adding subcommands from other packages (the app adds `serve`)


SNAPSHOT_COMMANDS: dict[str, tuple[str, str]] = {
    "from-panda": ("brokerage.cli.panda:from_panda", "Build a snapshot from a PanDA database, read-only."),
    "pull": ("brokerage.cli.panda:pull", "Store a new grid version from a PanDA database every interval."),
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
@click.option("--vo", envvar="BROKERAGE_VO", default=None, metavar="VO",
              help="the VO whose stored CONFIG rows the commands load (default: the grid's tasks' VO, else atlas)")  # fmt: skip
def main(vo: str | None) -> None:
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
@click.option("--history", is_flag=True,
              help="with the task status history `db init` stores (so importing it keeps the task states page)")  # fmt: skip
@click.option("--rules", default="seed", show_default=True, type=click.Choice(PROFILE_NAMES),
              help="the rule profile whose job brokers place each share's jobs (simulate under the same RULES)")  # fmt: skip
@guarded
def snapshot_demo(out: str, seed: int, queues: int, tasks: int, later: int | None, history: bool, rules: str) -> None:
    """Write a realistic demo grid (deterministic from --seed)."""
    from brokerage.model.snapshot import GridSnapshot
    from brokerage.synth.demo import demo_snapshot
    from brokerage.synth.history import simulate_task_history

    snap = demo_snapshot(seed=seed, queues=queues, tasks=tasks, rules=rules)
    if history:
        log = simulate_task_history(snap.tables["tasks"], snap.taken_at, seed=seed)
        snap = GridSnapshot({**snap.tables, "task_status_log": log}, snap.taken_at, snap.snapshot_id, snap.version)
    if later is not None:
        from brokerage.diff.drift import later as pulled_later

        snap = pulled_later(snap, seed=later)
    snap.to_json(out)
    click.echo(f"wrote {out}: {len(snap.queues)} queues, {len(snap.sites)} sites, {len(snap.tasks)} tasks", err=True)


@snapshot.command("schema")
@click.option("--out", "out", type=click.Path(dir_okay=False), help="file to write (default: stdout)")
def snapshot_schema(out: str | None) -> None:
    """Print the JSON Schema of snapshot files."""
    from brokerage.model.tables import json_schema

    text = json.dumps(json_schema(), indent=2)
    if out:
        Path(out).write_text(text + "\n")
    else:
        click.echo(text)


@snapshot.command("validate")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def snapshot_validate(file: str) -> None:
    """Check a snapshot file and list every problem."""
    from brokerage.model.snapshot import GridSnapshot, SnapshotError

    try:
        snap = GridSnapshot.from_json(file)
    except SnapshotError as exc:
        for p in exc.problems:
            click.echo(p, err=True)
        fail(f"{file}: {count(len(exc.problems), 'problem')}")
    click.echo(f"{file}: valid ({len(snap.queues)} queues, {len(snap.tasks)} tasks)")


if __name__ == "__main__":  # python -m brokerage.cli.main, as the installed command
    main()
