"""The ``brokerage report`` command: one task's or the whole grid's brokerage as a CSV, JSON or HTML file."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from brokerage.cli.options import cluster_options
from brokerage.model.words import count
from brokerage.report.export import FORMATS

if TYPE_CHECKING:  # the command loads the report package when it runs (a fast --help)
    from brokerage.report.whatif import WhatIfSection

_SET_HELP = "what-if gdpconfig override KEY=VALUE (repeatable)"


def _gzipped(out: str) -> bool:
    """An --out name ending in .gz asks for a gzip-compressed file."""
    return out.lower().endswith(".gz")


def _format_of(fmt: str | None, out: str) -> str:
    if fmt:
        return fmt
    name = out[:-3] if _gzipped(out) else out
    suffix = Path(name).suffix.lower().lstrip(".")
    if suffix == "htm":
        suffix = "html"
    if suffix not in FORMATS:
        raise click.UsageError(f"give --format {'|'.join(FORMATS)} (cannot tell it from {out!r})")
    return suffix


@click.command("report")
@click.option(
    "--snapshot", "snapshot_path", type=click.Path(exists=True, dir_okay=False), help="snapshot JSON (default: DB)"
)
@click.option("--task", "task_ids", multiple=True, type=int, metavar="ID", help="jediTaskID (repeatable)")
@click.option("--all", "all_tasks", is_flag=True, help="every waiting task, highest priority first")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help=_SET_HELP)
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="file format (default: from --out's extension)")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="file to write (.gz: compressed)")
@click.option("--quiet", is_flag=True, help="no progress bar and no summary line")
@click.option(
    "--full",
    is_flag=True,
    help="JSON with every skipped candidate of every task (default for --all: per task the top candidates and skip "
    "counts per criteria code)",
)
@cluster_options
def report(
    snapshot_path: str | None,
    task_ids: tuple[int, ...],
    all_tasks: bool,
    assignments: tuple[str, ...],
    fmt: str | None,
    out: str,
    quiet: bool,
    full: bool,
) -> None:
    """Export the brokerage of tasks (--task ID ...) or of every waiting task (--all) as CSV, JSON or HTML.

    Big grids are brokered on Dask: --scheduler ADDRESS (or DASK_SCHEDULER_ADDRESS), else an embedded cluster of
    --workers processes."""
    # brokerage.cli.main attaches this command while it is being imported, so its helpers are imported at call time
    from brokerage.cli.common import guarded

    if task_ids and all_tasks:
        raise click.UsageError("give either --task ID (repeatable) or --all, not both")
    if not task_ids and not all_tasks:
        raise click.UsageError("give --task ID (repeatable) or --all")
    guarded(_run)(
        snapshot_path, None if all_tasks else list(task_ids), assignments, _format_of(fmt, out), out, quiet, full
    )


def _origin(snapshot_path: str | None) -> str:
    if snapshot_path:
        return f"snapshot file {Path(snapshot_path).resolve()}"
    from brokerage.store import database

    # an unparsable URL already failed to load; never print what might hold a password
    shown = database.display_url(database.database_url())
    return "database" if shown is None else f"database {shown}"


def _run(
    snapshot_path: str | None,
    task_ids: list[int] | None,
    assignments: tuple[str, ...],
    fmt: str,
    out: str,
    quiet: bool,
    full: bool = False,
) -> None:
    from brokerage.cli.common import fail, grid_overrides, load_grid
    from brokerage.model.gdpconfig import parse_assignments
    from brokerage.report.build import build_report
    from brokerage.report.export import summary_default, write
    from brokerage.report.files import write_atomic
    from brokerage.report.progress import ProgressBar

    overrides = parse_assignments(assignments)
    target = Path(out)
    if not target.parent.is_dir():
        fail(f"cannot write {out}: the directory {target.parent} does not exist")
    snap, config = load_grid(snapshot_path)
    overrides = grid_overrides(snap, assignments)
    bar = None if quiet else ProgressBar()
    try:
        rep = build_report(
            snap, config, task_ids, overrides=overrides, meta={"origin": _origin(snapshot_path)}, progress=bar
        )
    finally:
        if bar is not None:
            bar.close()
    s = rep.summary
    if s["errors"]:
        # a report missing tasks would pass for a complete one: refuse it whole
        first = next(e for e in rep.tasks if e.error)
        fail(f"brokerage failed for {count(s['errors'], 'task')}, e.g. {first.task}: {first.error}; nothing written")
    summary = fmt == "json" and not full and summary_default(rep)
    t0 = time.perf_counter()
    try:
        size = write_atomic(target, lambda f: write(rep, fmt, f, gzipped=_gzipped(out), summary=summary))  # type: ignore[arg-type]
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    if not quiet:
        variant = " summary: top candidates and skip counts per task; --full for every skip" if summary else ""
        click.echo(
            f"wrote {out} ({fmt}{variant}, {size:,} bytes): {count(s['tasks'], 'task')}, {s['with_candidates']} with candidates, "
            f"{s['pending']} pending; brokerage {rep.meta['seconds']:.1f} s, writing {time.perf_counter() - t0:.1f} s",
            err=True,
        )
        if rep.whatif is not None:
            click.echo(_whatif_line(rep.whatif), err=True)


def _whatif_line(w: WhatIfSection) -> str:
    """One line on the report's before/after: decisions compared and changed, tasks moved, the first move and why."""
    moved = w.moved
    line = (f"before/after the edits: {count(w.compared, 'decision')} compared, {len(w.changes):,} changed, "
            f"{count(len({c.task for c in moved}), 'task')} moved")  # fmt: skip
    if moved:
        c = moved[0]
        line += f" (e.g. task {c.task}: {c.top_before or '-'} → {c.top_after or '-'}, {c.why[0] if c.why else ''})"
    return line
