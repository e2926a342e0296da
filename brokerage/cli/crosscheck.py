"""The ``brokerage crosscheck`` command: the same grid through PanDA's own brokers and ours, compared."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("crosscheck")
@click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False), help="snapshot JSON (default: DB)")
@click.option("--random-grids", "random_grids", type=click.IntRange(1, 100000), help="N random grids instead")
@click.option("--seed", default=1, show_default=True, type=int, help="seed of the first random grid")
@click.option(
    "--brokers", default="prod,nucleus,anal", show_default=True,
    help="which brokers to compare; 'dirac' (on its own) runs DIRAC's TaskQueueDB and Matcher (scripts/dirac.sh)",
)  # fmt: skip
@click.option("--max-tasks", type=click.IntRange(1), default=None, help="at most this many tasks per grid")
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help="gdpconfig override (both sides)")
@click.option("--json", "as_json", is_flag=True, help="print the whole report as JSON (per task and per queue)")
@click.option("--html", "html_path", type=click.Path(dir_okay=False), help="also write an HTML report here")
@click.option("--strict", is_flag=True, help="exit 1 on any difference the allow-list does not cover (the CI lane)")
def crosscheck(
    snapshot_path: str | None, random_grids: int | None, seed: int, brokers: str, max_tasks: int | None,
    assignments: tuple[str, ...], as_json: bool, html_path: str | None, strict: bool,
) -> None:  # fmt: skip
    """Run PanDA's own brokers (panda-server 1.0.4, offline) and ours on the same grid and compare every verdict.

    Needs PanDA's code, set up by scripts/panda.sh outside the repository; exits 2 saying so when it is missing.
    """
    from brokerage.cli.common import fail, guarded
    from brokerage.crosscheck.panda import PandaFailed, PandaMissing, find_panda

    wanted = tuple(b.strip() for b in brokers.split(",") if b.strip())
    unknown = [b for b in wanted if b not in ("prod", "nucleus", "anal", "dirac")]
    if unknown:
        fail(f"unknown broker {', '.join(unknown)}; choose from prod, nucleus, anal, or dirac")
    if "dirac" in wanted:
        if len(wanted) > 1:
            fail("--brokers dirac runs on its own (DIRAC's grids are not PanDA's); choose prod, nucleus, anal or dirac")
        report = _dirac(snapshot_path, random_grids, seed, assignments, as_json, html_path)
        if strict and (n := report.not_allowed()):
            click.echo(f"crosscheck: {n} difference(s) with DIRAC", err=True)
            raise SystemExit(1)
        return
    try:
        env = find_panda()
    except PandaMissing as exc:
        fail(str(exc))
    try:
        report = guarded(_run)(
            env, snapshot_path, random_grids, seed, wanted, max_tasks, assignments, as_json, html_path
        )
    except PandaFailed as exc:
        fail(str(exc))
    if strict and (n := report.not_allowed()):
        click.echo(f"crosscheck: {n} difference(s) not in the allow-list (brokerage/crosscheck/allowlist.py)", err=True)
        raise SystemExit(1)


def _run(
    env: object, snapshot_path: str | None, random_grids: int | None, seed: int, wanted: tuple[str, ...],
    max_tasks: int | None, assignments: tuple[str, ...], as_json: bool, html_path: str | None,
) -> object:  # fmt: skip
    from brokerage.cli.common import grid_overrides, load_grid
    from brokerage.crosscheck.generator import random_grid
    from brokerage.crosscheck.render import page, text
    from brokerage.crosscheck.run import crosscheck as run_crosscheck
    from brokerage.model.gdpconfig import Config, parse_assignments

    parse_assignments(assignments)
    if random_grids:
        snaps = [random_grid(seed + i) for i in range(random_grids)]
        grids = [(s, Config().with_overrides(grid_overrides(s, assignments))) for s in snaps]
    else:
        snap, config = load_grid(snapshot_path)
        grids = [(snap, config.with_overrides(grid_overrides(snap, assignments)))]
    report = run_crosscheck(grids, env, wanted, max_tasks)  # type: ignore[arg-type]
    if html_path:
        Path(html_path).write_text(page(report))
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=1, default=str))
    else:
        for line in text(report):
            click.echo(line)
    return report


def _dirac(
    snapshot_path: str | None, random_grids: int | None, seed: int, assignments: tuple[str, ...], as_json: bool,
    html_path: str | None,
) -> object:  # fmt: skip
    from brokerage.cli.common import fail, grid_overrides, guarded, load_grid
    from brokerage.crosscheck.dirac_convert import ce_pilots
    from brokerage.crosscheck.dirac_env import DiracFailed, DiracMissing, find_dirac
    from brokerage.crosscheck.dirac_grids import random_dirac_grid
    from brokerage.crosscheck.dirac_run import crosscheck_dirac
    from brokerage.model.gdpconfig import Config, parse_assignments

    try:
        env = find_dirac()
    except DiracMissing as exc:
        fail(str(exc))

    def run() -> object:
        parse_assignments(assignments)
        if random_grids:
            grids = []
            for i in range(random_grids):
                snap, pilots, drawn = random_dirac_grid(seed + i)
                config = Config().with_overrides({**drawn, **grid_overrides(snap, assignments)})
                grids.append((snap, config, pilots))
        else:
            snap, config = load_grid(snapshot_path)
            grids = [(snap, config.with_overrides(grid_overrides(snap, assignments)), ce_pilots(snap))]
        return _show(crosscheck_dirac(grids, env), as_json, html_path)

    try:
        return guarded(run)()
    except DiracFailed as exc:
        fail(str(exc))


def _show(report: object, as_json: bool, html_path: str | None) -> object:
    from brokerage.crosscheck.render import page, text

    if html_path:
        Path(html_path).write_text(page(report))  # type: ignore[arg-type]
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=1, default=str))  # type: ignore[attr-defined]
    else:
        for line in text(report):  # type: ignore[arg-type]
            click.echo(line)
    return report
