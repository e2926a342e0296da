"""Many simulations of one grid at once (stored vs what-if, or a parameter sweep) on the Dask run engine."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.runs import chunks, engine
from brokerage.sim.commands import TaskCommand
from brokerage.sim.engine import TICK_S, Simulation
from brokerage.sim.replay import replay_job

Progress = Callable[[int, int], None]  # (simulated minutes done over all runs, total)
Cancel = Callable[[], bool]
POLL_S = 0.25  # how often the caller reads the workers' progress
REPORT_EVERY = 5  # ticks between two progress reports of a worker


def _one_run(
    snap: GridSnapshot, config: Config, hours: float, seed: int, commands: Sequence[TaskCommand],
    progress: Progress | None, panda_id: int | None,
) -> dict[str, Any]:  # fmt: skip
    """One run's result, or with PANDA_ID the replayed history of that job (brokerage.sim.replay)."""
    if panda_id is not None:
        return replay_job(snap, config, seed, hours, panda_id, commands, progress)
    return Simulation(snap, config, seed=seed).run(hours, progress=progress, commands=commands).result()


def _run_on_worker(
    snap: GridSnapshot, config: Config, hours: float, seed: int, key: str, commands: Sequence[TaskCommand] = (),
    panda_id: int | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Worker side of one simulation: reports its ticks done under the Dask Variable KEY while it runs."""
    from distributed import Variable, get_client

    var = Variable(key, client=get_client())

    def report(done: int, total: int) -> None:
        if done % REPORT_EVERY == 0 or done == total:
            var.set(done)

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
    from distributed import Variable

    client = client or engine.get_client()
    snap_fut = chunks.snapshot_future(client, snap)
    keys = [f"brokerage-sim-{uuid.uuid4().hex}" for _ in configs]
    variables = [Variable(key, client=client) for key in keys]
    for v in variables:
        v.set(0)  # set before the runs start, so reading it never waits (an unset Variable's get times out noisily)
    if progress:
        progress(0, total)  # the bar is there from the start; it moves once the workers have set up their runs
    futures = [
        client.submit(_run_on_worker, snap_fut, cfg, float(hours), int(seed), key, list(commands), panda_id, pure=False)
        for cfg, key in zip(configs, keys, strict=True)
    ]
    try:
        while not all(f.done() for f in futures):
            if cancel and cancel():
                raise chunks.Cancelled("simulation cancelled")
            if progress:
                progress(sum(_ticks_done(v, f, ticks) for v, f in zip(variables, futures, strict=True)), total)
            time.sleep(POLL_S)
        results = client.gather(futures)
    except BaseException:
        client.cancel(futures)
        raise
    finally:
        for v in variables:
            v.delete()
    if progress:
        progress(total, total)
    return list(results)


def _ticks_done(var: Any, fut: Any, ticks: int) -> int:
    if fut.done():
        return ticks
    return int(var.get(timeout=1))
