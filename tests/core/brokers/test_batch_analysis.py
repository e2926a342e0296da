"""analysis.broker_many decides and explains every task exactly as one broker() call per task does."""

from __future__ import annotations

from typing import Any

from brokerage.brokers import analysis
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.synth.demo import demo_snapshot
from tests.core.brokers.test_batch_production import explained


def fresh() -> GridSnapshot:
    """The same demo grid each time, with none of another call's per-snapshot caches."""
    return demo_snapshot(seed=6, queues=240, tasks=300)


def analysis_ids(snap: GridSnapshot) -> list[int]:
    """Every analysis task of the grid."""
    t = snap.tasks
    return [int(i) for i in t[t["prodsourcelabel"] == "user"]["jeditaskid"]]


def test_batch_equals_one_call_per_task() -> None:
    """Ranked names, weights, factors, skips, funnel and extras equal lone calls on a fresh snapshot."""
    config = Config().with_overrides({"MAX_SITE_CANDIDATES": 3})
    snap = fresh()
    ids = analysis_ids(snap)
    batch = analysis.broker_many(snap, ids, config)
    lone: dict[int, dict[str, Any]] = {}
    other = fresh()
    for tid in ids:
        lone[tid] = explained(analysis.broker(other, tid, config))
    assert [d.task for d in batch] == ids
    assert [explained(d) for d in batch] == [lone[t] for t in ids]
    assert {d["status"] for d in lone.values()} == {"ok", "pending"}
    assert any(s[1] == "-low_weight" for d in lone.values() for s in d["skips"])
