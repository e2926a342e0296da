"""Issue 30, "the demo grid is built so that its counts are ones the simulator sustains: under the stored config its
running jobs per global share stay within ±15 % of the start over 24 h", on a smaller grid made by the same
generator (seed 0, 60 queues, 300 tasks: every share has tasks and running jobs)."""

from __future__ import annotations

import numpy as np
import pytest

from brokerage.model.gdpconfig import Config
from brokerage.sim.engine import Simulation
from brokerage.synth.demo import demo_snapshot

HOURS = (6, 12, 18, 24)


@pytest.fixture(scope="module")
def run() -> tuple[np.ndarray, np.ndarray, list[str]]:
    """24 simulated hours of the small demo grid under the stored config: sample times (h), running per share."""
    sim = Simulation(demo_snapshot(seed=0, queues=60, tasks=300), Config(), seed=0).run(24.0)
    leaves = [i for i in range(len(sim.g.shares)) if i >= len(sim.g.tree.names) or sim.g.tree.leaf[i]]
    running = np.vstack(sim.series.share["running"])[:, leaves]
    return np.asarray(sim.series.times) / 3600.0, running, [sim.g.shares[i] for i in leaves]


def test_every_global_share_keeps_its_running_jobs_within_15_percent(run) -> None:
    """Issue 30: "under the stored config its running jobs per global share stay within ±15 % of the start over
    24 h": each of the 11 shares, at 6, 12, 18 and 24 h, against its first sample (the snapshot's running jobs
    and the sent and starting ones the pilots confirm in the first minute)."""
    times, running, names = run
    start = running[0]
    assert (start > 0).all(), dict(zip(names, start.tolist(), strict=True))
    off = {}
    for hour in HOURS:
        now = running[int(np.argmin(np.abs(times - hour)))]
        for name, s, n in zip(names, start.tolist(), now.tolist(), strict=True):
            if abs(n - s) > 0.15 * s:
                off[(name, hour)] = (s, n)
    assert not off, off


def test_the_grid_total_holds_within_5_percent(run) -> None:
    """Issue 30: the grid no longer drains: all shares together within ±5 % of the start at every sample (the
    queues stay full; the shares trade slots only within the ±15 % above)."""
    _, running, _ = run
    total = running.sum(axis=1)
    assert np.all(np.abs(total - total[0]) <= 0.05 * total[0]), (total[0], total.min(), total.max())
