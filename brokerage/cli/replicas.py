"""``brokerage simulate --replicas N``: replicated stored-vs-what-if runs (or a sweep) with paired 95 % intervals."""

from __future__ import annotations

import json
from typing import Any

import click

from brokerage.cli.common import fail
from brokerage.cli.figures import figure

SWEEP_VALUES_MAX = 20


def parse_sweep(snap: Any, text: str) -> tuple[str, list[Any]]:
    """``KEY=v1,v2,...`` as (KEY, typed values), each value checked like ``--set KEY=VALUE``; exit 2 naming the
    refused one."""
    from brokerage.cli.common import grid_overrides

    if "=" not in text or not text.split("=", 1)[1].strip():
        fail(f"--sweep: {text!r} is not allowed; expected KEY=v1,v2,... (e.g. THROTTLE_THRESHOLD=1.0,1.5,2.0)")
    key, raw = (x.strip() for x in text.split("=", 1))
    values = [v.strip() for v in raw.split(",") if v.strip()]
    if not 1 <= len(values) <= SWEEP_VALUES_MAX:
        fail(f"--sweep: {len(values)} values; expected 1 to {SWEEP_VALUES_MAX}")
    return key, [grid_overrides(snap, (f"{key}={v}",))[key] for v in values]


def run_replicated(
    snap: Any, config: Any, edits: dict[str, Any], hours: float, replicas: int, seed: int, sweep: str | None,
    cmds: Any, quiet: bool,
) -> dict[str, Any]:  # fmt: skip
    """The replicated comparison (or sweep) on the Dask engine with a bar counting replicas."""
    from brokerage.report.progress import ProgressBar
    from brokerage.sim.replicas import compare_plan, sweep_plan
    from brokerage.sim.sweep import replicate

    if sweep:
        key, values = parse_sweep(snap, sweep)
        plan = sweep_plan(config, key, values, edits)
    else:
        plan = compare_plan(config, edits)
    n = len(plan.configs)
    bar = None if quiet else ProgressBar(unit=f"replicas ({n} configs each)")

    def progress(done: int, total: int) -> None:
        if bar:
            bar(done * replicas // max(total, 1), replicas)  # whole replicas: every config of seed i done

    doc = replicate(snap, plan, hours, replicas, seed, progress=progress, commands=cmds)
    if bar:
        bar(replicas, replicas)
        bar.close()
    return doc


def _interval(lo: float | None, hi: float | None) -> str:
    return "-" if lo is None or hi is None else f"{_signed(lo)} to {_signed(hi)}"


def _signed(x: float | None) -> str:
    text = figure(x)
    return text if text.startswith("-") or text == "-" else f"+{text}"


def compare_lines(doc: dict[str, Any]) -> list[str]:
    """The replicated comparison as a table: means, paired difference, 95 % interval, real or not; the attribution
    under each measure with a real difference; the verdict in words."""
    seeds = doc["seeds"]
    lines = [f"{doc['replicas']} replicas of {doc['hours']:g} h (seeds {seeds[0]} to {seeds[-1]}, the same for both "
             f"configs); {doc['method']}", "",
             f"{'measure':<44} {'stored':>10} {'what-if':>10} {'difference':>11} {'95 % interval':>22}  real?"]  # fmt: skip
    for row in doc["measures"]:
        m = row["means"]
        lines.append(f"{row['name'][:44]:<44} {figure(m['stored']):>10} {figure(m['what-if']):>10} "
                     f"{_signed(row['difference']):>11} {_interval(*row['interval']):>22}  "
                     f"{'yes' if row['significant'] else 'no'}")  # fmt: skip
        if row["significant"] and row.get("attribution"):
            for part in row["attribution"]:
                lines.append(f"    {part['key'][:40]:<40} {'':>21} {_signed(part['difference']):>11} "
                             f"{_interval(*part['interval']):>22}  {'yes' if part['significant'] else 'no'}")  # fmt: skip
    lines.append("")
    lines.extend(["Real differences:", *(f"  {s}" for s in doc["verdict"]["real"])] if doc["verdict"]["real"]
                 else ["No real difference on any measure."])  # fmt: skip
    if doc["verdict"]["not_real"] and doc["verdict"]["real"]:
        lines.append("No real difference: " + ", ".join(doc["verdict"]["not_real"]))
    return lines


def sweep_lines(doc: dict[str, Any]) -> list[str]:
    """The sweep: per measure, the stored mean and each value's mean with its 95 % interval, marked * where the
    paired difference from the stored config is real."""
    key = doc["keys"][0]
    head = [f"{doc['replicas']} replicas of {doc['hours']:g} h per value of {key} (seeds {doc['seeds'][0]} to "
            f"{doc['seeds'][-1]}); {doc['method']}; * = a real difference from the stored config", ""]  # fmt: skip
    cols = ["stored", *map(str, doc["values"])]
    lines = [*head, f"{'measure':<40} " + " ".join(f"{c[:22]:>24}" for c in cols)]
    for row in doc["measures"]:
        s = row["stored"]
        cells = [f"{figure(s['mean'])} [{_interval(*s['interval'])}]"]
        for p in row["points"]:
            mark = "*" if p["difference"]["significant"] else " "
            cells.append(f"{figure(p['mean'])} [{figure(p['interval'][0])}, {figure(p['interval'][1])}]{mark}")
        lines.append(f"{row['name'][:40]:<40} " + " ".join(f"{c:>24}" for c in cells))
    return lines


def print_doc(doc: dict[str, Any], as_json: bool) -> None:
    """The document as JSON, or as the table a person reads."""
    if as_json:
        click.echo(json.dumps(doc, default=str, sort_keys=True))
        return
    for line in sweep_lines(doc) if doc["kind"] == "sweep" else compare_lines(doc):
        click.echo(line)


def store_replicas(snap: Any, doc: dict[str, Any], configs: dict[str, Any], hours: float) -> None:
    """Keep every replica run (its seed, headline and measures) in the database the grid came from."""
    from brokerage.store import database, errors
    from brokerage.store.sim_runs import save_run

    engine = database.make_engine(database.database_url(), create=False)
    try:
        with errors.database_errors():
            ids = [save_run(engine, {"meta": {"seed": r["seed"]}, "headline": r["headline"], "measures": r["measures"]},
                            snap, configs[r["label"]], hours, r["seed"], r["label"][:40]) for r in doc["runs"]]  # fmt: skip
    except errors.StoreError as exc:
        fail(f"the runs finished but could not be stored: {exc}")
    finally:
        engine.dispose()
    click.echo(f"stored {len(ids)} replica runs as runs {ids[0]} to {ids[-1]} (brokerage sim-runs)", err=True)
