"""Property: every lever brokerage explain prints, applied, does what it promises (rank after, filter passed)."""

from __future__ import annotations

from functools import cache
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brokerage.brokers.router import run_job_brokerage, run_nucleus_brokerage
from brokerage.model.cache import GridCache
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.waiting import waiting_task_ids
from brokerage.synth.demo import demo_snapshot
from brokerage.whatif.levers import Explanation, Lever, _fate, _with_input, explain_queue
from brokerage.whatif.levers_nucleus import explain_nucleus


@cache
def demo() -> tuple[GridSnapshot, GridCache, tuple[int, ...], tuple[str, ...], tuple[str, ...]]:
    """A small demo grid: (snapshot, cache, waiting task ids, queue names, nucleus names)."""
    snap = demo_snapshot(seed=5, queues=80, tasks=120)
    sites = snap.tables["sites"]
    nuclei = tuple(sites.loc[sites["role"] == "nucleus", "site_name"].tolist())
    ids = tuple(int(t) for t in waiting_task_ids(snap))
    return snap, GridCache(snap), ids, tuple(snap.tables["queues"]["panda_queue"].tolist()), nuclei


def applied(snap: GridSnapshot, e: Explanation, lever: Lever, nucleus: bool) -> Decision:
    """The brokerage again with LEVER applied (a gdpconfig override, or one input cell changed)."""
    run = run_nucleus_brokerage if nucleus else run_job_brokerage
    if lever.kind == "gdpconfig":
        return run(snap, e.task, Config().with_overrides({lever.key: lever.value}))
    changed = _with_input(snap, lever.table, lever.field, lever.row, lever.value)
    assert changed is not None, lever
    return run(changed, e.task, Config())


def check(snap: GridSnapshot, e: Explanation, nucleus: bool) -> int:
    """Assert each lever's promise on the brokerage run again with it; return how many were checked."""
    for lever in e.levers:
        rank, stage, _ = _fate(applied(snap, e, lever, nucleus), e.queue)
        assert rank == lever.rank_after, (e.queue, lever)  # the rank it says the candidate gets (None: out)
        if e.status == "skipped":
            assert stage != e.blocking[0]["stage"], (e.queue, lever)  # no longer stopped by the same filter
        elif "rank 1" in lever.effect:
            assert rank == 1
        elif "drops out" in lever.effect:
            assert rank is None
    return len(e.levers)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_printed_queue_lever_does_what_it_promises(data: Any) -> None:
    """For any waiting task and queue of a demo grid, each printed lever, applied alone, gives the promised rank and
    lifts the blocking filter (or makes rank 1, or drops the queue out of the best)."""
    snap, cache, ids, queues, _ = demo()
    tid = data.draw(st.sampled_from(ids))
    # favour queues the task's brokerage looked at: its skips and its candidates
    d = run_job_brokerage(snap, tid, Config(), cache=cache)
    seen = [s.candidate for s in d.skipped] + [c.name for c in d.candidates]
    queue = data.draw(st.sampled_from(seen or list(queues)))
    check(snap, explain_queue(snap, tid, queue, Config(), cache=cache), nucleus=False)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_printed_nucleus_lever_does_what_it_promises(data: Any) -> None:
    """The same for task brokerage: each nucleus lever, applied alone, gives the promised rank and lifts the filter."""
    snap, cache, ids, _, nuclei = demo()
    tid = data.draw(st.sampled_from(ids))
    name = data.draw(st.sampled_from(nuclei))
    check(snap, explain_nucleus(snap, tid, name, Config(), cache=cache), nucleus=True)


def test_the_property_sees_levers() -> None:
    """The sweep behind the property finds levers of every kind on the demo grid (it cannot pass by finding none)."""
    snap, cache, ids, _, _ = demo()
    kinds: set[str] = set()
    checked = 0
    for tid in ids[:25]:
        d = run_job_brokerage(snap, tid, Config(), cache=cache)
        for name in [s.candidate for s in d.skipped][:6] + [c.name for c in d.candidates][1:3]:
            e = explain_queue(snap, tid, name, Config(), cache=cache)
            checked += check(snap, e, nucleus=False)
            kinds |= {f"{e.status}:{lv.kind}" for lv in e.levers}
    assert checked >= 20
    assert {"skipped:gdpconfig", "skipped:input", "ranked:gdpconfig"} <= kinds
