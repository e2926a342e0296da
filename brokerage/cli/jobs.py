"""``brokerage jobs`` and ``brokerage explain``: one task's job brokerage, and where one queue or nucleus stands."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from brokerage.brokers.nucleus import nucleus_arrays
from brokerage.cli.common import SET_HELP, fail, grid_overrides, guarded, load_grid, print_decision
from brokerage.cli.feedback import progress_line, unknown_name
from brokerage.cli.options import cluster_options
from brokerage.model.words import count

if TYPE_CHECKING:
    from brokerage.model.cache import GridCache
    from brokerage.model.gdpconfig import Config


@click.command("jobs")
@click.option(
    "--snapshot", "snapshot_path", type=click.Path(exists=True, dir_okay=False), help="snapshot JSON (default: DB)"
)
@click.option("--task", "task_id", required=True, type=int, help="jediTaskID")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@guarded
def jobs(snapshot_path: str | None, task_id: int, assignments: tuple[str, ...], as_json: bool) -> None:
    """Run the job brokerage for a task (production or analysis, by its prodSourceLabel)."""
    from brokerage.brokers.router import run_job_brokerage
    from brokerage.model.gdpconfig import parse_assignments
    from brokerage.model.versions import stamp

    parse_assignments(assignments)  # bad --set values fail before the grid is loaded
    snap, config = load_grid(snapshot_path)
    config = config.with_overrides(grid_overrides(snap, assignments))
    decision = run_job_brokerage(snap, task_id, config)
    print_decision(decision, as_json, stamp(snap, config))


@click.command("explain")
@click.option(
    "--snapshot", "snapshot_path", type=click.Path(exists=True, dir_okay=False), help="snapshot JSON (default: DB)"
)
@click.option("--task", "task_id", required=True, type=int, help="jediTaskID")
@click.option("--queue", "queue", default=None, help="the PanDA queue to explain (job brokerage)")
@click.option("--nucleus", "nucleus", default=None, help="the nucleus to explain (task brokerage)")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
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
    from brokerage.model.cache import GridCache
    from brokerage.model.gdpconfig import parse_assignments
    from brokerage.whatif.impact import top_changed_count
    from brokerage.whatif.levers import explain_queue

    parse_assignments(assignments)  # bad --set values fail before the grid is loaded
    snap, stored = load_grid(snapshot_path)
    config = stored.with_overrides(grid_overrides(snap, assignments))
    cache = GridCache(snap)
    _check_name(cache, queue, nucleus)
    count_grid = None
    if not no_grid:  # whole-grid runs go through the Dask engine (in-process below its size threshold)
        base = runs.run_grid(snap, config, cache=cache, progress=progress_line("brokering the grid"))
        levers_counted = [0]

        def count_grid(cfg: Config) -> int:
            levers_counted[0] += 1
            click.echo(f"counting the tasks lever {levers_counted[0]} changes ...", err=True)
            return top_changed_count(snap, base, config, cfg, exclude=task_id, run_with=runs.run_grid, cache=cache)

    if nucleus is not None:
        from brokerage.whatif.levers_nucleus import explain_nucleus

        out = explain_nucleus(snap, task_id, nucleus, config, cache=cache, count_grid=count_grid)
    else:
        out = explain_queue(snap, task_id, str(queue), config, cache=cache, count_grid=count_grid)
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
            f"{lever.key} {_shown(config.effective().get(lever.key))} → {_shown(lever.value)}"
            if lever.kind == "gdpconfig"
            else f"{lever.table}.{lever.field}[{lever.row}] → {_shown(lever.value)}"
        )
        others = (
            ""
            if lever.other_tasks_changed is None
            else f"; {count(lever.other_tasks_changed, 'other task')} change top"
        )
        click.echo(f"  lever {what}: {lever.effect}{others}")
    click.echo(f"  snapshot {out.snapshot_version}, gdpconfig {out.config_version}")


def _shown(value: object) -> str:
    """A lever's value as a person writes it (no float noise, "unset" for a key with no value)."""
    if value is None:
        return "unset"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _check_name(cache: GridCache, queue: str | None, nucleus: str | None) -> None:
    """Fail before any brokerage when the queue or nucleus asked about is not in the grid, naming likely ones."""
    if queue is not None:
        names = cache.snap.queues["panda_queue"].astype(str)
        if queue not in set(names):
            fail(unknown_name("queue", queue, names))
    if nucleus is not None:
        nuclei = nucleus_arrays(cache).index
        if nucleus not in nuclei:
            fail(unknown_name("nucleus", nucleus, nuclei))
