"""A cluster that heals (issue #34 item 4): a grid run after every worker of an external cluster died sends the
grid again and succeeds; a run that keeps losing its workers says so instead of hanging or crashing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from distributed import Client, LocalCluster

from brokerage.brokers.batch import run_grid_serial
from brokerage.model.errors import ClusterLost
from brokerage.model.gdpconfig import Config
from brokerage.runs import chunks, grid
from brokerage.synth.demo import demo_snapshot

SNAP = demo_snapshot(seed=3, queues=40, tasks=300)


@pytest.fixture(scope="module")
def external() -> Iterator[Client]:
    """A separate cluster (scheduler and two worker processes with nannies), reached by address as an external one."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:  # fmt: skip
        client = Client(cluster.scheduler_address, set_as_default=False)
        yield client
        client.close()


def test_a_run_after_every_worker_died_sends_the_grid_again(external: Client) -> None:
    """After every worker of the cluster is killed once (the scattered grid dies with them), the next grid run
    finds the grid lost, sends it again and gives the serial run's outcomes."""
    config = Config()
    first = grid.run_grid(SNAP, config, client=external)
    assert first.outcomes == run_grid_serial(SNAP, config).outcomes
    external.restart()  # kills every worker process; the nannies start new, empty ones
    again = grid.run_grid(SNAP, config, client=external)
    assert again.outcomes == first.outcomes


def _die(snap: Any, cache: Any, payload: Any, items: Any) -> int:
    os._exit(1)  # the worker process dies while running this chunk


def test_a_run_that_keeps_losing_its_workers_says_what_happened(external: Client) -> None:
    """Chunks that kill their worker every time: after one retry with the grid sent again, ClusterLost names what
    happened (no hang, no traceback of Dask's)."""
    with pytest.raises(ClusterLost, match="lost its workers twice during this run"):
        chunks.map_chunks(_die, SNAP, list(range(300)), client=external)
