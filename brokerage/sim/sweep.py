"""Many simulations of one grid at once (stored vs what-if, or a parameter sweep) on the Dask run engine."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.runs import chunks, engine, tracked
from brokerage.sim.commands import TaskCommand
from brokerage.sim.engine import TICK_S, Simulation
from brokerage.sim.measures import compact
from brokerage.sim.replay import replay_job
from brokerage.sim.replicas import Plan, summarise

Progress = Callable[[int, int], None]  # (simulated minutes done over all runs, total)
Cancel = Callable[[], bool]
MAX_REPLICAS = 100


def _one_run(
    snap: GridSnapshot, config: Config, hours: float, seed: int, commands: Sequence[TaskCommand],
    progress: Progress | None, panda_id: int | None,
) -> dict[str, Any]:  # fmt: skip
    """One run's result, or with PANDA_ID the replayed history of that job (brokerage.sim.replay)."""
    if panda_id is not None:
        return replay_job(snap, config, seed, hours, panda_id, commands, progress)
    return Simulation(snap, config, seed=seed).run(hours, progress=progress, commands=commands).result()


def _reporting_run(
    snap: GridSnapshot, config: Config, hours: float, seed: int, commands: Sequence[TaskCommand],
    panda_id: int | None, report: Progress,
) -> dict[str, Any]:  # fmt: skip
    """Worker side of one simulation (runs.tracked calls it with its step reporter)."""
    return _one_run(snap, config, hours, seed, commands, report, panda_id)


def _use_cluster(client: Any) -> bool:
    return client is not None or engine.scheduler_address() is not None or engine.local_workers() > 0


def simulate_many(
    snap: GridSnapshot,
    configs: Sequence[Config],
    hours: float,
    seed: int = 0,
    *,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    client: Any = None,
    commands: Sequence[TaskCommand] = (),
    panda_id: int | None = None,
) -> list[dict[str, Any]]:
    """One run per config of CONFIGS from the same seed, each a task of its own on the cluster (the snapshot sent
    once), PROGRESS(minutes done, total) from the first second; result ``i`` equals
    ``Simulation(snap, configs[i], seed).run(hours).result()``. CANCEL() returning True stops the runs and raises
    ``Cancelled``. COMMANDS (task commands at simulated times) apply to every run. With PANDA_ID each run is replayed only until that job is final and gives its history
    (brokerage.sim.replay). Without a cluster (BROKERAGE_DASK_WORKERS=0) the runs go one after the other here.

    Usage: ``stored, whatif = simulate_many(snap, [config, config.with_overrides(edits)], hours=24)``
    """
    ticks = round(hours * 3600 / TICK_S)
    total = ticks * len(configs)
    if not _use_cluster(client):
        out = []
        for i, cfg in enumerate(configs):

            def step(done: int, _t: int, base: int = i * ticks) -> None:
                if cancel and cancel():
                    raise chunks.Cancelled(f"cancelled after {base + done} of {total} simulated minutes")
                if progress:
                    progress(base + done, total)

            out.append(_one_run(snap, cfg, hours, seed, commands, step, panda_id))
        return out
    items = [(cfg, float(hours), int(seed), list(commands), panda_id) for cfg in configs]
    return tracked.run_tracked(
        _reporting_run, snap, items, steps=ticks, progress=progress, cancel=cancel, client=client
    )


def _replica_run(
    snap: GridSnapshot,
    config: Config,
    hours: float,
    seed: int,
    commands: Sequence[TaskCommand],
    report: Progress | None,
) -> dict[str, Any]:
    """Worker side of one replica: the run's seed, headline and measures (brokerage.sim.measures.compact)."""
    return compact(Simulation(snap, config, seed=seed).run(hours, progress=report, commands=commands))


def simulate_replicas(
    snap: GridSnapshot,
    configs: Sequence[Config],
    hours: float,
    seeds: Sequence[int],
    *,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    client: Any = None,
    commands: Sequence[TaskCommand] = (),
) -> list[list[dict[str, Any]]]:
    """Every config of CONFIGS run once per seed of SEEDS (common random numbers: replica i of each config uses
    seeds[i]), each run a task of its own on the cluster, submitted replica by replica so that whole replicas end
    first; ``out[c][i]`` is the compact run (seed, headline, measures) of configs[c] with seeds[i]. PROGRESS gets
    simulated minutes over all runs; CANCEL() returning True stops them all and raises ``Cancelled``.

    Usage: ``runs = simulate_replicas(snap, [stored, whatif], hours=2, seeds=range(10))``
    """
    pairs = [(cfg, int(seed)) for seed in seeds for cfg in configs]  # replica-major
    ticks = round(hours * 3600 / TICK_S)
    total = ticks * len(pairs)
    if not _use_cluster(client):
        flat = []
        for i, (cfg, seed) in enumerate(pairs):

            def step(done: int, _t: int, base: int = i * ticks) -> None:
                if cancel and cancel():
                    raise chunks.Cancelled(f"cancelled after {base + done} of {total} simulated minutes")
                if progress:
                    progress(base + done, total)

            flat.append(_replica_run(snap, cfg, hours, seed, commands, step))
    else:
        items = [(cfg, float(hours), seed, list(commands)) for cfg, seed in pairs]
        flat = tracked.run_tracked(_replica_run, snap, items, steps=ticks, progress=progress, cancel=cancel,
                                   client=client)  # fmt: skip
    n = len(configs)
    return [[flat[i * n + c] for i in range(len(seeds))] for c in range(n)]


def replicate(
    snap: GridSnapshot, plan: Plan, hours: float, replicas: int, first_seed: int = 0, *,
    progress: Progress | None = None, cancel: Cancel | None = None, client: Any = None,
    commands: Sequence[TaskCommand] = (),
) -> dict[str, Any]:  # fmt: skip
    """Run PLAN's configs REPLICAS times each (replica i: seed FIRST_SEED + i for every config) on the Dask engine and
    summarise: the compare or sweep rows, the verdict in words, and every run with its seed.

    Usage: ``doc = replicate(snap, compare_plan(config, {"THROTTLE_THRESHOLD": 1.5}), hours=2, replicas=10)``
    """
    if not 1 <= replicas <= MAX_REPLICAS:
        raise ValueError(f"replicas: {replicas} is not allowed; expected 1 to {MAX_REPLICAS}")
    seeds = [first_seed + i for i in range(replicas)]
    out = simulate_replicas(snap, plan.configs, hours, seeds, progress=progress, cancel=cancel, client=client,
                            commands=commands)  # fmt: skip
    return summarise(plan, dict(zip(plan.labels, out, strict=True)), hours, seeds)
