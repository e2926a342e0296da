"""The ``brokerage nucleus`` command: task (nucleus) brokerage of one task, as a table or JSON."""

from __future__ import annotations

import click

_SET_HELP = "what-if gdpconfig override KEY=VALUE (repeatable)"


@click.command("nucleus")
@click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False), help="snapshot JSON (default: DB)")
@click.option("--task", "task_id", required=True, type=int, help="jediTaskID")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help=_SET_HELP)
@click.option("--seed", default=0, show_default=True, type=int, help="seed of the weighted draw")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def nucleus(snapshot_path: str | None, task_id: int, assignments: tuple[str, ...], seed: int, as_json: bool) -> None:
    """Choose a nucleus for a production task and explain every nucleus' fate."""
    # brokerage.cli.main attaches this command while it is being imported, so its helpers are imported at call time
    from brokerage.cli.common import guarded

    guarded(_run)(snapshot_path, task_id, assignments, seed, as_json)


def _run(snapshot_path: str | None, task_id: int, assignments: tuple[str, ...], seed: int, as_json: bool) -> None:
    from brokerage.brokers.nucleus import broker
    from brokerage.cli.common import grid_overrides, load_grid, print_decision
    from brokerage.model.gdpconfig import parse_assignments
    from brokerage.model.versions import stamp

    parse_assignments(assignments)  # bad --set values fail before the grid is loaded
    snap, config = load_grid(snapshot_path)
    overrides = grid_overrides(snap, assignments)
    config = config.with_overrides(overrides)
    decision = broker(snap, task_id, config, seed=seed)
    print_decision(decision, as_json, stamp(snap, config))
    if not as_json:
        chosen = decision.extra.get("chosen")
        locality = decision.extra.get("data_locality", {})
        if locality.get("disabled"):
            click.echo(f"data locality check disabled: {locality.get('reason', '')}")
        if chosen:
            p = next((c.details.get("probability", 0.0) for c in decision.candidates if c.name == chosen), 0.0)
            click.echo(
                f"chosen nucleus, a weighted random draw among {len(decision.candidates)} kept (seed {seed}): "
                f"{chosen}, probability {float(p or 0.0):.0%}"
            )
