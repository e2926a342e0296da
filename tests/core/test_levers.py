"""Levers: the changes that would let a skipped queue pass, or move a ranked one, each verified by brokering again."""

from __future__ import annotations

from typing import Any

import pytest

from brokerage.brokers.router import run_job_brokerage
from brokerage.gdpconfig import Config
from brokerage.levers import Explanation, _with_input, config_version, explain_queue
from brokerage.snapshot import GridSnapshot
from tests.builders import counts, endpoint, grid, queue, task
from tests.core.test_production_filters import _nucleus_grid, net


def levers(e: Explanation, kind: str) -> dict[str, Any]:
    """{key or table.field: value} of the levers of KIND."""
    if kind == "gdpconfig":
        return {lv.key: lv.value for lv in e.levers if lv.kind == kind}
    return {f"{lv.table}.{lv.field}": lv.value for lv in e.levers if lv.kind == kind}


def test_memory_lever_names_the_maxrss_that_would_pass() -> None:
    """(500 + 2000 x 8) x 0.9 = 14850 MB > maxrss 14000: maxrss must be >= 14850 (MEMORY_COMPENSATION <= 0.848 too)."""
    snap = grid([queue("M", "S1", corecount=8, maxrss=14000)], [task(1, corecount=8, ramcount=2000, baseramcount=500)])
    e = explain_queue(snap, 1, "M", Config())
    assert e.status == "skipped" and e.blocking[0]["criteria"] == "-lowmemory"
    assert levers(e, "input") == {"queues.maxrss": 14850}
    # 16500 x c <= 14000 -> c <= 0.84848...; the bisection finds the largest such value
    comp = levers(e, "gdpconfig")["MEMORY_COMPENSATION"]
    assert 0.8484 <= comp <= 0.84849 and all(lv.rank_after == 1 for lv in e.levers)


def test_scratch_lever_names_the_maxwdir_that_would_pass() -> None:
    """3000 + max(512, 0.1 x 3000) + 0 = 3512 MB must be below maxwdir / coreCount: maxwdir 3513 would pass."""
    snap = grid([queue("B", "S1", maxwdir=3512)], [task(1, chunk_input_mb=3000.0, outdiskcount=0.1, outdiskunit="kB")])
    e = explain_queue(snap, 1, "B", Config())
    assert e.blocking[0]["stage"] == "scratch disk check"
    assert levers(e, "input") == {"queues.maxwdir": 3513}


def test_walltime_lever_names_the_maxtime_that_would_pass() -> None:
    """cpuTime 100 x 1000 events / (1 core x 10 HS06 x 0.9) + 0 = 11112 s > maxtime 10000: maxtime must be >= 11112."""
    t = task(1, cputime=100.0, chunk_nevents=1000, cpuefficiency=90, basewalltime=0)
    snap = grid([queue("W", "S1", maxtime=10000, corepower=10.0)], [t])
    e = explain_queue(snap, 1, "W", Config())
    assert e.blocking[0]["criteria"] == "-shortwalltime"
    assert levers(e, "input") == {"queues.maxtime": 11112}


def test_link_lever_names_the_queued_files_and_the_cap() -> None:
    """151 files queued > NQUEUED_SAT_CAP 150: the cap must be >= 151, or the link's queue must fall to 150."""
    snap = _nucleus_grid(task(1, nucleus="N"), net("S1", "N", queued=151) + net("S2", "N", queued=10))
    e = explain_queue(snap, 1, "Q1", Config())
    assert e.blocking[0]["criteria"] == "-link_unusable"
    assert levers(e, "gdpconfig")["NQUEUED_SAT_CAP"] == 151
    assert levers(e, "input") == {"network.Production Output_queued": 150.0}


def test_storage_lever_names_the_free_space_needed() -> None:
    """150 GB free + 40 expired = 190 <= 200: 161 GB free would pass (11 GB more), or STORAGE_MIN_FREE_SIZE 189."""
    endpoints = [endpoint("SA_DATADISK", "SA", space_free=150.0, space_expired=40.0)]
    relations = [{"panda_queue": "A", "ddm_endpoint_name": "SA_DATADISK", "default_write": True}]
    snap = grid([queue("A", "SA")], [task(1)], ddm_endpoints=endpoints, panda_ddm_relation=relations)
    e = explain_queue(snap, 1, "A", Config())
    assert levers(e, "input") == {"ddm_endpoints.space_free": 161}
    assert "needs 11 GB more free at SA_DATADISK" in e.levers[-1].effect
    assert levers(e, "gdpconfig")["STORAGE_MIN_FREE_SIZE"] == 189


def test_ranked_queue_levers_reach_rank_one_and_leave_the_top() -> None:
    """A queue ranked 2 gets the smallest single-parameter change that ranks it 1, and MAX_SITE_CANDIDATES=1 drops it."""
    qs = [queue("A", "SA"), queue("B", "SB")]
    # weight (running + 1) / (queued + 10): A 51/10, B 11/10 with B also running on nBatchJob bootstrap
    jc = counts("A", running=50) + counts("B", running=10)
    qs[1]["nbatchjob"] = 500
    snap = grid(qs, [task(1)], job_counts=jc)
    e = explain_queue(snap, 1, "B", Config())
    assert e.status == "ranked" and e.rank == 2
    got = levers(e, "gdpconfig")
    assert got["MAX_SITE_CANDIDATES"] == 1
    # bootstrap: nRunning = min(nBatchJob, cap) while running < cap; a cap of 50 ties A, 51 puts B first
    assert got["BOOTSTRAP_NBATCHJOB_CAP"] == 51


def test_every_lever_when_applied_does_what_it_says() -> None:
    """Applying a printed lever and brokering again never leaves the queue blocked by the same filter."""
    endpoints = [endpoint("SA_DATADISK", "SA", space_free=150.0, space_expired=40.0)]
    relations = [{"panda_queue": "A", "ddm_endpoint_name": "SA_DATADISK", "default_write": True}]
    cases: list[tuple[GridSnapshot, str]] = [
        (grid([queue("M", "S1", corecount=8, maxrss=14000)], [task(1, corecount=8, ramcount=2000)]), "M"),
        (grid([queue("A", "SA")], [task(1)], ddm_endpoints=endpoints, panda_ddm_relation=relations), "A"),
        (_nucleus_grid(task(1, nucleus="N"), net("S1", "N", queued=151)), "Q1"),
    ]
    checked = 0
    for snap, q in cases:
        e = explain_queue(snap, 1, q, Config())
        stage = e.blocking[0]["stage"]
        for lv in e.levers:
            if lv.kind == "gdpconfig":
                d = run_job_brokerage(snap, 1, Config().with_overrides({lv.key: lv.value}))
            else:
                changed = _with_input(snap, lv.table, lv.field, lv.row, lv.value)
                assert changed is not None
                d = run_job_brokerage(changed, 1, Config())
            skip = d.skip_of(q)
            assert skip is None or skip.stage != stage, (q, lv)
            checked += 1
    assert checked >= 5


def test_unknown_queue_is_named() -> None:
    """An unknown queue is refused with its name and the number of queues there are."""
    snap = grid([queue("A", "SA")], [task(1)])
    with pytest.raises(KeyError, match="unknown queue 'NOPE'"):
        explain_queue(snap, 1, "NOPE", Config())


def test_decisions_carry_their_versions() -> None:
    """An explanation names the snapshot version and the gdpconfig version, with what-if edits spelt out."""
    snap = grid([queue("A", "SA")], [task(1)])
    e = explain_queue(snap, 1, "A", Config(version=3).with_overrides({"NQUEUED_SAT_CAP": 300}))
    assert e.snapshot_version == snap.key
    assert e.config_version == "what-if on v3 (NQUEUED_SAT_CAP=300)"
    assert config_version(Config()) == "defaults"
