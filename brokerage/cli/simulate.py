"""``brokerage simulate``: move the grid forward H hours under the stored or a what-if gdpconfig."""

from __future__ import annotations

import json
import math
from typing import Any

import click

from brokerage.cli.common import fail, grid_overrides, guarded, load_grid
from brokerage.cli.figures import change, figure, listing
from brokerage.cli.options import cluster_options

MAX_HOURS = 24 * 22  # 22 days: the 21-day running-job rule (K9) can be reached
HEADLINE_ROWS = (
    ("jobs_finished", "jobs finished"),
    ("jobs_failed", "jobs failed"),
    ("jobs_closed_reassigned", "jobs closed (reassigned)"),
    ("mean_queued_minutes", "mean time queued (min)"),
    ("tasks_completed", "tasks completed"),
    ("tasks_pending", "tasks pending at the end"),
)


def _run(
    snap: Any, config: Any, hours: float, seed: int, label: str, quiet: bool, cmds: Any = (), job_ids: Any = ()
) -> dict[str, Any]:
    from brokerage.report.progress import ProgressBar
    from brokerage.sim.engine import Simulation

    bar = None if quiet else ProgressBar(unit=f"simulated minutes ({label})")
    sim = Simulation(snap, config, seed=seed).run(hours, progress=bar, commands=cmds)
    if bar:
        bar.close()
    result = sim.result()
    if job_ids:
        from brokerage.sim.events import job_history

        events = sim.log.frame()
        result["job_histories"] = {int(j): job_history(events, int(j)) for j in job_ids}
        for j, steps in result["job_histories"].items():
            if not steps:
                result.setdefault("unknown_job_ids", []).append(int(j))
                click.echo(f"job {j}: not a job of this run (its PandaIDs run from 1 to {sim.jobs.n:,})", err=True)
            for step in steps:
                click.echo(f"job {j} at {step['time_h']:g} h: {step['from']} -> {step['to']}: {step['cause']}")
    return result


def _store(snap: Any, runs: list[tuple[dict[str, Any], Any, str]], hours: float, seed: int) -> None:
    """Keep each run in the database the grid came from; say which run ids they got."""
    from brokerage.store import database, errors
    from brokerage.store.sim_runs import save_run

    engine = database.make_engine(database.database_url(), create=False)
    try:
        with errors.database_errors():
            ids = [save_run(engine, result, snap, config, hours, seed, label) for result, config, label in runs]
    except errors.StoreError as exc:
        fail(f"the run finished but could not be stored: {exc}")
    finally:
        engine.dispose()
    click.echo("stored as run " + " and ".join(map(str, ids)) + " (brokerage sim-runs --show ID)", err=True)


def _compare_lines(stored: dict[str, Any], whatif: dict[str, Any]) -> list[str]:
    """The headline figures side by side, and the work queues throttled in one run only."""
    a, b = stored["headline"], whatif["headline"]
    lines = [f"{'':<28} {'stored':>12} {'what-if':>12} {'change':>10}"]
    for key, name in HEADLINE_ROWS:
        x, y = a.get(key), b.get(key)
        if x is None or y is None:
            lines.append(f"{name:<28} {figure(x):>12} {figure(y):>12}")
            continue
        lines.append(f"{name:<28} {figure(x):>12} {figure(y):>12} {change(x, y):>10}")
    only_a = sorted(set(a["throttled_work_queues"]) - set(b["throttled_work_queues"]))
    only_b = sorted(set(b["throttled_work_queues"]) - set(a["throttled_work_queues"]))
    lines.append(f"throttled work queues: {len(a['throttled_work_queues'])} stored, "
                 f"{len(b['throttled_work_queues'])} what-if")  # fmt: skip
    if only_a:
        lines.append("  only under the stored config " + listing(only_a, indent=4))
    if only_b:
        lines.append("  only under the what-if " + listing(only_b, indent=4))
    return lines


@click.command("simulate")
@click.option(
    "--snapshot", "snapshot_path", type=click.Path(exists=True, dir_okay=False), help="snapshot JSON (default: DB)"
)
@click.option("--hours", type=float, required=True, help=f"simulated hours, more than 0 and at most {MAX_HOURS}")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help="what-if gdpconfig override")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0, 2**32 - 1), help="random seed")
@click.option("--out", "out", type=click.Path(dir_okay=False), help="write the run (or both runs) as JSON")
@click.option("--compare", is_flag=True, help="run the stored config and the what-if side by side")
@click.option("--replicas", type=click.IntRange(1, 100), default=None,
              help="with --compare or --sweep: N seeds (--seed, --seed+1, ...) of each config, the same seeds for "
                   "every config; paired differences with 95 % intervals (--sweep alone: 5)")  # fmt: skip
@click.option("--sweep", "sweep", metavar="KEY=v1,v2,...",
              help="run the stored config and each value of KEY (on top of --set) on the same seeds, each value's "
                   "measures with 95 % intervals")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON instead of the table")
@click.option("--quiet", is_flag=True, help="no progress bar")
@click.option("--no-store", is_flag=True, help="do not keep the run in the database (a grid read from it)")
@click.option("--job-history", "job_ids", multiple=True, type=int, metavar="PANDAID",
              help="print this simulated job's every step with its cause (PandaIDs count from 1 in a run)")  # fmt: skip
@click.option("--task-command", "task_commands", multiple=True, metavar="HOURSh:TASK:COMMAND",
              help="a task command at a simulated time, e.g. 2h:1234:pause (kill, finish, retry, incexec, pause, "
                   "resume, reassign)")  # fmt: skip
@cluster_options
@guarded
def simulate(
    snapshot_path: str | None,
    hours: float,
    assignments: tuple[str, ...],
    seed: int,
    out: str | None,
    compare: bool,
    replicas: int | None,
    sweep: str | None,
    as_json: bool,
    quiet: bool,
    no_store: bool,
    task_commands: tuple[str, ...],
    job_ids: tuple[int, ...],
) -> None:
    """Move the grid forward HOURS: job generation under the throttler, brokerage, dispatch, timeouts and
    reassignments, task rules; print the headline figures (--compare: stored vs what-if).

    Usage: ``brokerage simulate --hours 6 --set THROTTLE_THRESHOLD=1.5 --compare``
    """
    from brokerage.model.gdpconfig import parse_assignments
    from brokerage.report.files import write_atomic

    _check_modes(hours, compare, replicas, sweep, job_ids, assignments)
    parse_assignments(assignments)
    from brokerage.sim.commands import CommandRefused, parse_commands

    try:
        parse_commands(task_commands, hours)  # the specs' own problems before the grid is read
    except CommandRefused as exc:
        fail(str(exc))
    snap, config = load_grid(snapshot_path)
    try:
        cmds = parse_commands(task_commands, hours, set(snap.tables["tasks"]["jeditaskid"].tolist()))
    except CommandRefused as exc:
        fail(str(exc))
    from brokerage.sim.setup import SimInputError, input_problems

    if problems := input_problems(snap):
        fail(str(SimInputError(problems)))
    edits = grid_overrides(snap, assignments)
    whatif = config.with_overrides(edits)
    if replicas or sweep:
        _replicated(snap, config, edits, hours, replicas or 5, seed, sweep, cmds, quiet or as_json, as_json,
                    out, store=snapshot_path is None and not no_store)  # fmt: skip
        return
    if compare:
        from brokerage.report.progress import ProgressBar
        from brokerage.sim.sweep import simulate_many

        # both runs at once on the Dask engine (one per worker); the bar counts simulated minutes of both
        bar = None if quiet else ProgressBar(unit="simulated minutes (stored and what-if)")
        stored, proposed = simulate_many(snap, [config, whatif], hours, seed, progress=bar, commands=cmds)
        if bar:
            bar.close()
        doc: dict[str, Any] = {"stored": stored, "whatif": proposed}
        for line in [] if as_json else _compare_lines(doc["stored"], doc["whatif"]):
            click.echo(line)
        runs = [(stored, config, "stored"), (proposed, whatif, "what-if")]
    else:
        doc = _run(snap, whatif, hours, seed, "run", quiet or as_json, cmds, job_ids)
        for key, value in {} if as_json else doc["headline"].items():
            shown = listing(value) if isinstance(value, list) else figure(value)
            click.echo(f"{key.replace('_', ' '):<28} {shown}")
        runs = [(doc, whatif, "what-if" if assignments else "stored")]
    for c in runs[0][0].get("commands", []):
        click.echo(f"task command at {c['time_h']:g} h: {c['command']} {c['task']} {c['outcome']}: {c['why']}")
    if snapshot_path is None and not no_store:
        _store(snap, runs, hours, seed)
    if out:
        doc = with_legend(doc)
        try:
            write_atomic(out, lambda f: f.write(json.dumps(doc, default=str).encode()))
        except OSError as exc:
            fail(f"cannot write {out}: {exc.strerror or exc}")
        click.echo(f"wrote {out}", err=True)
    if as_json:
        click.echo(json.dumps(doc, default=str))
    if unknown := doc.get("unknown_job_ids"):
        fail(f"--job-history: {', '.join(map(str, unknown))} not a job of this run (the run itself was kept)")


def _check_modes(
    hours: float, compare: bool, replicas: int | None, sweep: str | None, job_ids: Any, assignments: tuple[str, ...]
) -> None:
    """Exit 2 on hours out of range and on options that do not go together."""
    if not math.isfinite(hours) or hours <= 0 or hours > MAX_HOURS:
        fail(f"--hours: {hours:g} is not allowed; expected a number of hours above 0 and at most {MAX_HOURS}")
    if (compare or replicas or sweep) and job_ids:
        fail("--job-history works on one run: leave out --compare, --replicas and --sweep")
    if compare and sweep:
        fail("--sweep compares each value with the stored config: leave out --compare")
    if replicas and not (compare or sweep):
        fail("--replicas needs --compare (stored vs what-if) or --sweep KEY=v1,v2,...")
    if compare and not assignments:
        fail("--compare needs at least one --set KEY=VALUE (the what-if to compare with the stored config)")


def _replicated(
    snap: Any, config: Any, edits: dict[str, Any], hours: float, replicas: int, seed: int, sweep: str | None,
    cmds: Any, quiet: bool, as_json: bool, out: str | None, store: bool,
) -> None:  # fmt: skip
    """Replicas of the stored config and the what-if (or each swept value): print, store, write."""
    from brokerage.cli.replicas import print_doc, run_replicated, store_replicas
    from brokerage.report.files import write_atomic

    if seed + replicas - 1 >= 2**32:
        fail(f"--seed: {seed} + {replicas} replicas goes past the last seed 2^32 - 1")
    doc = run_replicated(snap, config, edits, hours, replicas, seed, sweep, cmds, quiet)
    print_doc(doc, as_json)
    if store:
        configs = {c["label"]: config.with_overrides(c["overrides"]) for c in doc["configs"]}
        store_replicas(snap, doc, configs, hours)
    if out:
        try:
            write_atomic(out, lambda f: f.write(json.dumps(doc, default=str).encode()))
        except OSError as exc:
            fail(f"cannot write {out}: {exc.strerror or exc}")
        click.echo(f"wrote {out}", err=True)


def with_legend(doc: dict[str, Any]) -> dict[str, Any]:
    """DOC with a `rules` legend: each rule code the run names (R5, R6, A, …) once, with who applies it and its
    sentence ({value} and {threshold} are the numbers each event compared).

    Usage: ``json.dumps(with_legend(doc))``
    """
    from brokerage.sim.events import RULES

    text = json.dumps(doc, default=str)
    named = {code: {"by": who, "sentence": sentence} for code, (who, sentence) in RULES.items() if f'"{code}"' in text}
    return {**doc, "rules": named}


@click.command("sim-runs")
@click.option("--show", "run_id", type=int, help="print one stored run's full result as JSON")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000), help="runs listed")
@click.option("--json", "as_json", is_flag=True, help="the list as JSON")
@guarded
def sim_runs(run_id: int | None, limit: int, as_json: bool) -> None:
    """List the simulation runs stored in the database (newest first), each with the grid version and gdpconfig
    version it ran on, or print one (--show ID).

    Usage: ``brokerage sim-runs --limit 5``
    """
    from brokerage.store import database, errors
    from brokerage.store.sim_runs import list_runs, load_run

    engine = database.make_engine(database.database_url(), create=False)
    try:
        with errors.database_errors():
            if run_id is not None:
                info, result = load_run(engine, run_id)
                click.echo(json.dumps(with_legend({"run": info.to_dict(), "result": result}), default=str))
                return
            runs = list_runs(engine, limit)
    except errors.StoreError as exc:
        fail(str(getattr(exc, "orig", None) or exc).strip().splitlines()[0])
    finally:
        engine.dispose()
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in runs]))
        return
    if not runs:
        click.echo("no simulation runs stored yet (brokerage simulate --hours H stores each run)")
        return
    click.echo(f"{'run':>5}  {'when (UTC)':<16}  {'label':<8} {'grid':>6} {'config':>6} {'hours':>6} {'seed':>6} "
               f"{'finished':>10}  overrides")  # fmt: skip
    for r in runs:
        finished = int(r.headline.get("jobs_finished") or 0)
        edits = ", ".join(f"{k}={v}" for k, v in r.overrides.items()) or "-"
        click.echo(f"{r.run_id:>5}  {r.created_at:%Y-%m-%d %H:%M}  {r.label:<8} {r.snapshot_version:>6} "
                   f"{r.config_version if r.config_version is not None else '-':>6} {r.hours:>6g} {r.seed:>6} "
                   f"{finished:>10,}  {edits}")  # fmt: skip
