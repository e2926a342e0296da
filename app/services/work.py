"""The long work behind the dashboard, as plain functions the job service runs on the Dask workers.

Each takes ``(report, *inputs)`` (``report(percent, label)`` raises Cancelled once the job is cancelled) and returns
plain data: grid runs, rows, report bytes, simulation results; never a component. The snapshot arrives as the
cluster's published copy and each worker keeps one GridCache per snapshot (``brokerage.runs.chunks.worker_cache``).
"""

from __future__ import annotations

import io
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.state.lru import Lru
from app.viewmodels import impact as ivm
from brokerage.brokers.batch import GridRun, Key
from brokerage.model.errors import InputError
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.whatif.impact import GridImpact

Report = Callable[[int, str], None]
RUN_KEEP_S = 6 * 3600  # the stored config's grid run is keyed on the snapshot and config versions: kept long
BASE_SHARE = 50  # percent of a what-if's bar spent waiting for the stored config's run when it is not ready yet
DIFF_STEPS = {"brokering the old grid": 10, "brokering the new grid": 35}  # the diff's bar per step; then 70


class DiffError(InputError, ValueError):
    """A diff request names something the database does not hold (the message says what is allowed)."""


@dataclass(frozen=True)
class GridWhatIf:
    """Every waiting task re-brokered under a what-if: the impact, how it ran, the moved tasks (the first ones
    explained), task names and the what-if config's fingerprint."""

    impact: GridImpact
    names: dict[int, str]
    config: str
    seconds: float
    recomputed: int
    reused: int
    moved: list[dict[str, Any]]


@dataclass(frozen=True)
class ReportFile:
    """A report made by a job: its file name, media type, bytes and the token its download link is filed under."""

    name: str
    media_type: str
    data: bytes
    token: str


def progress_of(report: Report, unit: str = "", start: int = 0, span: int = 100) -> Callable[[int, int], None]:
    """The core's (done, total) progress as REPORT(percent, label), mapped into START..START+SPAN percent.

    Usage: ``run_grid(snap, cfg, progress=progress_of(report, "brokerages"))``
    """

    def step(done: int, total: int) -> None:
        if total > 0:
            share = done / total
            label = f"{done:,} / {total:,} {unit}" if unit else f"{int(100 * share)} %"
            report(start + int(span * share), label)

    return step


def _cache(snap: GridSnapshot) -> Any:
    from brokerage.runs.chunks import worker_cache

    return worker_cache(snap)


# ---------------------------------------------------------------- grid runs and what-ifs


def base_job_id(snap_key: str, fingerprint: str) -> str:
    """The job of the stored config's grid run on a snapshot (one per snapshot and config version)."""
    return f"base:{snap_key}:{fingerprint}"


def base_run(report: Report, snap: GridSnapshot, config: Config) -> GridRun:
    """Every waiting task brokered under CONFIG (the stored config), on the cluster.

    Usage: (a job) ``jobs.start(base_job_id(snap.key, fp), base_run, snap_future, config)``
    """
    from brokerage import runs

    return runs.run_grid(snap, config, progress=progress_of(report), cache=_cache(snap))


_stored_runs: Lru[GridRun] = Lru(2)  # per worker process: the stored config's runs its what-ifs compare against


def _jobs_here() -> Any:
    """The job service as seen from inside a job (the worker's own client)."""
    from distributed import get_client

    from app.services.jobs import Jobs

    return Jobs(get_client)


def stored_run(report: Report, snap: GridSnapshot, config: Config, span: int = BASE_SHARE) -> tuple[GridRun, bool]:
    """The stored config's grid run from its job (started or joined), showing its progress in the first SPAN
    percent of REPORT while it is computed; and whether it had to be waited for."""
    job_id = base_job_id(snap.key, config.fingerprint())
    kept = _stored_runs.peek(job_id)
    if kept is not None:
        return kept, False
    jobs = _jobs_here()
    jobs.start(job_id, base_run, jobs.snapshot(snap), config, keep_s=RUN_KEEP_S, evict=False)
    waited = False
    while not (state := jobs.wait(job_id, 0.25)).finished:
        waited = True
        report(span * state.percent // 100, f"the stored config's run first: {state.label or 'starting'}")
    run = jobs.result(job_id)
    _stored_runs.put(job_id, run)
    return run, waited


def grid_whatif(report: Report, snap: GridSnapshot, stored: Config, config: Config, explained: int = 50) -> GridWhatIf:
    """Every waiting task re-brokered under CONFIG against the stored config's run; only brokers that read an
    edited key run again. The first EXPLAINED moved tasks say why they moved (two brokerages each).

    Usage: (a job) ``jobs.start(job_id, grid_whatif, snap_future, stored, stored.with_overrides(edits))``
    """
    from brokerage import runs
    from brokerage.whatif.impact import impact, rerun_grid

    before, waited = stored_run(report, snap, stored)
    cache = _cache(snap)
    if config.fingerprint() == stored.fingerprint():
        after = before
    else:
        start = BASE_SHARE if waited else 0
        after = rerun_grid(snap, before, stored, config, progress=progress_of(report, "", start, 100 - start),
                           run_with=runs.run_grid, cache=cache)  # fmt: skip
    im = impact(before, after)
    t = snap.tasks
    names = dict(zip(t["jeditaskid"].astype(int), t["taskname"].astype(str), strict=False)) if not t.empty else {}
    report(99, "explaining the moved tasks")
    moved = ivm.moved_rows(im, before, after, names, _explainer(snap, stored, config, cache), explained=explained)
    return GridWhatIf(im, names, config.fingerprint(), after.seconds, after.recomputed, after.reused, moved)


def _explainer(snap: GridSnapshot, stored: Config, config: Config, cache: Any) -> Callable[[Key], str]:
    """Why one task's brokerage moved between STORED and CONFIG: its two brokerages compared, in a sentence."""
    from brokerage.brokers.router import run_job_brokerage, run_nucleus_brokerage
    from brokerage.whatif.compare import compare

    def explain(key: Key) -> str:
        broker, tid = key
        run = run_nucleus_brokerage if broker == "task" else run_job_brokerage
        try:
            return ivm.why_moved(compare(run(snap, tid, stored, cache=cache), run(snap, tid, config, cache=cache)))
        except Exception as exc:  # one task's explanation must not hide the others
            return f"not explained: {type(exc).__name__}"

    return explain


# ---------------------------------------------------------------- reports


def report_file(
    report: Report, snap: GridSnapshot, config: Config, task: int | None, fmt: str, overrides: Mapping[str, Any],
    origin: str,
) -> ReportFile:  # fmt: skip
    """The report of TASK (every waiting task when None) under CONFIG + OVERRIDES, written in FMT; whole-grid CSV and
    JSON gzipped (the demo grid's skips run to 150 MB of JSON).

    Usage: (a job) ``jobs.start(job_id, report_file, snap_future, config, None, "csv", {}, "demo grid")``
    """
    from brokerage.report import MEDIA_TYPES, build_report, filename, summary_default, write

    made = build_report(snap, config, [int(task)] if task is not None else None, overrides=dict(overrides),
                        meta={"origin": f"dashboard · {origin}"}, progress=progress_of(report, "tasks", 0, 90),
                        cache=_cache(snap))  # fmt: skip
    report(90, "writing the file")
    gzipped = made.whole_grid and fmt in ("csv", "json")
    summary = fmt == "json" and summary_default(made)  # every waiting task: top candidates and skip counts
    name = filename(made, fmt, summary) + (".gz" if gzipped else "")  # type: ignore[arg-type]
    out = io.BytesIO()
    write(made, fmt, out, gzipped=gzipped, summary=summary)  # type: ignore[arg-type]
    report(100, "written")
    media = "application/gzip" if gzipped else MEDIA_TYPES[fmt]
    return ReportFile(name, media, out.getvalue(), secrets.token_hex(8))


# ---------------------------------------------------------------- grid-version diffs

_engines: dict[str, Any] = {}
_engines_lock = threading.Lock()


def database(url: str) -> Any:
    """This process's SQLAlchemy engine of URL (one per URL and worker process)."""
    with _engines_lock:
        if url not in _engines:
            from brokerage.store import database as store_database

            _engines[url] = store_database.make_engine(url, create=False)
        return _engines[url]


def grid_diff(report: Report, url: str, old: int, new: int, task: int | None, config: Config) -> dict[str, Any]:
    """``brokerage diff --from OLD --to NEW [--task TASK] --json`` of the database at URL under CONFIG, as a dict;
    DiffError for a task the old grid lacks.

    Usage: (a job) ``jobs.start(job_id, grid_diff, url, 3, 4, None, config)``
    """
    from brokerage.diff.attribute import diff_grids
    from brokerage.model.cache import GridCache
    from brokerage.model.views import task_row
    from brokerage.store.versions import load_version

    report(2, "loading both grid versions")
    engine = database(url)
    a, b = load_version(engine, old), load_version(engine, new)
    if task is not None:
        try:
            task_row(GridCache(a), task)
        except KeyError as exc:
            raise DiffError(f"task: {exc.args[0]}") from exc

    def say(step: str) -> None:
        report(DIFF_STEPS.get(step, 70), step)

    return diff_grids(a, b, config, task_ids=None if task is None else [task], progress=say).to_dict()


# ---------------------------------------------------------------- simulations


def one_simulation(
    report: Report, snap: GridSnapshot, config: Config, hours: float, seed: int, commands: Sequence[Any],
    panda_id: int | None = None,
) -> dict[str, Any]:  # fmt: skip
    """One simulation of CONFIG (a part of a simulation job), or with PANDA_ID its run replayed until that job is
    final; its progress in simulated minutes (a cancel stops it at the next minute)."""
    from brokerage.sim.engine import Simulation

    def progress(done: int, total: int) -> None:
        report(int(100 * done / max(total, 1)), f"{done:,} of {total:,} simulated minutes")

    if panda_id is not None:
        from brokerage.sim.replay import replay_job

        return replay_job(snap, config, seed, hours, panda_id, list(commands), progress)
    return Simulation(snap, config, seed=seed).run(hours, progress=progress, commands=list(commands)).result()


def _minutes(hours: float, runs: int) -> Callable[[int], str]:
    total = round(hours * 60) * runs

    def label(percent: int) -> str:
        return f"{total * percent // 100:,} of {total:,} simulated minutes"

    return label


def simulations(
    report: Report, snap: GridSnapshot, configs: Sequence[Config], labels: Sequence[str], hours: float, seed: int,
    commands: Sequence[Any], url: str | None, request: Mapping[str, Any],
) -> dict[str, Any]:  # fmt: skip
    """One simulation per config of CONFIGS, each a task of its own on the cluster, stored in the database at URL
    when there is one; the result with the REQUEST's fields and the stored run ids.

    Usage: (a job) ``jobs.start(job_id, simulations, snap_future, [stored, whatif], ["stored", "what-if"], 6, 0, ...)``
    """
    from app.services.jobs import run_parts

    here = _jobs_here().snapshot(snap)
    argsets = [(here, config, hours, seed, list(commands)) for config in configs]
    runs = run_parts(report, one_simulation, argsets, _minutes(hours, len(configs)))
    run_ids: list[int] = []
    if url:
        from brokerage.store.sim_runs import save_run

        engine = database(url)
        run_ids = [save_run(engine, result, snap, config, hours, seed, label)
                   for result, config, label in zip(runs, configs, labels, strict=True)]  # fmt: skip
    return {**request, "runs": runs, "snapshot": snap.key, "run_ids": run_ids}


def one_replica(
    report: Report, snap: GridSnapshot, config: Config, hours: float, seed: int, commands: Sequence[Any]
) -> dict[str, Any]:
    """One replica of a replicated comparison (a part of its job): the run's seed, headline and measures."""
    from brokerage.sim.engine import Simulation
    from brokerage.sim.measures import compact

    def progress(done: int, total: int) -> None:
        report(int(100 * done / max(total, 1)), f"{done:,} of {total:,} simulated minutes")

    return compact(Simulation(snap, config, seed=seed).run(hours, progress=progress, commands=list(commands)))


def replica_simulations(
    report: Report, snap: GridSnapshot, plan: Any, hours: float, replicas: int, seed: int, commands: Sequence[Any],
    url: str | None, request: Mapping[str, Any],
) -> dict[str, Any]:  # fmt: skip
    """PLAN's configs (brokerage.sim.replicas.Plan) REPLICAS times each, replica i with seed SEED + i for every
    config, each run a part of its own on the cluster; the paired summary with the REQUEST's fields, every run stored
    with its seed in the database at URL when there is one. The bar counts replicas.

    Usage: (a job) ``jobs.start(job_id, replica_simulations, snap_future, plan, 6, 10, 0, [], None, {})``
    """
    from app.services.jobs import run_parts
    from brokerage.sim.replicas import summarise

    here = _jobs_here().snapshot(snap)
    seeds = [seed + i for i in range(replicas)]
    n = len(plan.configs)
    argsets = [(here, cfg, hours, s, list(commands)) for s in seeds for cfg in plan.configs]  # replica by replica

    def label(percent: int) -> str:
        return f"{replicas * percent // 100} of {replicas} replicas done ({n} configs each)"

    flat = run_parts(report, one_replica, argsets, label)
    runs = {lb: [flat[i * n + c] for i in range(replicas)] for c, lb in enumerate(plan.labels)}
    doc = summarise(plan, runs, hours, seeds)
    run_ids: list[int] = []
    if url:
        from brokerage.store.sim_runs import save_run

        engine = database(url)
        configs = dict(zip(plan.labels, plan.configs, strict=True))
        run_ids = [save_run(engine, {"meta": {"seed": r["seed"]}, "headline": r["headline"], "measures": r["measures"]},
                            snap, configs[r["label"]], hours, r["seed"], r["label"][:40]) for r in doc["runs"]]  # fmt: skip
    return {**request, **doc, "labels": list(plan.labels), "snapshot": snap.key, "run_ids": run_ids}


def job_history(
    report: Report, snap: GridSnapshot, config: Config, hours: float, seed: int, commands: Sequence[Any], panda_id: int,
    shown: Mapping[str, Any],
) -> dict[str, Any]:  # fmt: skip
    """The run of CONFIG replayed until job PANDA_ID is final: its steps with their causes and its task's status
    changes (``brokerage.sim.replay``), with the fields of SHOWN added.

    Usage: (a job) ``jobs.start(job_id, job_history, snap_future, config, 6, 0, [], 1200, {"label": "stored"})``
    """
    out = one_simulation(report, snap, config, hours, seed, commands, panda_id)
    return {**out, **shown}
