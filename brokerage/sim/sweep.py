"""Many simulations of one grid at once (stored vs what-if, or a parameter sweep) on the Dask run engine."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from brokerage.cache import GridCache
from brokerage.gdpconfig import Config
from brokerage.runs import chunks
from brokerage.sim.engine import Simulation
from brokerage.snapshot import GridSnapshot

Payload = tuple[list[Config], float, int]


def simulate_chunk(
    snap: GridSnapshot, _cache: GridCache, payload: Payload, items: Sequence[int]
) -> list[tuple[int, dict[str, Any]]]:
    """Worker side: the result of each simulation (config index) of ITEMS."""
    configs, hours, seed = payload
    return [(i, Simulation(snap, configs[i], seed=seed).run(hours).result()) for i in items]


def simulate_many(
    snap: GridSnapshot,
    configs: Sequence[Config],
    hours: float,
    seed: int = 0,
    *,
    progress: Callable[[int, int], None] | None = None,
    client: Any = None,
) -> list[dict[str, Any]]:
    """One run per config of CONFIGS from the same seed, each a work item on the cluster (the snapshot sent once);
    result ``i`` equals ``Simulation(snap, configs[i], seed).run(hours).result()``. Without a cluster
    (BROKERAGE_DASK_WORKERS=0) they run here one after the other.

    Usage: ``stored, whatif = simulate_many(snap, [config, config.with_overrides(edits)], hours=24)``
    """
    items = list(range(len(configs)))
    parts = chunks.map_chunks(
        simulate_chunk, snap, items, (list(configs), float(hours), int(seed)),
        progress=progress, client=client, min_chunk=1, min_cluster_items=2,
    )  # fmt: skip
    results: list[dict[str, Any]] = [{} for _ in configs]
    for part in parts:
        for i, result in part:
            results[i] = result
    return results
