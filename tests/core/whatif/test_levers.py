"""Levers: the changes that would let a skipped queue pass, or move a ranked one, each verified by brokering again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from brokerage.brokers.router import run_job_brokerage
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.whatif.levers import Explanation, _with_input, config_version, explain_queue
from tests.builders import counts, endpoint, grid, queue, task
from tests.core.checks.helpers import _nucleus_grid, net


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


def test_nucleus_space_levers_name_the_threshold_the_output_rate_and_the_free_space() -> None:
    """Free 110000 GB - projected 320000/10 x 0.25 = 8000 GB = 102000 <= 100 TB (102400 GB): DISK_THRESHOLD 99 passes,
    OUTPUT_GB_PER_CORE_DAY < 0.2375 passes, and 401 GB more free (110401) passes."""
    from brokerage.whatif.levers_nucleus import explain_nucleus
    from tests.core.brokers.test_nucleus import busy, ngrid

    t2, d2 = busy(2, "A", 320000)
    t3, d3 = busy(3, "B", 160000)
    eps = [endpoint("A_DATADISK", "A", space_free=110000.0), endpoint("B_DATADISK", "B", space_free=110000.0)]
    snap = ngrid(tasks=[task(1), t2, t3], datasets=[d2, d3], ddm_endpoints=eps)
    e = explain_nucleus(snap, 1, "A", Config())
    assert e.status == "skipped" and e.blocking[0]["criteria"] == "-space"
    got = levers(e, "gdpconfig")
    assert got["DISK_THRESHOLD"] == 99 and 0.2374 <= got["OUTPUT_GB_PER_CORE_DAY"] < 0.2375
    assert levers(e, "input") == {"ddm_endpoints.space_free": 110401}
    assert "needs 401 GB more free at A_DATADISK" in e.levers[-1].effect
    assert e.to_dict()["nucleus"] == "A" and all(lv.rank_after == 2 for lv in e.levers)


def test_nucleus_status_and_backlog_levers() -> None:
    """An OFFLINE nucleus needs state ACTIVE; 2100 files queued to a nucleus > NQUEUED_NUC_CAP 2000 need a cap of 2100."""
    from brokerage.whatif.levers_nucleus import explain_nucleus
    from tests.builders import queued_to, site
    from tests.core.brokers.test_nucleus import ngrid

    off = explain_nucleus(ngrid(sites=[site("A"), site("B", state="OFFLINE")]), 1, "B", Config())
    assert levers(off, "input") == {"sites.state": "ACTIVE"}
    net = [queued_to("A", 1500, "S1"), queued_to("A", 600, "S2"), queued_to("B", 2000, "S1")]
    backlog = explain_nucleus(ngrid(network=net), 1, "A", Config())
    assert levers(backlog, "gdpconfig") == {"NQUEUED_NUC_CAP": 2100} and backlog.levers[0].rank_after == 1


def test_cli_explain_nucleus_and_its_errors(tmp_path: Any) -> None:
    """`explain --nucleus` prints the nucleus' levers; neither or both of --queue/--nucleus, or an unknown nucleus, exit 2."""
    from click.testing import CliRunner

    from brokerage.cli.main import main
    from tests.builders import site
    from tests.core.brokers.test_nucleus import ngrid

    path = tmp_path / "g.json"
    ngrid(sites=[site("A"), site("B", state="OFFLINE")]).to_json(path)
    base = ["explain", "--snapshot", str(path), "--task", "1", "--no-grid"]
    out = CliRunner().invoke(main, [*base, "--nucleus", "B", "--json"])
    assert out.exit_code == 0, out.output
    body = json.loads(out.output)
    assert body["nucleus"] == "B" and body["levers"][0]["field"] == "state"
    assert body["snapshot_version"] == "test@0" and body["config_version"] == "defaults"
    assert CliRunner().invoke(main, base).exit_code == 2
    assert CliRunner().invoke(main, [*base, "--queue", "QA", "--nucleus", "A"]).exit_code == 2
    bad = CliRunner().invoke(main, [*base, "--nucleus", "ZZ"])
    assert bad.exit_code == 2 and "unknown nucleus 'ZZ'" in bad.output
