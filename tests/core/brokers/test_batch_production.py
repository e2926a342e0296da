"""production.broker_many decides and explains every task exactly as one broker() call per task does."""

from __future__ import annotations

import math
import pickle
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brokerage.brokers import production
from brokerage.model.cache import GridCache
from brokerage.model.explain import Decision, Skip, SkipList
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.synth.demo import demo_snapshot
from tests.builders import counts, grid, queue, task
from tests.core.brokers.test_production_properties import OVERRIDES, _random_grid, _random_task, _snapshot
from tests.reference import production_reference as ref

WHAT_IF = {"NQUEUED_SAT_CAP": 40, "NO_PILOT_HOURS": 1, "MAX_DISKIO_DEFAULT": 500, "MAX_SITE_CANDIDATES": 3}


def fresh() -> GridSnapshot:
    """The same demo grid each time, with none of another call's per-snapshot caches."""
    return demo_snapshot(seed=5, queues=260, tasks=240)


def production_ids(snap: GridSnapshot) -> list[int]:
    """Every production task of the grid (pre-assigned ones and those without a nucleus included)."""
    t = snap.tasks
    return [int(i) for i in t[t["prodsourcelabel"] != "user"]["jeditaskid"]]


def explained(d: Decision) -> dict[str, Any]:
    """Everything a decision says, in plain values."""
    return {
        "status": d.status,
        "ranked": d.ranked_names,
        "weights": [c.weight for c in d.candidates],
        "factors": [(c.factors, c.details) for c in d.candidates],
        "skips": [(s.candidate, s.criteria, s.reason, s.stage, s.temporary) for s in d.skipped],
        "funnel": [(f.filter, f.before, f.after) for f in d.funnel],
        "rest": (d.config, d.pending_minutes, d.message, d.notes, d.extra),
    }


@pytest.fixture(scope="module")
def one_by_one() -> dict[str, dict[int, dict[str, Any]]]:
    """broker() per task, each config on its own fresh snapshot."""
    out = {}
    for name, config in (("default", Config()), ("what-if", Config().with_overrides(WHAT_IF))):
        snap = fresh()
        out[name] = {tid: explained(production.broker(snap, tid, config)) for tid in production_ids(snap)}
    return out


def test_the_grid_exercises_the_broker(one_by_one: dict[str, dict[int, dict[str, Any]]]) -> None:
    """The comparison covers ok and pending tasks, many criteria and pre-assigned tasks."""
    decisions = one_by_one["default"].values()
    assert {d["status"] for d in decisions} == {"ok", "pending"}
    assert len({s[1] for d in decisions for s in d["skips"]}) >= 8
    snap = fresh()
    assert snap.tasks["site"].notna().any()


def test_batch_equals_one_call_per_task(one_by_one: dict[str, dict[int, dict[str, Any]]]) -> None:
    """Ranked names, weights, factors, skips (with sentences) and funnel are the same, under two configs in turn."""
    snap = fresh()
    for name, config in (("default", Config()), ("what-if", Config().with_overrides(WHAT_IF)), ("default", Config())):
        ids = production_ids(snap)
        got = production.broker_many(snap, ids, config)
        assert [d.task for d in got] == ids
        for tid, d in zip(ids, got, strict=True):
            assert explained(d) == one_by_one[name][tid], (name, tid)


def test_batch_json_equals_one_call_per_task() -> None:
    """The JSON the CLI prints is the same too, whether or not the skips were read before."""
    snap_a, snap_b = fresh(), fresh()
    ids = production_ids(snap_a)[:60]
    batch = production.broker_many(snap_a, ids, Config())
    for k, (tid, d) in enumerate(zip(ids, batch, strict=True)):
        if k % 2:
            list(d.skipped)  # materialised first: to_dict must not depend on it
        assert d.to_dict() == production.broker(snap_b, tid, Config()).to_dict()


def test_batch_order_duplicates_and_empty() -> None:
    """Decisions come back in the order asked, repeats included; no ids, no decisions; unknown ids raise."""
    snap = fresh()
    ids = production_ids(snap)[:5]
    asked = [ids[3], ids[0], ids[3]]
    got = production.broker_many(snap, asked, Config())
    assert [d.task for d in got] == asked
    assert explained(got[0]) == explained(got[2])
    assert production.broker_many(snap, [], Config()) == []
    with pytest.raises(KeyError, match="unknown task"):
        production.broker_many(snap, [ids[0], -1], Config())


def test_skip_list_reads_like_a_list() -> None:
    """A decision's skips: len, iteration, indexing, equality, counts, JSON and pickling as with a list of Skip."""
    snap = fresh()
    d = next(d for d in production.broker_many(snap, production_ids(snap), Config()) if len(d.skipped) > 20)
    skips = d.skipped
    assert isinstance(skips, SkipList)
    as_list = list(skips)
    assert len(skips) == len(as_list) and all(isinstance(s, Skip) for s in as_list)
    assert skips[0] == as_list[0] and skips[-1] == as_list[-1] and skips[2:5] == as_list[2:5]
    assert skips == as_list and as_list == skips and skips == SkipList(as_list)
    assert skips != as_list[:-1] and skips != []
    assert as_list[1] in skips
    counts: dict[str, int] = {}
    for s in as_list:
        counts[s.criteria] = counts.get(s.criteria, 0) + 1
    assert d.criteria_counts() == counts
    assert skips.to_dicts() == [s.to_dict() for s in as_list]
    assert d.skip_of(as_list[7].candidate) == as_list[7]
    last = {s.candidate: s for s in as_list}
    assert skips.criteria_by_candidate() == {c: s.criteria for c, s in last.items()}
    picked = [as_list[0].candidate, as_list[-1].candidate, "NOT-A-QUEUE"]
    assert skips.of(picked) == {c: last[c] for c in picked[:2]}
    assert [s.reason for s in skips.of(picked).values()] == [last[c].reason for c in picked[:2]]
    again = pickle.loads(pickle.dumps(d))
    assert again.skipped == skips and again.to_dict() == d.to_dict()


def test_shared_verdict_sentences_equal_fresh_ones() -> None:
    """A memoised verdict shared by many tasks gives every task the same sentences as a fresh, unshared run."""
    snap_a, snap_b = fresh(), fresh()
    ids = production_ids(snap_a)
    shared = production.broker_many(snap_a, ids, Config())
    for tid, d in zip(ids[:40], shared[:40], strict=True):
        alone = production.broker(snap_b, tid, Config(), cache=GridCache(snap_b, memoise=False))
        assert d.skipped.to_dicts() == alone.skipped.to_dicts()


def test_skip_list_grows_like_a_list() -> None:
    """append / extend after reading keep the order and the length."""
    a, b, c = (Skip(n, "-x", f"why {n}", "stage") for n in "abc")
    skips = SkipList([a])
    assert list(skips) == [a]
    skips.append(b)
    skips.extend([c])
    assert list(skips) == [a, b, c] and len(skips) == 3 and skips.criteria_counts() == {"-x": 3}


@st.composite
def shared_grids(draw: st.DrawFn) -> tuple[dict[str, list[dict[str, Any]]], list[int], Config]:
    """A random small grid with 2-8 tasks (each with its own copy of the input) and a config."""
    n_sites = draw(st.integers(1, 5), label="sites")
    n_nuclei = draw(st.integers(0, min(3, n_sites)), label="nuclei")
    n_queues = draw(st.integers(2, 30), label="queues")
    n_tasks = draw(st.integers(2, 8), label="tasks")
    rng = random.Random(draw(st.integers(0, 2**32 - 1), label="seed"))
    tables = _random_grid(rng, n_sites, n_nuclei, n_queues)
    sites = [s["site_name"] for s in tables["sites"]]
    queues = [q["panda_queue"] for q in tables["queues"]]
    ids = list(range(1, n_tasks + 1))
    # variations of one task in one or two fields each: shared verdicts keyed too coarsely meet the field they
    # miss; the base takes about half of its fields from rarer draws, so that the variations matter
    draws = [_random_task(rng, sites, n_nuclei, queues) for _ in range(4)]
    base = {
        k: next((d[k] for d in draws[1:] if d[k] != v), v) if rng.random() < 0.5 else v for k, v in draws[0].items()
    }
    tables["tasks"] = [base]
    for tid in ids[1:]:
        variant = dict(base, jeditaskid=tid)
        for k in rng.sample([k for k in base if k != "jeditaskid"], rng.randint(1, 2)):
            for _ in range(10):
                variant[k] = _random_task(rng, sites, n_nuclei, queues)[k]
                if variant[k] != base[k]:
                    break
        tables["tasks"].append(variant)
    for name in ("datasets", "dataset_replicas"):
        tables[name] = [{**row, "jeditaskid": tid} for tid in ids for row in tables[name] if rng.random() < 0.8]
    overrides = {key: rng.choice(values) for key, values in OVERRIDES if rng.random() < 0.25}
    return tables, ids, Config().with_overrides(overrides)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(shared_grids())
def test_shared_work_agrees_with_reference_and_fresh_calls(case: tuple[dict[str, Any], list[int], Config]) -> None:
    """Tasks brokered together (sharing per-snapshot work) decide as the seed reference and as a lone broker() call.

    The single-task property test gives every task its own snapshot; here the tasks share one, so any
    shared verdict keyed too coarsely would show up as a difference.
    """
    tables, ids, config = case
    snap = _snapshot(tables)
    batch = production.broker_many(snap, ids, config)
    for tid, d in zip(ids, batch, strict=True):
        lone = production.broker(_snapshot(tables), tid, config)
        assert explained(d) == explained(lone), tid
        want = ref.broker(snap, tid, config)
        assert d.status == want.status and d.ranked_names == want.ranked_names
        assert {s.candidate: s.criteria for s in d.skipped} == want.skips
        for got, exp in zip(d.candidates, want.candidates, strict=True):
            assert _close(got.weight, exp.weight), (tid, got.name)
        cuts = [(f.before, f.after) for f in d.funnel if f.before != f.after]
        assert cuts == [(before, after) for _, before, after in want.funnel if before != after]


# pairs of tasks that differ in exactly the field one shared verdict is keyed on
VARIATIONS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"is_scout": True}, {"is_merge": True}),
    ({"corecount": 8}, {"corecount": 8, "maxcorecount": 4}),
    ({"corecount": 0, "currentpriority": 900}, {"corecount": 0}),
    ({"ipconnectivity": "full#IPv4"}, {"ipconnectivity": "http#IPv6"}),
    ({"eventservice": True, "currentpriority": 950}, {"eventservice": True}),
    ({"currentpriority": 950}, {"currentpriority": 500}),
    ({"processingtype": "reprocessing"}, {"processingtype": "simul"}),
    ({"gshare": "Reprocessing"}, {"gshare": "MC Simulation"}),
    ({"diskio": 50.0}, {"diskio": 400.0}),
    ({"allowinputlan": "only"}, {}),
    ({"t1weight": 2, "nucleus": "M"}, {"t1weight": 3, "nucleus": "M"}),
    ({"fullchain": "only", "nucleus": "N"}, {"nucleus": "N"}),
]


def varied_grid() -> GridSnapshot:
    """Queues that each shared verdict treats differently, and every pair of VARIATIONS as tasks 1, 2, ..."""
    queues = [
        queue("SHORT", "S1", maxtime=36000, transferringlimit=20),
        queue("MCORE", "S1", corecount=8, maxrss=64000),
        queue("HTTP6", "S2", wnconnectivity="http#IPv6"),
        queue("FULL4", "S2", wnconnectivity="full#IPv4", jobseed="eshigh"),
        queue("ESQ", "S2", jobseed="es"),
        queue("PRIO", "S1", fairsharepolicy="priority>=900:0%"),
        queue("REPRO", "S2", fairsharepolicy="type=reprocessing:0%"),
        queue("DISKIO", "S1", maxdiskio=100.0, diskio_avg=200.0),
        queue("DIRECT", "S2", direct_access_lan=True),
        queue("NUC", "N"),
        queue("NUC2", "N", corecount=8, maxrss=64000),
        queue("MNUC", "M"),
    ]
    tasks = [task(2 * k + j + 1, **kw) for k, pair in enumerate(VARIATIONS) for j, kw in enumerate(pair)]
    sites = [
        {"site_name": "N", "role": "nucleus", "bare_nucleus": "only"},
        {"site_name": "M", "role": "nucleus"},
        {"site_name": "S1", "role": "satellite"},
        {"site_name": "S2", "role": "satellite"},
    ]
    jobs = (
        counts("SHORT", running=5, transferring=50)
        + counts("MCORE", gshare="Reprocessing", running=1, activated=9)
        + counts("DIRECT", gshare="Reprocessing", running=30, activated=2)  # weights differ by share
    )
    return grid(queues, tasks, sites, job_counts=jobs)


def test_tasks_differing_in_one_shared_key() -> None:
    """Two tasks that differ only in the field a shared verdict is keyed on keep their own decisions."""
    snap = varied_grid()
    ids = sorted(int(t) for t in snap.tasks["jeditaskid"])
    batch = production.broker_many(snap, ids, Config())
    lone = [explained(production.broker(varied_grid(), tid, Config())) for tid in ids]
    assert [explained(d) for d in batch] == lone
    for k, pair in enumerate(VARIATIONS):  # the pairs do exercise the keys
        assert lone[2 * k] != lone[2 * k + 1], pair
