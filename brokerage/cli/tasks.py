"""``brokerage tasks``: find task ids in a grid by status, label, user or name, highest priority first."""

from __future__ import annotations

import json

import click

from brokerage.cli.common import fail, guarded, load_grid

COLUMNS = ("jeditaskid", "status", "prodsourcelabel", "currentpriority", "username", "gshare", "nucleus", "taskname")


@click.command("tasks")
@click.option(
    "--snapshot", "snapshot_path", type=click.Path(exists=True, dir_okay=False), help="snapshot JSON (default: DB)"
)
@click.option("--status", "statuses", multiple=True, help="JEDI task status, repeatable (e.g. pending, assigning)")
@click.option("--label", default=None, help="prodSourceLabel: managed, user, test, ...")
@click.option("--user", default=None, help="task owner (username), exact")
@click.option("--name", default=None, help="part of the task name (case-insensitive)")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(0, None), help="rows to print; 0: all")
@click.option("--json", "as_json", is_flag=True, help="print a JSON list")
@guarded
def tasks(
    snapshot_path: str | None,
    statuses: tuple[str, ...],
    label: str | None,
    user: str | None,
    name: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """List tasks of the grid, highest currentpriority first, to find an id for `jobs`, `explain` or `report`.

    Usage: ``brokerage tasks --status pending --label user``
    """
    from brokerage.model.words import count
    from brokerage.sim.task_states import TASK_STATUSES

    unknown = sorted(set(statuses) - set(TASK_STATUSES))
    if unknown:
        fail(f"--status: unknown task status {', '.join(map(repr, unknown))}; allowed: {', '.join(TASK_STATUSES)}")
    snap, _ = load_grid(snapshot_path)
    t = snap.tasks
    keep = t["jeditaskid"].notna()
    if statuses:
        keep &= t["status"].isin(statuses)
    if label is not None:
        keep &= t["prodsourcelabel"] == label
    if user is not None:
        keep &= t["username"] == user
    if name is not None:
        keep &= t["taskname"].astype(str).str.contains(name, case=False, regex=False)
    found = t.loc[keep, list(COLUMNS)].sort_values(["currentpriority", "jeditaskid"], ascending=[False, True])
    shown = found if limit == 0 else found.head(limit)
    if as_json:
        rows = shown.astype(object).where(shown.notna(), None).to_dict("records")
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    click.echo(f"{count(len(found), 'task')} match" + ("es" if len(found) == 1 else ""), err=True)
    if shown.empty:
        return
    users = max(4, *(len(str(u)) for u in shown["username"]))  # whole names: users and shares are what people grep
    shares = max(6, *(len(str(g)) for g in shown["gshare"]))
    click.echo(
        f"{'jediTaskID':>10}  {'status':<10} {'label':<8} {'prio':>5}  {'user':<{users}} {'gshare':<{shares}} name"
    )
    for r in shown.itertuples(index=False):
        click.echo(
            f"{int(r.jeditaskid):>10}  {r.status:<10} {r.prodsourcelabel:<8} {int(r.currentpriority):>5}  "
            f"{r.username!s:<{users}} {r.gshare!s:<{shares}} {r.taskname}"
        )
    if len(shown) < len(found):
        click.echo(f"... {len(found) - len(shown)} more (--limit 0 for all)", err=True)
