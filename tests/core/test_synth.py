"""Demo grid generator: determinism, scale, JSON round trip, realism and coverage of every brokerage rule."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from brokerage.model.snapshot import GridSnapshot, check_references, frame
from brokerage.model.tables import TABLES
from brokerage.synth.common import MAX_SITES
from brokerage.synth.demo import DEFAULT_TAKEN_AT, demo_snapshot, describe, grid_columns
from brokerage.synth.shares import ANAL_SHARES
from brokerage.synth.software import AGLT2_SOFTWARE, CONTAINERS
from brokerage.synth.tables import rows, table


@pytest.fixture(scope="module")
def demo() -> GridSnapshot:
    """The default demo grid, built once for the module."""
    return demo_snapshot()


@pytest.fixture(scope="module")
def demo_dict(demo: GridSnapshot) -> dict[str, Any]:
    """The default demo as a JSON-ready document."""
    return demo.to_dict()


@pytest.fixture(scope="module")
def facts(demo: GridSnapshot) -> dict[str, int]:
    """Coverage facts of the default demo."""
    return describe(demo)


# --- determinism and scale ----------------------------------------------------------------------


def test_same_seed_gives_identical_document(demo_dict: dict[str, Any]) -> None:
    """The same (seed, queues, tasks) gives an identical snapshot document."""
    assert demo_snapshot().to_dict() == demo_dict


def test_other_seed_gives_other_grid(demo_dict: dict[str, Any]) -> None:
    """A different seed gives a different grid under its own snapshot id."""
    other = demo_snapshot(seed=1).to_dict()
    assert other["snapshot_id"] == "demo-s1-q700-t3000"
    assert other["queues"] != demo_dict["queues"]
    assert other["tasks"] != demo_dict["tasks"]
    assert other["network"] != demo_dict["network"]


def test_taken_at_defaults_to_fixed_time(demo: GridSnapshot) -> None:
    """Without taken_at the snapshot is taken at the fixed demo time, never the wall clock."""
    assert demo.taken_at == DEFAULT_TAKEN_AT
    assert demo.snapshot_id == "demo-s0-q700-t3000"


def test_times_follow_taken_at() -> None:
    """Every time in the grid lies before taken_at and moves with it."""
    when = datetime(2027, 3, 1, 8, 30, tzinfo=UTC)
    snap = demo_snapshot(queues=80, tasks=120, taken_at=when)
    stamp = pd.Timestamp(when)
    assert snap.taken_at == when
    assert snap.queues["laststart"].max() <= stamp
    assert snap.network["ts"].max() <= stamp
    assert snap.tasks["modificationtime"].max() <= stamp
    assert (snap.network["ts"] > stamp - pd.Timedelta(hours=1)).mean() > 0.9


def test_task_count_leaves_the_grid_unchanged() -> None:
    """The number of tasks does not change sites, storage or links (independent random streams); the job counts
    follow the tasks only in the sustained grid (each share's jobs where its tasks can go, issue 30)."""
    a, b = (demo_snapshot(queues=90, tasks=n, sustained=False) for n in (10, 400))
    for name in ("queues", "sites", "ddm_endpoints", "network", "job_counts", "user_job_counts"):
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name])
    c = demo_snapshot(queues=90, tasks=400)
    for name in ("sites", "ddm_endpoints", "network"):
        pd.testing.assert_frame_equal(b.tables[name], c.tables[name])
    assert not b.tables["job_counts"].equals(c.tables["job_counts"])


@pytest.mark.parametrize(("queues", "tasks"), [(1, 0), (3, 5), (7, 0), (50, 10), (120, 200)])
def test_small_grids_are_valid(queues: int, tasks: int) -> None:
    """Tiny and small grids are valid snapshots of exactly the requested size."""
    snap = demo_snapshot(seed=3, queues=queues, tasks=tasks)
    back = GridSnapshot.from_dict(json.loads(json.dumps(snap.to_dict())))
    assert len(back.queues) == queues
    assert len(back.tasks) == tasks


def test_large_grid_adds_queues_per_site() -> None:
    """A 5000-queue grid keeps unique names and valid references, and grows sites sub-linearly up to MAX_SITES."""
    snap = demo_snapshot(seed=2, queues=5000, tasks=50)
    assert len(snap.queues) == 5000
    assert snap.queues["panda_queue"].is_unique
    assert 1000 <= len(snap.sites) <= MAX_SITES
    assert check_references(snap) == []


# sha256 of demo_snapshot(seed=3, queues=40, tasks=100).to_json(path): change it only on purpose, when the
# demo grid is meant to change (a new column, another story), never as a side effect of moving code around
SMALL_GRID_SHA256 = "7774da7b04f1067ca2c6946099efae77e8007c0e603b2760d08c2e0f00b80d22"


def test_small_grid_content_is_pinned(tmp_path: Path) -> None:
    """The demo grid is deterministic from its seed: a small grid's JSON document is byte for byte the pinned one
    (every table family draws from its own stream, in a fixed order; a reordered draw changes this hash)."""
    path = tmp_path / "small.json"
    demo_snapshot(seed=3, queues=40, tasks=100).to_json(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == SMALL_GRID_SHA256


def test_negative_sizes_are_refused() -> None:
    """A negative seed, queue or task count is a clear error naming the argument."""
    for kwargs, name in (({"seed": -1}, "seed"), ({"queues": 0}, "queues"), ({"tasks": -5}, "tasks")):
        with pytest.raises(ValueError, match=name):
            demo_snapshot(**kwargs)


def test_column_tables_match_frame() -> None:
    """Tables built column by column are exactly what snapshot.frame builds from the same rows."""
    columns = grid_columns(4, 120, 200, pd.Timestamp(DEFAULT_TAKEN_AT))
    for name in TABLES:
        fast = table(name, columns[name])
        slow = frame(name, rows(columns[name]))
        pd.testing.assert_frame_equal(fast, slow, obj=name)


# --- round trip and contents --------------------------------------------------------------------


def test_json_round_trip(demo_dict: dict[str, Any]) -> None:
    """The demo survives JSON text, validation and reference checks of GridSnapshot.from_dict unchanged."""
    back = GridSnapshot.from_dict(json.loads(json.dumps(demo_dict)))
    assert back.to_dict() == demo_dict


def test_default_size_is_atlas_like(facts: dict[str, int]) -> None:
    """The default demo has 700 queues over ~200 sites, 20 nuclei, ~200 users and 3000 tasks (~70% production)."""
    assert facts["queues"] == 700
    assert 180 <= facts["sites"] <= 220
    assert facts["nuclei"] == 20
    assert 150 <= facts["users"] <= 250
    assert facts["tasks"] == 3000
    assert 0.6 < facts["production_tasks"] / facts["tasks"] < 0.8


def test_real_site_and_queue_names(demo: GridSnapshot) -> None:
    """Real ATLAS sites are there with CRIC-like queue names, and tier 0/1 nuclei hold tape."""
    sites = set(demo.sites["site_name"])
    assert {"CERN-PROD", "BNL-ATLAS", "FZK-LCG2", "TRIUMF-LCG2", "TOKYO-LCG2", "AGLT2", "praguelcg2"} <= sites
    names = demo.queues["panda_queue"]
    assert "AGLT2" in set(names)
    for pattern in (r"^ANALY_", r"_MCORE$", r"_UCORE$", r"TEST"):
        assert names.str.contains(pattern).any(), pattern
    tape = demo.ddm_endpoints[demo.ddm_endpoints["is_tape"]]
    assert "BNL-OSG2_DATATAPE" in set(tape["ddm_endpoint_name"])


def test_aglt2_publishes_the_seed_example(demo: GridSnapshot) -> None:
    """Queue AGLT2 at site AGLT2 is an AUTO queue publishing the seed's JSON verbatim."""
    q = demo.queues.set_index("panda_queue").loc["AGLT2"]
    assert q["atlas_site"] == "AGLT2" and q["releases"] == ["AUTO"]
    row = demo.queue_software.set_index("panda_queue").loc["AGLT2"]
    assert {k: row[k] for k in AGLT2_SOFTWARE} == AGLT2_SOFTWARE


def test_all_row_maps_container_names_to_sources(demo: GridSnapshot) -> None:
    """The ALL row of queue_software resolves every container name to a /cvmfs source path."""
    tags = demo.queue_software.set_index("panda_queue").loc["ALL", "tags"]
    assert {t["container_name"] for t in tags} == set(CONTAINERS)
    assert all(t["sources"][0].startswith("/cvmfs/") for t in tags)


def test_task_status_log_is_empty(demo: GridSnapshot) -> None:
    """task_status_log is left empty for the lifecycle simulation."""
    assert len(demo.task_status_log) == 0


def test_tasks_point_at_known_things(demo: GridSnapshot) -> None:
    """Task nuclei are nuclei, pre-assigned queues exist, and every queue writes to its own site's DATADISK."""
    nuclei = set(demo.sites.loc[demo.sites["role"] == "nucleus", "site_name"])
    assert set(demo.tasks["nucleus"].dropna()) <= nuclei
    assert demo.tasks.loc[demo.tasks["status"] == "assigning", "nucleus"].isna().all()
    queues = set(demo.queues["panda_queue"])
    pre = demo.tasks["site"].dropna()
    assert {q for s in pre for q in s.split(",")} <= queues
    rel = demo.panda_ddm_relation[demo.panda_ddm_relation["default_write"]]
    ep_site = dict(zip(demo.ddm_endpoints["ddm_endpoint_name"], demo.ddm_endpoints["site_name"], strict=True))
    q_site = dict(zip(demo.queues["panda_queue"], demo.queues["atlas_site"], strict=True))
    assert set(rel["panda_queue"]) == queues
    assert all(ep_site[e] == q_site[q] for q, e in zip(rel["panda_queue"], rel["ddm_endpoint_name"], strict=True))


def test_queue_counts_include_user_counts(demo: GridSnapshot) -> None:
    """Per queue, analysis share and status, the queue's job counts equal the sum over its users."""
    u = demo.user_job_counts.groupby(["panda_queue", "gshare", "jobstatus"])["njobs"].sum()
    jc = demo.job_counts[demo.job_counts["gshare"].isin(ANAL_SHARES)]
    jc = jc.groupby(["panda_queue", "gshare", "jobstatus"])["njobs"].sum()
    assert (jc.reindex(u.index) == u).all()


def test_fullchain_parents_sit_on_bare_nuclei(demo: GridSnapshot) -> None:
    """Full-chain parents of only/require children run on bare nuclei, and children with a nucleus follow them."""
    t = demo.tasks.set_index("jeditaskid")
    bare = dict(zip(demo.sites["site_name"], demo.sites["bare_nucleus"], strict=True))
    kids = t[t["parent_tid"].notna() & t["fullchain"].isin(("only", "require"))]
    assert len(kids) > 0
    for _, kid in kids.iterrows():
        parent = t.loc[int(kid["parent_tid"])]
        assert bare[parent["nucleus"]] in ("only", "allow")
        if kid["nucleus"] is not None:
            assert kid["nucleus"] == parent["nucleus"]


def test_only_full_chains_on_bare_only_nuclei(demo: GridSnapshot) -> None:
    """A nucleus with bareNucleus=only holds only full-chain tasks."""
    only = set(demo.sites.loc[demo.sites["bare_nucleus"] == "only", "site_name"])
    there = demo.tasks[demo.tasks["nucleus"].isin(only)]
    assert len(there) > 0 and (there["fullchain"] != "").all()


def test_user_analysis_share_throttles_class_c(demo: GridSnapshot) -> None:
    """User Analysis usage sits between the class C (90%) and class B (95%) throttle limits."""
    usage = demo.gshares.set_index("gshare")["usage_perc"]
    assert 90 < usage["User Analysis"] < 95
    assert usage.drop("User Analysis").max() < 150


def test_nuclei_mostly_healthy(facts: dict[str, int]) -> None:
    """Backlogged, nearly full or bare nuclei stay the exception among the 20 nuclei."""
    troubled = facts["backlogged_nuclei"] + facts["nearly_full_nuclei"] + facts["inactive_nuclei"]
    assert troubled <= 6
    assert facts["links_full_nuclei"] <= facts["backlogged_nuclei"]


# --- coverage: every rule can fire somewhere ----------------------------------------------------

COVERAGE: tuple[tuple[str, str], ...] = (
    ("inactive_nuclei", "task: nucleus status not ACTIVE"),
    ("backlogged_nuclei", "task: -transfer_backlog (NQUEUED_NUC_CAP)"),
    ("negative_t1weight_tasks", "task: backlog check skipped for t1Weight < 0; job: -t1weight"),
    ("nearly_full_nuclei", "task: -space (DISK_THRESHOLD)"),
    ("blacklisted_endpoints", "task: -source/-destination_blacklist; job: -*_blacklist"),
    ("tape_only_datasets", "task: tapeWeight; job: data on tape"),
    ("prestaging_tasks", "task: inputPreStaging skips size/number locality"),
    ("master_only_tasks", "task: taskBrokerOnMaster ignores secondaries"),
    ("io_intensive_tasks", "task: locality fallback off; job: -io (IO_INTENSITY_CUTOFF)"),
    ("bare_nuclei_only", "task/job: -full_chain, -not_full_chain (bareNucleus=only)"),
    ("bare_nuclei_allow", "task: fullChain=require on bareNucleus=allow"),
    ("fullchain_tasks", "task/job: full-chain only/require/capable"),
    ("tasks_assigning", "task brokerage candidates"),
    ("tasks_with_nucleus", "job brokerage candidates"),
    ("test_named_queues", "job: 'test' in the queue name"),
    ("not_online_queues", "job: -status"),
    ("preassigned_tasks", "job: pre-assigned queues skip the status check"),
    ("blocked_links", "job: -link_unusable (closeness -1)"),
    ("busy_links", "job: -link_unusable (NQUEUED_SAT_CAP)"),
    ("links_full_nuclei", "job: -links_full (NQUEUED_NUC_CAP_FOR_JOBS)"),
    ("links_without_throughput", "network: closeness fallback"),
    ("stale_network_rows", "network: rows older than an hour are ignored"),
    ("high_priority_tasks", "job: priority >= 800 only nucleus queues"),
    ("scout_tasks", "job: scouts to the nucleus, -scout_walltime"),
    ("inactive_queues", "job: -inactive (no start for 2 h with activated jobs)"),
    ("merge_tasks", "job: merge jobs skip inactive and short queues"),
    ("zero_share_queues", "job: -zeroshare (fairsharepolicy)"),
    ("diskio_over_queues", "job: -diskIO (maxdiskio)"),
    ("any_release_queues", "job: releases=ANY skips the software check"),
    ("auto_release_queues", "job: releases=AUTO uses the queue_software JSON"),
    ("explicit_release_queues", "job: explicit release lists"),
    ("container_tasks", "software: fat containers"),
    ("cpu_spec_tasks", "software: #host_cpu_spec"),
    ("gpu_tasks", "software: &host_gpu_spec"),
    ("gpu_queues", "software: GPU architectures with excl"),
    ("high_memory_queues", "job: -highmemory (minrss)"),
    ("direct_access_only_tasks", "job: -remoteio"),
    ("direct_access_queues", "job: no input copy to scratch"),
    ("full_storages", "job: -disk (STORAGE_MIN_FREE_SIZE)"),
    ("short_maxtime_queues", "job: -shortwalltime, -scout_walltime"),
    ("mintime_queues", "job: -longwalltime (mintime)"),
    ("ipconnectivity_tasks", "job: -network (wnconnectivity)"),
    ("eventservice_tasks", "job: -es, -eshigh"),
    ("es_queues", "job: -nones (jobseed es)"),
    ("many_transferring_queues", "job: -transferring"),
    ("no_pilot_queues", "job: -nopilot"),
    ("urgent_or_express_tasks", "job: -lowNetworkWeight (NW_THRESHOLD)"),
    ("bootstrap_queues", "weight: bootstrap with no jobs"),
    ("nbatchjob_bootstrap_queues", "weight: min(nBatchJob, 20) as running"),
    ("numslots_queues", "weight: numSlots"),
    ("overloaded_queues", "job: -cap (activated+starting > 2 x running)"),
    ("users_quota_exceeded", "analysis: global disk quota throttle"),
    ("heavy_users", "analysis: CAP_RUNNING_USER_JOBS when an operator sets it"),
    ("class_c_throttled_tasks", "analysis: User Analysis share throttle for class C"),
    ("included_site_tasks", "analysis: -notincluded"),
    ("excluded_site_tasks", "analysis: -excluded"),
    ("avoid_vp_tasks", "analysis: avoidVP"),
    ("vp_queues", "analysis: VP queues, overloaded VP"),
    ("bad_history_pairs", "analysis: failed+closed >= max(2 x finished, MIN_BAD_JOBS_TO_SKIP_PQ)"),
    ("stabilizer_throttled_pairs", "analysis: Analysis Stabilizer nQ(PQ, user) > max_q_len"),
)


@pytest.mark.parametrize(("fact", "rule"), COVERAGE, ids=[f for f, _ in COVERAGE])
def test_every_rule_has_cases(facts: dict[str, int], fact: str, rule: str) -> None:
    """The default demo holds at least one situation for the brokerage rule named by the parameter."""
    assert facts[fact] > 0, f"no case for {rule}"


def test_describe_counts_match_tables(demo: GridSnapshot, facts: dict[str, int]) -> None:
    """describe() counts the tables it summarises."""
    assert facts["network_rows"] == len(demo.network)
    assert facts["tasks_assigning"] == int((demo.tasks["status"] == "assigning").sum())
    assert facts["bare_nuclei_only"] + facts["bare_nuclei_allow"] == int((demo.sites["bare_nucleus"] != "").sum())
