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


def _off(run, hours: tuple[int, ...]) -> dict[tuple[str, int], tuple[int, int]]:
    """The (share, hour) samples more than 15 % away from the share's first sample: (start, then)."""
    times, running, names = run
    off = {}
    for hour in hours:
        now = running[int(np.argmin(np.abs(times - hour)))]
        for name, s, n in zip(names, running[0].tolist(), now.tolist(), strict=True):
            if abs(n - s) > 0.15 * s:
                off[(name, hour)] = (s, n)
    return off


def test_every_share_starts_with_running_jobs(run) -> None:
    """The grid tests every share: each of the 11 global shares runs jobs at the start (a share at 0 cannot be
    held within ±15 %)."""
    _, running, names = run
    assert len(names) == 11 and (running[0] > 0).all(), dict(zip(names, running[0].tolist(), strict=True))


def test_every_share_holds_for_24_hours(run) -> None:
    """Issue 30: "its running jobs per global share stay within ±15 % of the start over 24 h": every global share
    at 6, 12, 18 and 24 h, under the seed's dispatcher fairshare (the stored config). Under the switch
    age_ordered_dispatch_as_panda the small long-walltime shares leave the band (docs/lifecycle.md "Steady
    state"; benchmarks/steady_state.py measures both)."""
    assert not _off(run, HOURS), _off(run, HOURS)


def test_the_grid_total_holds_within_5_percent(run) -> None:
    """Issue 30: the grid no longer drains: all shares together within ±5 % of the start at every sample (the
    queues stay full; the shares trade slots only within the ±15 % above)."""
    _, running, _ = run
    total = running.sum(axis=1)
    assert np.all(np.abs(total - total[0]) <= 0.05 * total[0]), (total[0], total.min(), total.max())
