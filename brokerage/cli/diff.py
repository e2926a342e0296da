"""``brokerage diff --from V1 --to V2``: the brokerages that changed between two grid versions, and why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from brokerage.cli.common import chosen_vo, fail, grid_overrides, guarded
from brokerage.cli.options import cluster_options

if TYPE_CHECKING:
    from brokerage.model.gdpconfig import Config
    from brokerage.model.snapshot import GridSnapshot


def load_versions(old: str, new: str) -> tuple[GridSnapshot, GridSnapshot, Config]:
    """Two grids named by stored version number (vN or N) or by snapshot file, and the stored gdpconfig.

    Usage: ``a, b, config = load_versions("3", "4")``
    """
    from brokerage.model.gdpconfig import Config
    from brokerage.model.snapshot import GridSnapshot

    if all(Path(v).suffix == ".json" for v in (old, new)):
        return GridSnapshot.from_json(old), GridSnapshot.from_json(new), Config()
    numbers = []
    for option, v in (("--from", old), ("--to", new)):
        digits = v[1:] if v[:1] in ("v", "V") else v
        if not digits.isdigit():
            fail(f"{option}: expected a stored grid version (e.g. 3 or v3) or a snapshot .json file, not {v!r}")
        numbers.append(int(digits))
    from brokerage.brokers.router import grid_vo
    from brokerage.store import database, errors
    from brokerage.store.config_store import load_config
    from brokerage.store.versions import load_version

    try:
        with errors.database_errors():  # a database failure is a StoreError: "database error: <first line>"
            engine = database.make_engine(database.database_url(), create=False)
            newer = load_version(engine, numbers[1])
            vo = chosen_vo() or grid_vo(newer)
            return load_version(engine, numbers[0]), newer, load_config(engine, vo=vo)
    except errors.StoreError as exc:
        fail(str(exc))


@click.command("diff")
@click.option("--from", "old", required=True, metavar="V1", help="the older grid: a stored version or a .json file")
@click.option("--to", "new", required=True, metavar="V2", help="the newer grid: a stored version or a .json file")
@click.option("--task", "task_id", type=click.IntRange(0), default=None, help="only this jediTaskID")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help="what-if gdpconfig override")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1), help="changed tasks to print")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object (every changed task)")
@cluster_options
@guarded
def diff(old: str, new: str, task_id: int | None, assignments: tuple[str, ...], limit: int, as_json: bool) -> None:
    """Which tasks' brokerage changed from grid V1 to V2, and the input changes that caused each."""
    from brokerage.diff.attribute import diff_grids
    from brokerage.model.cache import GridCache
    from brokerage.model.gdpconfig import parse_assignments
    from brokerage.model.views import task_row

    parse_assignments(assignments)
    a, b, stored = load_versions(old, new)
    config = stored.with_overrides(grid_overrides(a, assignments))
    if task_id is not None:
        task_row(GridCache(a), task_id)  # an unknown task is named (exit 2) before any work
    quiet = as_json
    out = diff_grids(
        a, b, config, task_ids=None if task_id is None else [task_id],
        progress=None if quiet else (lambda msg: click.echo(f"… {msg}", err=True)),
    )  # fmt: skip
    if as_json:
        click.echo(json.dumps(out.to_dict(), indent=2, default=str))
        return
    click.echo(f"grid {out.from_version} → {out.to_version}, gdpconfig {out.config_version}")
    if not out.tables:
        click.echo("the two grids hold the same inputs: no brokerage can change (nothing brokered)")
        return
    changed = ", ".join(f"{k} ({n})" for k, n in out.tables.items())
    click.echo(f"inputs changed (row groups): {changed}")
    click.echo(
        f"{len(out.tasks)} of {out.compared} brokerages changed; {len(out.new)} new, {len(out.gone)} gone "
        f"({out.replays} replays, {out.seconds:.1f} s)"
    )
    for td in out.tasks[:limit]:
        click.echo(f"\n{td.change.headline()}")
        if td.note:
            click.echo(f"  {td.note}:")
        for cause in td.causes:
            click.echo(f"  {cause.sentence()}")
    if len(out.tasks) > limit:
        click.echo(f"\n… {len(out.tasks) - limit} more (--limit, --task or --json)")
