"""derived_cache: a snapshot with some tables replaced reuses only the structures of the tables it still shares."""

from __future__ import annotations

from brokerage.brokers.router import run_job_brokerage
from brokerage.model.cache import GridCache, derived_cache
from brokerage.model.gdpconfig import Config
from brokerage.model.views import task_row
from brokerage.synth.demo import demo_snapshot


def test_decisions_with_a_derived_cache_equal_a_fresh_one() -> None:
    """A queue table edited (one queue offline): the derived cache shares the task records and gives the decision a
    fresh cache gives; an edited task table is rebuilt, so the edit is seen."""
    snap = demo_snapshot(seed=3, queues=120, tasks=80)
    base = GridCache(snap)
    tid = int(snap.tasks["jeditaskid"].iloc[0])
    before = run_job_brokerage(snap, tid, Config(), cache=base)
    qs = snap.tables["queues"].copy()
    qs.loc[qs.index[0], "status"] = "offline"
    edited = snap.replace(queues=qs)
    cache = derived_cache(base, edited)
    assert task_row(cache, tid) == task_row(base, tid)
    got = run_job_brokerage(edited, tid, Config(), cache=cache).to_dict()
    assert got == run_job_brokerage(edited, tid, Config(), cache=GridCache(edited)).to_dict()
    assert before.to_dict() != got or qs["panda_queue"].iloc[0] not in {c.name for c in before.candidates}
    tasks = snap.tables["tasks"].copy()
    tasks.loc[tasks.index[0], "ramcount"] = 123456
    other = snap.replace(tasks=tasks)
    assert task_row(derived_cache(base, other), tid)["ramcount"] == 123456
