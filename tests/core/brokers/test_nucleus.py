"""Task (nucleus) brokerage: hand-computed filters and weights, full-chain matrix, draw, batch RW, properties."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brokerage.brokers import nucleus, nucleus_context, nucleus_filters
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests.builders import dataset, endpoint, grid, queue, queued_to, replica, site, task
from tests.reference import nucleus_reference as ref

DAY = 86400.0
CFG = Config()
# the production IO check (part of the job check) would reject queues missing > 10 GB of input for IO-intensive
# tasks; these tests look at the task brokerage's own rules, so it is set out of reach
NO_IO_CUT = CFG.with_overrides({"IO_INTENSITY_CUTOFF": 10**6})


def ngrid(
    names: tuple[str, ...] = ("A", "B"),
    tasks: list[dict[str, Any]] | None = None,
    sites: list[dict[str, Any]] | None = None,
    queues: list[dict[str, Any]] | None = None,
    **tables: list[dict[str, Any]],
) -> GridSnapshot:
    """Nuclei NAMES, one healthy queue Q<name> each, one 1000 TB DATADISK each (500 TB free), task 1 by default."""
    sites = sites or [site(n) for n in names]
    queues = queues if queues is not None else [queue(f"Q{s['site_name']}", s["site_name"]) for s in sites]
    tables.setdefault("ddm_endpoints", [endpoint(f"{s['site_name']}_DATADISK", s["site_name"]) for s in sites])
    tables.setdefault(
        "panda_ddm_relation",
        [{"panda_queue": q["panda_queue"], "ddm_endpoint_name": f"{q['atlas_site']}_DATADISK", "default_write": True}
         for q in queues],
    )  # fmt: skip
    return grid(queues, tasks if tasks is not None else [task(1)], sites=sites, **tables)


def names(d: Decision) -> set[str]:
    """Names of the candidates."""
    return set(d.ranked_names)


def code(d: Decision, name: str) -> str | None:
    """Criteria code that removed NAME (None if it was kept)."""
    s = d.skip_of(name)
    return None if s is None else s.criteria


def cand(d: Decision, name: str) -> Any:
    """The candidate NAME."""
    return next(c for c in d.candidates if c.name == name)


def busy(tid: int, at: str, rw_days: float, prio: int = 500, status: str = "running") -> tuple[dict, dict]:
    """A task assigned to nucleus AT with RW_DAYS HS06 day of remaining work (cpuTime 100 HS06 s)."""
    nevents = round(rw_days * DAY / 100.0)
    return (
        task(tid, nucleus=at, status=status, currentpriority=prio, cputime=100.0),
        dataset(tid, 1000 + tid, nevents=nevents),
    )


# --- filters ------------------------------------------------------------------------------------


def test_status_check_skips_inactive_nuclei() -> None:
    snap = ngrid(sites=[site("A"), site("B", state="OFFLINE")])
    d = nucleus.broker(snap, 1)
    assert names(d) == {"A"}
    assert code(d, "B") == "-status"
    assert "status=OFFLINE" in d.skip_of("B").reason


def test_transfer_backlog_skips_unless_t1weight_negative() -> None:
    net = [queued_to("A", 1500, "S1"), queued_to("A", 600, "S2"), queued_to("B", 2000, "S1")]
    snap = ngrid(network=net, tasks=[task(1), task(2, t1weight=-1)])
    d = nucleus.broker(snap, 1)
    # A: 1500 + 600 = 2100 > NQUEUED_NUC_CAP 2000; B: exactly 2000 is not "long"
    assert code(d, "A") == "-transfer_backlog" and names(d) == {"B"}
    assert "2100 files" in d.skip_of("A").reason
    assert names(nucleus.broker(snap, 2)) == {"A", "B"}
    assert code(nucleus.broker(snap, 1, CFG.with_overrides({"NQUEUED_NUC_CAP": 2100})), "A") is None


def test_nucleus_without_disk_storage_is_skipped_by_match() -> None:
    eps = [endpoint("A_DATADISK", "A"), endpoint("B_DATATAPE", "B", is_tape=True, type="DATATAPE")]
    rel = [{"panda_queue": "QA", "ddm_endpoint_name": "A_DATADISK", "default_write": True}]
    snap = ngrid(ddm_endpoints=eps, panda_ddm_relation=rel)
    d = nucleus.broker(snap, 1)
    assert code(d, "B") == "-match" and names(d) == {"A"}


def test_space_check_with_projected_output_of_remaining_work() -> None:
    # free 110000 GB; DISK_THRESHOLD 100 TB = 102400 GB. RW 320000 HS06 day -> 320000/10*0.25 = 8000 GB projected
    t2, d2 = busy(2, "A", 320000)
    t3, d3 = busy(3, "B", 160000)  # 4000 GB projected
    eps = [endpoint("A_DATADISK", "A", space_free=110000.0), endpoint("B_DATADISK", "B", space_free=110000.0)]
    snap = ngrid(tasks=[task(1), t2, t3], datasets=[d2, d3], ddm_endpoints=eps)
    d = nucleus.broker(snap, 1)
    assert code(d, "A") == "-space" and names(d) == {"B"}
    assert "projected output 8000 GB" in d.skip_of("A").reason
    assert cand(d, "B").details["projectedOutputGB"] == pytest.approx(4000.0)
    assert cand(d, "B").details["rw_hs06_days"] == pytest.approx(160000.0)


def test_space_counts_only_work_of_equal_or_higher_priority_in_rw_statuses() -> None:
    t2, d2 = busy(2, "A", 320000, prio=499)  # lower priority than task 1 (500): not counted
    t3, d3 = busy(3, "A", 320000, status="finished")  # not ready/scouting/running/pending: not counted
    t4, d4 = busy(4, "A", 1000, prio=500, status="scouting")  # counted (equal priority)
    eps = [endpoint("A_DATADISK", "A", space_free=110000.0), endpoint("B_DATADISK", "B")]
    snap = ngrid(tasks=[task(1), t2, t3, t4], datasets=[d2, d3, d4], ddm_endpoints=eps)
    d = nucleus.broker(snap, 1)
    assert code(d, "A") is None
    assert cand(d, "A").details["rw_hs06_days"] == pytest.approx(1000.0)


def test_space_threshold_per_gshare_falls_back_to_disk_threshold() -> None:
    eps = [endpoint("A_DATADISK", "A", space_free=110000.0), endpoint("B_DATADISK", "B")]
    snap = ngrid(tasks=[task(1, gshare="MC Simulation"), task(2, gshare="Reprocessing")], ddm_endpoints=eps)
    cfg = CFG.with_overrides({"DISK_THRESHOLD_MC Simulation": 110})  # 112640 GB > 110000 GB free
    d1, d2 = nucleus.broker(snap, 1, cfg), nucleus.broker(snap, 2, cfg)
    assert code(d1, "A") == "-space" and "DISK_THRESHOLD_MC Simulation=110 TB" in d1.skip_of("A").reason
    assert code(d2, "A") is None  # Reprocessing uses DISK_THRESHOLD (100 TB)
    assert code(nucleus.broker(snap, 2, CFG.with_overrides({"DISK_THRESHOLD": 108})), "A") == "-space"


def test_space_check_uses_free_plus_expired() -> None:
    eps = [endpoint("A_DATADISK", "A", space_free=100000.0, space_expired=3000.0), endpoint("B_DATADISK", "B")]
    snap = ngrid(ddm_endpoints=eps)
    assert code(nucleus.broker(snap, 1), "A") is None  # 103000 > 102400
    assert code(nucleus.broker(snap, 1, CFG.with_overrides({"DISK_THRESHOLD": 101})), "A") == "-space"


def _input_grid(
    task_kw: dict[str, Any], reps: list[dict[str, Any]], datasets: list[dict] | None = None
) -> GridSnapshot:
    datasets = datasets or [dataset(1, 1, size_gb=100.0, nfiles=50)]
    eps = [
        endpoint("A_DATADISK", "A"),
        endpoint("A_DATATAPE", "A", is_tape=True, type="DATATAPE"),
        endpoint("B_DATADISK", "B"),
        endpoint("C_DATADISK", "C"),
    ]
    return ngrid(
        ("A", "B", "C"), tasks=[task(1, **task_kw)], datasets=datasets, dataset_replicas=reps, ddm_endpoints=eps
    )


def test_locality_insize_needs_more_than_the_fraction() -> None:
    # total 100 GB > INPUT_SIZE_THRESHOLD 1 GB: the local fraction must be > 10 %
    reps = [replica(1, 1, "A_DATADISK", size_gb=10.0, nfiles=5), replica(1, 1, "B_DATADISK", size_gb=11.0, nfiles=6)]
    d = nucleus.broker(_input_grid({}, reps), 1)
    assert code(d, "A") == "-insize" and code(d, "C") == "-insize" and names(d) == {"B"}
    assert "10 GB of 100 GB" in d.skip_of("A").reason
    d2 = nucleus.broker(_input_grid({}, reps), 1, CFG.with_overrides({"INPUT_SIZE_FRACTION": 9}))
    assert names(d2) == {"A", "B"}


def test_locality_innum_when_input_is_small_but_many_files() -> None:
    ds = [dataset(1, 1, size_gb=0.5, nfiles=200)]  # 0.5 GB <= 1 GB: size rule off; 200 files > 100
    reps = [replica(1, 1, "A_DATADISK", size_gb=0.05, nfiles=20), replica(1, 1, "B_DATADISK", size_gb=0.06, nfiles=21)]
    d = nucleus.broker(_input_grid({}, reps, ds), 1)
    assert code(d, "A") == "-innum" and names(d) == {"B"}
    assert "20 of 200" in d.skip_of("A").reason


def test_locality_on_master_only_ignores_secondary_datasets() -> None:
    ds = [dataset(1, 1, size_gb=100.0, nfiles=10), dataset(1, 2, is_master=False, size_gb=900.0, nfiles=90)]
    reps = [
        replica(1, 1, "A_DATADISK", size_gb=100.0, nfiles=10),
        replica(1, 2, "B_DATADISK", size_gb=900.0, nfiles=90),
    ]
    # all datasets: A holds 100/1000 (not > 10 %), B 900/1000
    assert names(nucleus.broker(_input_grid({}, reps, ds), 1)) == {"B"}
    d = nucleus.broker(_input_grid({"taskbrokeronmaster": True}, reps, ds), 1)
    assert names(d) == {"A"} and d.extra["data_locality"]["total_gb"] == 100.0


def test_locality_prestaging_accepts_incomplete_local_data_only() -> None:
    reps = [replica(1, 1, "A_DATATAPE", size_gb=1.0, nfiles=1)]
    d = nucleus.broker(_input_grid({"inputprestaging": True}, reps), 1)
    assert names(d) == {"A"}  # A holds 1 % (on tape); B and C hold nothing
    assert code(d, "B") == "-insize"


def test_locality_disabled_for_low_io_and_small_input() -> None:
    reps = [replica(1, 1, "A_DATADISK", size_gb=5.0, nfiles=5)]  # nobody passes 10 %
    d = nucleus.broker(_input_grid({"iointensity": 200.0}, reps), 1)  # <= 200 and 100 GB <= 10000 GB
    assert names(d) == {"A", "B", "C"}
    loc = d.extra["data_locality"]
    assert loc["disabled"] is True and "MIN_IO_INTENSITY_WITH_LOCAL_DATA=200" in loc["reason"]
    # unset ioIntensity counts as low
    assert nucleus.broker(_input_grid({}, reps), 1).extra["data_locality"]["disabled"] is True


def test_locality_not_disabled_for_io_intensive_or_big_input() -> None:
    reps = [replica(1, 1, "A_DATADISK", size_gb=5.0, nfiles=5)]
    d = nucleus.broker(_input_grid({"iointensity": 201.0}, reps), 1)
    assert d.status == "pending" and d.criteria_counts() == {"-insize": 3}
    assert d.extra["data_locality"]["disabled"] is False
    d2 = nucleus.broker(_input_grid({}, reps), 1, CFG.with_overrides({"MIN_INPUT_SIZE_WITH_LOCAL_DATA": 99}))
    assert d2.status == "pending"


def test_locality_disabled_by_task_priority_not_current_priority() -> None:
    reps = [replica(1, 1, "A_DATADISK", size_gb=5.0, nfiles=5)]
    d = nucleus.broker(_input_grid({"iointensity": 300.0, "taskpriority": 800}, reps), 1, NO_IO_CUT)
    assert names(d) == {"A", "B", "C"}
    assert "taskPriority=800 >= MAX_TASK_PRIO_WITH_LOCAL_DATA=800" in d.extra["data_locality"]["reason"]
    d2 = nucleus.broker(_input_grid({"iointensity": 300.0, "taskpriority": 799, "currentpriority": 900}, reps), 1)
    assert d2.status == "pending"


def test_locality_kept_when_one_nucleus_passes() -> None:
    reps = [replica(1, 1, "A_DATADISK", size_gb=50.0, nfiles=50)]
    d = nucleus.broker(_input_grid({"taskpriority": 900}, reps), 1)
    assert names(d) == {"A"} and d.extra["data_locality"]["disabled"] is False


def test_job_check_reuses_production_filters_on_the_nucleus_queues() -> None:
    sites = [site("A"), site("B"), site("C"), site("S", role="satellite")]
    queues = [
        queue("QA", "A"),
        queue("QB1", "B", corecount=8, maxrss=32000),
        queue("QB2", "B", status="offline"),
        queue("QS", "S"),  # satellites never make a nucleus able to run the jobs
    ]
    snap = ngrid(sites=sites, queues=queues)
    d = nucleus.broker(snap, 1)
    assert names(d) == {"A"} and code(d, "B") == "-job" and code(d, "C") == "-job"
    reason = d.skip_of("B").reason
    assert "status check -status x1: QB2" in reason and "core count check -cpucore x1: QB1" in reason
    assert "no production queue" in d.skip_of("C").reason
    assert {s["queue"]: s["criteria"] for s in d.extra["job_check"]["B"]} == {"QB1": "-cpucore", "QB2": "-status"}
    # an 8-core task runs at B
    snap8 = ngrid(sites=sites, queues=queues, tasks=[task(1, corecount=8)])
    assert names(nucleus.broker(snap8, 1)) == {"B"}


# --- full chain ---------------------------------------------------------------------------------

FC_SITES = [site("N"), site("AL", bare_nucleus="allow"), site("ON", bare_nucleus="only")]


@pytest.mark.parametrize(
    ("mode", "parent_at", "expected"),
    [
        ("", None, {"N", "AL"}),
        ("only", None, {"ON"}),
        ("require", None, {"AL", "ON"}),
        ("capable", None, {"N", "AL"}),
        ("capable", "N", {"N", "AL"}),  # parent on a normal nucleus: capable is ignored
        ("capable", "AL", {"AL"}),
        ("capable", "ON", {"ON"}),
        ("require", "AL", {"AL"}),
        ("require", "ON", {"ON"}),
        ("require", "N", {"AL", "ON"}),
        ("only", "ON", {"ON"}),
        ("only", "AL", set()),  # must be an only-nucleus and the parent's: none is both
        ("", "AL", {"N", "AL"}),  # a normal task does not follow its parent
    ],
)
def test_full_chain_matrix(mode: str, parent_at: str | None, expected: set[str]) -> None:
    tasks = [task(1, fullchain=mode, parent_tid=2 if parent_at else None)]
    if parent_at:
        tasks.append(task(2, nucleus=parent_at, status="done"))
    d = nucleus.broker(ngrid(sites=FC_SITES, tasks=tasks), 1)
    assert names(d) == expected
    assert all(s.criteria == "-full_chain" for s in d.skipped)
    assert d.status == ("ok" if expected else "pending")


def test_full_chain_reasons() -> None:
    tasks = [
        task(1),
        task(2, fullchain="only"),
        task(3, fullchain="require"),
        task(4, fullchain="capable", parent_tid=5),
    ]
    tasks.append(task(5, nucleus="AL"))
    snap = ngrid(sites=FC_SITES, tasks=tasks)
    assert "accepts only full-chain tasks" in nucleus.broker(snap, 1).skip_of("ON").reason
    assert "bareNucleus=only" in nucleus.broker(snap, 2).skip_of("AL").reason
    assert "only or allow" in nucleus.broker(snap, 3).skip_of("N").reason
    assert "parent task 5" in nucleus.broker(snap, 4).skip_of("N").reason


def test_full_chain_child_follows_parent_assigned_in_the_same_batch() -> None:
    tasks = [task(1, fullchain="require", currentpriority=900), task(2, fullchain="capable", parent_tid=1)]
    snap = ngrid(sites=FC_SITES, tasks=tasks)
    for seed in range(5):
        parent, child = nucleus.broker_many(snap, [1, 2], seed=seed)
        assert child.ranked_names == [parent.extra["chosen"]]


# --- weight -------------------------------------------------------------------------------------


def test_weight_not_io_intensive() -> None:
    # A: RW 0 -> max(50, 0) = 50; space (500000 + 100000) / 1e6 = 0.6 -> 0.012
    # B: RW 200 HS06 day -> 1/200; space 0.5 -> 0.0025
    t2, d2 = busy(2, "B", 200)
    eps = [endpoint("A_DATADISK", "A", space_expired=1e5), endpoint("B_DATADISK", "B")]
    d = nucleus.broker(ngrid(tasks=[task(1), t2], datasets=[d2], ddm_endpoints=eps), 1)
    assert cand(d, "A").weight == pytest.approx(0.6 / 50)
    assert cand(d, "A").factors == pytest.approx({"rw": 1 / 50, "local": 1.0, "tape": 1.0, "space": 0.6})
    assert cand(d, "B").weight == pytest.approx(0.5 / 200)
    assert d.ranked_names == ["A", "B"]
    assert cand(d, "A").details["probability"] == pytest.approx(0.012 / 0.0145)


def test_weight_rw_offset() -> None:
    t2, d2 = busy(2, "B", 49)
    d = nucleus.broker(ngrid(tasks=[task(1), t2], datasets=[d2]), 1)
    assert cand(d, "B").factors["rw"] == pytest.approx(1 / 50)  # max(rwOffset, 49)
    d2_ = nucleus.broker(ngrid(tasks=[task(1), t2], datasets=[d2]), 1, CFG.with_overrides({"RW_OFFSET": 10}))
    assert cand(d2_, "B").factors["rw"] == pytest.approx(1 / 49)


def test_weight_io_intensive_uses_local_fraction() -> None:
    reps = [replica(1, 1, "A_DATADISK", size_gb=30.0, nfiles=15), replica(1, 1, "B_DATADISK", size_gb=60.0, nfiles=30)]
    d = nucleus.broker(_input_grid({"iointensity": 300.0}, reps), 1, NO_IO_CUT)
    assert cand(d, "A").factors["local"] == pytest.approx(0.3)
    assert cand(d, "A").weight == pytest.approx(0.3 * 0.5 / 50)
    assert cand(d, "B").weight == pytest.approx(0.6 * 0.5 / 50)
    # at exactly MIN_IO_INTENSITY_WITH_LOCAL_DATA the task is not IO intensive
    d200 = nucleus.broker(_input_grid({"iointensity": 200.0}, reps), 1)
    assert cand(d200, "A").factors["local"] == 1.0 and cand(d200, "A").weight == pytest.approx(0.5 / 50)


def test_weight_tape_when_local_input_is_only_on_tape() -> None:
    reps = [
        replica(1, 1, "A_DATATAPE", size_gb=100.0, nfiles=50),
        replica(1, 1, "B_DATADISK", size_gb=100.0, nfiles=50),
    ]
    d = nucleus.broker(_input_grid({}, reps), 1)
    assert cand(d, "A").factors["tape"] == 0.001 and cand(d, "B").factors["tape"] == 1.0
    assert cand(d, "A").weight == pytest.approx(0.001 * 0.5 / 50)
    # held on tape and disk: no tape penalty
    both = [*reps, replica(1, 1, "A_DATADISK", size_gb=100.0, nfiles=50)]
    assert cand(nucleus.broker(_input_grid({}, both), 1), "A").factors["tape"] == 1.0
    assert cand(nucleus.broker(_input_grid({}, reps), 1, CFG.with_overrides({"TAPE_WEIGHT": 0.5})), "A").factors[
        "tape"
    ] == pytest.approx(0.5)


def test_weight_without_data_factors_when_locality_disabled() -> None:
    reps = [replica(1, 1, "A_DATATAPE", size_gb=5.0, nfiles=5)]
    d = nucleus.broker(_input_grid({"iointensity": 300.0, "taskpriority": 900}, reps), 1, NO_IO_CUT)
    assert d.extra["data_locality"]["disabled"] is True
    assert names(d) == {"A", "B", "C"}
    for c in d.candidates:
        assert c.factors["local"] == 1.0 and c.factors["tape"] == 1.0


def test_probabilities_sum_to_one_and_follow_weights() -> None:
    t2, d2 = busy(2, "B", 150)
    d = nucleus.broker(ngrid(("A", "B", "C"), tasks=[task(1), t2], datasets=[d2]), 1)
    probs = [c.details["probability"] for c in d.candidates]
    assert math.isclose(sum(probs), 1.0)
    total = sum(c.weight for c in d.candidates)
    for c in d.candidates:
        assert c.details["probability"] == pytest.approx(c.weight / total)
    assert [c.rank for c in d.candidates] == [1, 2, 3]
    assert d.ranked_names[-1] == "B"  # ties (A, C) by name


def test_seeded_draw_is_reproducible_and_proportional() -> None:
    t2, d2 = busy(2, "B", 150)  # A weight 1/50, B 1/150: A is 3 times as likely
    snap = ngrid(tasks=[task(1), t2], datasets=[d2])
    first = [nucleus.broker(snap, 1, seed=s).extra["chosen"] for s in range(400)]
    assert first == [nucleus.broker(snap, 1, seed=s).extra["chosen"] for s in range(400)]
    share = first.count("A") / len(first)
    assert 0.68 < share < 0.82


def test_zero_weights_are_drawn_uniformly() -> None:
    eps = [endpoint("A_DATADISK", "A", space_total=0.0), endpoint("B_DATADISK", "B", space_total=0.0)]
    d = nucleus.broker(ngrid(ddm_endpoints=eps), 1)
    assert [c.details["probability"] for c in d.candidates] == [0.5, 0.5]
    assert d.extra["chosen"] in {"A", "B"} and "uniformly" in d.message


def test_all_skipped_is_pending() -> None:
    snap = ngrid(sites=[site("A", state="OFF"), site("B", state="OFF")])
    d = nucleus.broker(snap, 1)
    assert d.status == "pending" and d.pending_minutes == 30 and d.extra["chosen"] is None
    assert d.to_dict()["chosen"] is None
    assert nucleus.broker(snap, 1, CFG.with_overrides({"NUCLEUS_PENDING_MINUTES": 45})).pending_minutes == 45
    assert d.funnel[0].before == 2 and d.funnel[0].after == 0


def test_task_with_nucleus_is_reused() -> None:
    snap = ngrid(sites=[site("A", state="OFF"), site("B")], tasks=[task(1, nucleus="A")])
    d = nucleus.broker(snap, 1)
    assert d.status == "ok" and d.ranked_names == ["A"] and d.extra["chosen"] == "A"
    assert "re-used" in d.message and d.skipped == []


def test_funnel_and_summary() -> None:
    snap = ngrid(("A", "B", "C"), sites=[site("A"), site("B", state="OFF"), site("C")], network=[queued_to("C", 5000)])
    d = nucleus.broker(snap, 1)
    cuts = [(f.filter, f.before, f.after) for f in d.funnel if f.before != f.after]
    assert cuts == [("status check", 3, 2), ("transfer backlog check", 2, 1)]
    assert d.summary_lines()[0] == "===== Task brokerage summary ====="
    assert d.skip_of("C").temporary is True


# --- batch --------------------------------------------------------------------------------------


def test_batch_updates_rw_in_priority_order() -> None:
    # two tasks of 1000 HS06 day each; the higher-priority one (2) is brokered first whatever the id order
    tasks = [task(1, currentpriority=500, cputime=100.0), task(2, currentpriority=900, cputime=100.0)]
    ds = [dataset(1, 1, nevents=int(1000 * DAY / 100)), dataset(2, 2, nevents=int(1000 * DAY / 100))]
    snap = ngrid(tasks=tasks, datasets=ds)
    low, high = nucleus.broker_many(snap, [1, 2], seed=7)
    first = high.extra["chosen"]
    other = ({"A", "B"} - {first}).pop()
    assert cand(high, first).details["rw_hs06_days"] == 0.0
    assert cand(low, first).details["rw_hs06_days"] == pytest.approx(1000.0)
    assert cand(low, other).details["rw_hs06_days"] == 0.0
    # a single call never sees the other task of the batch
    assert cand(nucleus.broker(snap, 1), first).details["rw_hs06_days"] == 0.0


def test_lower_priority_assignments_do_not_count_for_higher_priority_tasks() -> None:
    tasks = [task(1, currentpriority=500), task(2, currentpriority=500), task(3, currentpriority=400, cputime=100.0)]
    ds = [dataset(3, 3, nevents=int(1000 * DAY / 100))]
    snap = ngrid(tasks=tasks, datasets=ds)
    out = nucleus.broker_many(snap, [3, 1, 2])
    assert out[0].task == 3 and out[1].task == 1
    for d in out[1:]:
        assert all(c.details["rw_hs06_days"] == 0.0 for c in d.candidates)


def test_single_broker_equals_batch_of_one() -> None:
    snap = ngrid(("A", "B", "C"))
    for seed in range(5):
        assert nucleus.broker(snap, 1, seed=seed).to_dict() == nucleus.broker_many(snap, [1], seed=seed)[0].to_dict()


# --- properties: broker vs scalar reference -----------------------------------------------------

GSHARES = ("MC Simulation", "Reprocessing")


def _random_tables(rng: random.Random, n_nuc: int, n_subject: int, n_busy: int) -> dict[str, list[dict[str, Any]]]:
    """Sites, storages, backlogs, queues, tasks, datasets and replicas drawn from RNG with fixed odds."""

    def pick(*values: Any) -> Any:
        return rng.choice(values)

    nuc = [f"N{i}" for i in range(n_nuc)]
    sites = [
        site(n, state=pick(*("ACTIVE",) * 9, "OFFLINE"), bare_nucleus=pick(*("",) * 6, "allow", "only")) for n in nuc
    ]
    sites.append(site("SAT", role="satellite"))
    eps, queues, rel, net = [], [], [], []
    for n in nuc:
        for k in range(pick(1, 1, 1, 1, 2, 0)):
            eps.append(
                endpoint(
                    f"{n}_DISK{k}",
                    n,
                    space_total=pick(0.0, 2e5, 1e6, 1e6),
                    space_free=pick(5e4, 1.05e5, 1.2e5, 5e5, 5e5, 5e5),
                    space_expired=pick(0.0, 1e4),
                )
            )
        if rng.random() < 0.5:
            eps.append(endpoint(f"{n}_TAPE", n, is_tape=True, type="DATATAPE"))
        for k in range(pick(1, 2, 2, 3, 0)):
            status = pick(*("online",) * 7, "offline")
            queues.append(queue(f"Q{n}_{k}", n, status=status, corecount=pick(1, 1, 1, 1, 8), maxrss=32000))
        backlog = pick(*(None,) * 6, 1999.0, 2001.0, 5000.0)
        if backlog is not None:
            net.append(queued_to(n, backlog))
    queues.append(queue("QSAT", "SAT"))
    eps.append(endpoint("SAT_DISK", "SAT"))
    for q in queues:
        disks = [e["ddm_endpoint_name"] for e in eps if e["site_name"] == q["atlas_site"] and not e.get("is_tape")]
        if disks:
            rel.append({"panda_queue": q["panda_queue"], "ddm_endpoint_name": disks[0], "default_write": True})
    tasks, datasets, replicas = [], [], []
    n_tasks = n_subject + n_busy
    for tid in range(1, n_tasks + 1):
        row = task(
            tid,
            gshare=pick(*GSHARES),
            currentpriority=pick(400, 500, 500, 900),
            taskpriority=pick(500, 799, 800, 900),
            corecount=pick(*(1,) * 7, 8),
            cputime=pick(None, 10.0, 12.5, 300.0),
            iointensity=pick(None, 100.0, 200.0, 300.0, 300.0),
            t1weight=pick(None, None, -1, 0, 2),
            fullchain=pick(*("",) * 5, "only", "require", "capable"),
            taskbrokeronmaster=pick(False, True),
            inputprestaging=pick(False, False, True),
        )
        if tid <= n_subject:
            row["parent_tid"] = pick(None, None, *range(1, n_tasks + 1))
            row["nucleus"] = pick(None, None, None, None, nuc[0])
        else:
            row["nucleus"] = pick(*nuc)
            row["status"] = pick("running", "ready", "pending", "scouting", "finished", "done")
        tasks.append(row)
        for k in range(pick(1, 1, 2, 0)):
            did = tid * 10 + k
            size = pick(0.5, 20.0, 100.0, 20000.0)
            files = pick(5, 50, 150)
            nevents = pick(0, 1000, 10**6, 10**8)
            datasets.append(
                dataset(
                    tid, did, is_master=k == 0, size_gb=size, nfiles=files, nevents=nevents, neventsused=pick(0, 500)
                )
            )
            for e in eps:
                frac = pick(0.0, 0.0, 0.05, 0.1, 0.5, 0.5, 1.0)
                if frac:
                    replicas.append(
                        replica(tid, did, e["ddm_endpoint_name"], size_gb=size * frac, nfiles=int(files * frac))
                    )
    return {
        "queues": queues, "tasks": tasks, "sites": sites, "ddm_endpoints": eps, "panda_ddm_relation": rel,
        "network": net, "datasets": datasets, "dataset_replicas": replicas,
    }  # fmt: skip


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[GridSnapshot, Config, list[int]]:
    """A random small grid with 1-3 tasks to broker and a few gdpconfig overrides.

    Hypothesis draws a seed and the overrides; sizes and the many per-row columns come from a seeded random.Random,
    which keeps the odds of each case under control.
    """
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    n_nuc, n_subject, n_busy = rng.choice((1, 2, 3, 4, 5, 6, 6)), rng.randint(1, 3), rng.randint(0, 4)
    tables = _random_tables(rng, n_nuc, n_subject, n_busy)
    snap = grid(tables.pop("queues"), tables.pop("tasks"), **tables)
    # the production IO check inside the job check is usually out of reach, so locality and weights get exercised
    overrides: dict[str, Any] = {"IO_INTENSITY_CUTOFF": draw(st.sampled_from((200, 10**6, 10**6, 10**6)))}
    for key, values in (
        ("DISK_THRESHOLD", (0, 50, 100)),
        ("DISK_THRESHOLD_Reprocessing", (20, 110)),
        ("NQUEUED_NUC_CAP", (1000, 2000)),
        ("INPUT_SIZE_FRACTION", (5, 10, 50)),
        ("INPUT_NUM_FRACTION", (5, 10)),
        ("INPUT_NUM_THRESHOLD", (10, 100)),
        ("MIN_INPUT_SIZE_WITH_LOCAL_DATA", (10, 10000)),
        ("MAX_TASK_PRIO_WITH_LOCAL_DATA", (800, 900)),
        ("RW_OFFSET", (0, 50, 1e6)),
        ("TAPE_WEIGHT", (0.001, 0.5)),
    ):
        if draw(st.floats(0, 1)) < 0.3:
            overrides[key] = draw(st.sampled_from(values))
    return snap, Config().with_overrides(overrides), list(range(1, n_subject + 1))


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300)


def assert_same(got: Decision, want: ref.RefResult) -> None:
    """Broker and reference agree on status, candidates, weights, factors, probabilities, skips and the draw."""
    assert got.status == want.status
    assert {s.candidate: s.criteria for s in got.skipped} == want.skips
    assert got.ranked_names == want.ranked_names
    for c, w in zip(got.candidates, want.candidates, strict=True):
        assert _close(c.weight, w.weight), (c.name, c.weight, w.weight)
        for k, v in w.factors.items():
            assert _close(c.factors[k], v), (c.name, k, c.factors[k], v)
        assert _close(c.details["probability"], w.probability)
    assert got.extra["chosen"] == want.chosen
    assert got.pending_minutes == want.pending_minutes
    assert bool(got.extra["data_locality"].get("disabled", False)) == want.locality_disabled


PROPERTY_SETTINGS = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@PROPERTY_SETTINGS
@given(scenarios(), st.integers(0, 3))
def test_single_task_agrees_with_reference(scenario: tuple[GridSnapshot, Config, list[int]], seed: int) -> None:
    snap, cfg, ids = scenario
    for tid in ids:
        assert_same(nucleus.broker(snap, tid, cfg, seed=seed), ref.broker(snap, tid, cfg, seed=seed))


@PROPERTY_SETTINGS
@given(scenarios(), st.integers(0, 3))
def test_batch_agrees_with_reference(scenario: tuple[GridSnapshot, Config, list[int]], seed: int) -> None:
    snap, cfg, ids = scenario
    got = nucleus.broker_many(snap, ids, cfg, seed=seed)
    want = ref.broker_many(snap, ids, cfg, seed=seed)
    for g, w in zip(got, want, strict=True):
        assert_same(g, w)


@PROPERTY_SETTINGS
@given(scenarios())
def test_job_check_matches_apply_filters(scenario: tuple[GridSnapshot, Config, list[int]]) -> None:
    """The mask-only run of the production filters keeps and explains the same queues as ``apply_filters``."""
    from brokerage.checks import production_queues
    from brokerage.framework import apply_filters
    from brokerage.model import views
    from brokerage.model.cache import GridCache

    snap, cfg, ids = scenario
    cache = GridCache(snap)
    na = nucleus_context.nucleus_arrays(cache)
    qmask = na.job_queue & (na.queue_nucleus >= 0)
    for tid in ids:
        pctx = production_queues.make_context(views.task_row(cache, tid), cfg, cache, hint_mode=True)
        alive, skips, _ = apply_filters(pctx.qa.name, qmask, production_queues.FILTERS, pctx)
        check = nucleus_filters.run_job_filters(pctx, qmask)
        assert (check.alive == alive).all()
        mine = check.skips(np.flatnonzero(qmask), pctx.qa.name)
        assert sorted(map(_skip_key, mine)) == sorted(map(_skip_key, skips))


def _skip_key(s: Any) -> tuple[str, str, str, str, bool]:
    return (s.candidate, s.criteria, s.reason, s.stage, s.temporary)
