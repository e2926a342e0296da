"""Step 4's all-capped rule in the simulator's kept brokerage (``brokering.live``), hand-computed: seeds 001 and
003 keep the 3 best weights, PanDA's code (switch all_capped_wait) lets the task wait."""

from __future__ import annotations

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.sim import brokering
from brokerage.sim.engine import Simulation
from tests.builders import dataset, queue, sim_grid_snapshot, task

WEIGHTS = np.array([0.275, 0.35, 0.2, 0.1])  # A, B, C, D as brokered at the refresh
RUNNING = np.array([10.0, 20.0, 5.0, 1.0])
QUEUED = np.array([30.0, 50.0, 20.0, 10.0])  # every queue holds more than 2 x running: all capped


def _live(**overrides: object) -> tuple[list[int], list[float]]:
    """The kept brokerage of task 1 over queues A-D read on live counts equal to the refresh's (nothing moved)."""
    snap = sim_grid_snapshot([queue(q, f"S{q}") for q in "ABCD"], [task(1)],
                             datasets=[dataset(1, 1, nfiles=10, nevents=100, neventsused=0)])  # fmt: skip
    sim = Simulation(snap, Config().with_overrides(overrides), seed=0)
    brokering.tick(sim, 0.0)
    sim.live_counts = brokering.count_live(sim)  # as the JobGenerator reads them: nothing moved since
    queues = np.array([sim.qi[q] for q in "ABCD"], np.int64)
    kept, p = brokering.live(sim, 1, queues, WEIGHTS, RUNNING, QUEUED)
    return [int(k) for k in kept], [round(float(x), 4) for x in p]


def test_all_capped_keeps_the_3_best_weights() -> None:
    """Seeds 001 and 003: "If all sites are skipped candidates with the 3 best weights go to the next step.": with
    A-D all over 2 x running, B (0.35), A (0.275) and C (0.2) stay, drawn by weight over 0.825."""
    kept, p = _live()
    assert kept == [0, 1, 2] and p == [round(0.275 / 0.825, 4), round(0.35 / 0.825, 4), round(0.2 / 0.825, 4)]


def test_all_capped_lets_the_task_wait_under_panda() -> None:
    """PanDA's code ("available sites all capped", switch all_capped_wait of panda-1.0.4): no queue stays, the
    task waits; ALL_CAPPED_KEEP_BEST=0 does the same under the seed profile."""
    assert _live(RULES="panda-1.0.4") == ([], [])
    assert _live(ALL_CAPPED_KEEP_BEST=0) == ([], [])
