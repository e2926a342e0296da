"""``brokerage simulate``: move the grid forward H hours under the stored or a what-if gdpconfig."""

from __future__ import annotations

import json
import math
from typing import Any

import click

from brokerage.cli import fail, grid_overrides, guarded, load_grid
from brokerage.runs.options import cluster_options

MAX_HOURS = 24 * 14
HEADLINE_ROWS = (
    ("jobs_finished", "jobs finished"),
    ("jobs_failed", "jobs failed"),
    ("jobs_closed_reassigned", "jobs closed (reassigned)"),
    ("mean_queued_minutes", "mean time queued (min)"),
    ("tasks_completed", "tasks completed"),
    ("tasks_pending", "tasks pending at the end"),
)


def _run(snap: Any, config: Any, hours: float, seed: int, label: str, quiet: bool) -> dict[str, Any]:
    from brokerage.report.progress import ProgressBar
    from brokerage.sim.engine import Simulation

    bar = None if quiet else ProgressBar(unit=f"simulated minutes ({label})")
    sim = Simulation(snap, config, seed=seed).run(hours, progress=bar)
    if bar:
        bar.close()
    return sim.result()


def _compare_lines(stored: dict[str, Any], whatif: dict[str, Any]) -> list[str]:
    """The headline figures side by side, and the work queues throttled in one run only."""
    a, b = stored["headline"], whatif["headline"]
    lines = [f"{'':<28} {'stored':>12} {'what-if':>12} {'change':>10}"]
    for key, name in HEADLINE_ROWS:
        x, y = a.get(key), b.get(key)
        if x is None or y is None:
            lines.append(f"{name:<28} {x!s:>12} {y!s:>12}")
            continue
        lines.append(f"{name:<28} {x:>12,.1f} {y:>12,.1f} {y - x:>+10,.1f}")
    only_a = sorted(set(a["throttled_work_queues"]) - set(b["throttled_work_queues"]))
    only_b = sorted(set(b["throttled_work_queues"]) - set(a["throttled_work_queues"]))
    lines.append(f"throttled work queues: {len(a['throttled_work_queues'])} stored, "
                 f"{len(b['throttled_work_queues'])} what-if")  # fmt: skip
    if only_a:
        lines.append("  only under the stored config: " + ", ".join(only_a))
    if only_b:
        lines.append("  only under the what-if: " + ", ".join(only_b))
    return lines


@click.command("simulate")
@click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False), help="snapshot JSON (default: DB)")
@click.option("--hours", type=float, required=True, help=f"simulated hours, more than 0 and at most {MAX_HOURS}")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help="what-if gdpconfig override")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0, 2**32 - 1), help="random seed")
@click.option("--out", "out", type=click.Path(dir_okay=False), help="write the run (or both runs) as JSON")
@click.option("--compare", is_flag=True, help="run the stored config and the what-if side by side")
@click.option("--quiet", is_flag=True, help="no progress bar")
@cluster_options
@guarded
def simulate(
    snapshot_path: str | None,
    hours: float,
    assignments: tuple[str, ...],
    seed: int,
    out: str | None,
    compare: bool,
    quiet: bool,
) -> None:
    """Move the grid forward HOURS: job generation under the throttler, brokerage, dispatch, timeouts and
    reassignments, task rules; print the headline figures (--compare: stored vs what-if).

    Usage: ``brokerage simulate --hours 6 --set THROTTLE_THRESHOLD=1.5 --compare``
    """
    from brokerage.gdpconfig import parse_assignments
    from brokerage.report.files import write_atomic

    if not math.isfinite(hours) or hours <= 0 or hours > MAX_HOURS:
        fail(f"--hours: {hours:g} is not allowed; expected a number of hours above 0 and at most {MAX_HOURS}")
    if compare and not assignments:
        fail("--compare needs at least one --set KEY=VALUE (the what-if to compare with the stored config)")
    parse_assignments(assignments)
    snap, config = load_grid(snapshot_path)
    whatif = config.with_overrides(grid_overrides(snap, assignments))
    if compare:
        from brokerage.report.progress import ProgressBar
        from brokerage.sim.sweep import simulate_many

        # both runs at once on the Dask engine (one per worker); the bar counts simulated minutes of both
        bar = None if quiet else ProgressBar(unit="simulated minutes (stored and what-if)")
        stored, proposed = simulate_many(snap, [config, whatif], hours, seed, progress=bar)
        if bar:
            bar.close()
        doc: dict[str, Any] = {"stored": stored, "whatif": proposed}
        for line in _compare_lines(doc["stored"], doc["whatif"]):
            click.echo(line)
    else:
        doc = _run(snap, whatif, hours, seed, "run", quiet)
        for key, value in doc["headline"].items():
            shown = ", ".join(value) if isinstance(value, list) else value
            click.echo(f"{key:<28} {shown}")
    if out:
        try:
            write_atomic(out, lambda f: f.write(json.dumps(doc, default=str).encode()))
        except OSError as exc:
            fail(f"cannot write {out}: {exc.strerror or exc}")
        click.echo(f"wrote {out}", err=True)
