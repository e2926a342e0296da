"""The ``brokerage nucleus`` command: task (nucleus) brokerage of one production task, as a table or JSON."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click

from brokerage.brokers.router import NUCLEUS_SEED, route, run_nucleus_brokerage
from brokerage.cli.common import SET_HELP, fail, grid_overrides, guarded, load_grid, print_decision
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.explain import Candidate
from brokerage.model.gdpconfig import parse_assignments
from brokerage.model.versions import stamp


@click.command("nucleus")
@click.option(
    "--snapshot", "snapshot_path", type=click.Path(exists=True, dir_okay=False), help="snapshot JSON (default: DB)"
)
@click.option("--task", "task_id", required=True, type=int, help="jediTaskID")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
@click.option("--seed", default=NUCLEUS_SEED, show_default=True, type=int, help="seed of the weighted draw")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@guarded
def nucleus(snapshot_path: str | None, task_id: int, assignments: tuple[str, ...], seed: int, as_json: bool) -> None:
    """Choose a nucleus for a production task and explain every nucleus' fate."""
    parse_assignments(assignments)  # bad --set values fail before the grid is loaded
    snap, config = load_grid(snapshot_path)
    config = config.with_overrides(grid_overrides(snap, assignments))
    cache = GridCache(snap)
    task = views.task_row(cache, task_id)
    if route(task).name != "production":
        fail(
            f"task {task_id} is an analysis task (prodSourceLabel {task.get('prodsourcelabel')!r}): analysis tasks "
            "have no nucleus brokerage; use `brokerage jobs` for its queues"
        )
    decision = run_nucleus_brokerage(snap, task_id, config, cache=cache, seed=seed)
    print_decision(decision, as_json, stamp(snap, config))
    if not as_json:
        _print_choice(decision.extra, decision.candidates, seed)


def _print_choice(extra: Mapping[str, Any], candidates: Sequence[Candidate], seed: int) -> None:
    """The draw's outcome and whether data locality was judged, under the table."""
    chosen = extra.get("chosen")
    locality = extra.get("data_locality", {})
    if locality.get("disabled"):
        click.echo(f"data locality check disabled: {locality.get('reason', '')}")
    if chosen:
        p = next((c.details.get("probability", 0.0) for c in candidates if c.name == chosen), 0.0)
        click.echo(
            f"chosen nucleus, a weighted random draw among {len(candidates)} kept (seed {seed}): "
            f"{chosen}, probability {float(p or 0.0):.0%}"
        )
