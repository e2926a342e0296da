"""The demo grid as `brokerage db init` stores it: the demo tables and a task status history made by the simulator."""

from __future__ import annotations

from brokerage.model.snapshot import GridSnapshot
from brokerage.synth.demo import demo_snapshot
from brokerage.synth.history import simulate_task_history


def demo_grid(seed: int = 0) -> GridSnapshot:
    """The demo grid of brokerage.synth.demo with a simulated task status history (seeded alike).

    Usage: ``save_snapshot(engine, demo_grid())``
    """
    snap = demo_snapshot(seed=seed)
    log = simulate_task_history(snap.tables["tasks"], snap.taken_at, seed=seed)
    return GridSnapshot({**snap.tables, "task_status_log": log}, snap.taken_at, snap.snapshot_id, snap.version)
