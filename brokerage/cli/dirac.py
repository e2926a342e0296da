"""``brokerage dirac``: DIRAC task queues and the pilot matcher from the command line."""

from __future__ import annotations

import json
from typing import Any

import click

from brokerage.cli.common import fail, grid_overrides, guarded, load_grid
from brokerage.dirac.matcher import match, task_queues
from brokerage.dirac.pilot import PilotError

_SET_HELP = "what-if gdpconfig override, e.g. DIRAC_CPU_ORDER=false (repeatable)"


@click.group("dirac")
def dirac() -> None:
    """DIRAC task-queue matching (seed 004): task queues and pilot matching."""


@dirac.command("taskqueues")
@click.option(
    "--snapshot", "snapshot_path", type=click.Path(exists=True, dir_okay=False), help="snapshot JSON (default: DB)"
)
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help=_SET_HELP)
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@guarded
def taskqueues_cmd(snapshot_path: str | None, assignments: tuple[str, ...], as_json: bool) -> None:
    """List the task queues built from the waiting jobs: requirements, CPU bucket, Priority, jobs."""
    snap, config = load_grid(snapshot_path)
    config = config.with_overrides(grid_overrides(snap, assignments))
    tqs = task_queues(snap, config)
    rows = [tqs.definition(i) for i in range(len(tqs))]
    if as_json:
        out = {"buckets": list(tqs.buckets), "taskqueues": rows, "jobs": int(tqs.njobs.sum())}
        click.echo(json.dumps(out, indent=1))
        return
    click.echo(f"{len(rows)} task queues, {int(tqs.njobs.sum())} waiting jobs, buckets {list(tqs.buckets)} s")
    click.echo(f"{'id':>5} {'jobs':>5} {'CPUTime':>8} {'Priority':>10}  owner/group  requirements")
    for r in rows:
        req = "; ".join(
            f"{k}={','.join(r[k])}"
            for k in ("Sites", "BannedSites", "GridCEs", "Platforms", "JobTypes", "Tags")
            if r[k]
        )
        prio = "-" if r["Priority"] is None else f"{r['Priority']:.4f}"
        click.echo(f"{r['id']:>5} {r['Jobs']:>5} {r['CPUTime']:>8} {prio:>10}  {r['Owner']}/{r['OwnerGroup']}  {req}")


@dirac.command("match")
@click.option(
    "--snapshot", "snapshot_path", type=click.Path(exists=True, dir_okay=False), help="snapshot JSON (default: DB)"
)
@click.option("--pilot", required=True, help="resource description, e.g. 'Site=LCG.CERN.cern,CPUTime=40000'")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help=_SET_HELP)
@click.option("--seed", default=0, show_default=True, type=int, help="seed of the random draws")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@guarded
def match_cmd(snapshot_path: str | None, pilot: str, assignments: tuple[str, ...], seed: int, as_json: bool) -> None:
    """Match one pilot: which task queue and job it would take, each queue's chance, and why not the others."""
    snap, config = load_grid(snapshot_path)
    config = config.with_overrides(grid_overrides(snap, assignments))
    try:
        result = match(snap, pilot, config, seed=seed)
    except PilotError as exc:
        fail(exc.line())
    out = result.to_dict()
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    _print(out)


def _print(out: dict[str, Any]) -> None:
    if out["status"] == "refused":
        click.echo(f"refused: {out['message']}")
        return
    m = out["matched"]
    if m is None:
        click.echo(out["message"])
    else:
        click.echo(
            f"matched task queue {m['taskqueue']} (probability {m['probability']:.4f}), job {m['job']} "
            f"(user priority {m['job_priority']}, probability {m['job_probability']:.4f} within the queue)"
        )
    for f in out["funnel"]:
        if f["before"] != f["after"]:
            click.echo(f"{f['before']:>6} -> {f['after']:>5} : {f['filter']}")
    for t in out["taskqueues"]:
        if t["verdict"] in ("matched", "eligible"):
            click.echo(f"  TQ {t['id']:>5} {t['verdict']:<9} p={t['probability']:.4f} Priority={t['priority']}")
    excluded = [t for t in out["taskqueues"] if t["verdict"] in ("excluded", "outranked")]
    click.echo(f"{len(excluded)} task queues not eligible (--json for every reason)")
