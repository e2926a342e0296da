"""Analysis brokerage under the panda-1.0.4 rule profile: PanDA 1.0.4's filter order, loops, checks and weights
(brokers/analysis_panda.py), each case computed by hand from AtlasAnalJobBroker's code."""

from __future__ import annotations

import math

import numpy as np

from brokerage.brokers import analysis_panda as ap
from brokerage.brokers import analysis_panda_weights as apw
from brokerage.brokers.analysis_context import make_context
from brokerage.model import views
from brokerage.model.cache import cache_for
from brokerage.model.profiles import ANALYSIS_SWITCHES, PANDA_104, PROFILES, SEED
from brokerage.model.snapshot import GridSnapshot
from tests.builders import anal_queue, anal_task, counts, grid
from tests.core.checks.helpers import UA, cfg, codes, run, with_input

JEDI = {"RULES": PANDA_104}


def _ctx(snap: GridSnapshot, **config: object) -> ap.AnalContext:
    cache = cache_for(snap, None)
    ctx = make_context(views.task_row(cache, 1), cfg(**{**JEDI, **config}), cache)
    ctx.prelim = np.ones(ctx.n, dtype=bool)
    return ctx


def test_every_analysis_switch_is_in_the_panda_profile_only() -> None:
    """The seed profile stays the default: every analysis switch is on in panda-1.0.4 and off in seed."""
    names = {s.name for s in ANALYSIS_SWITCHES}
    assert names <= PROFILES[PANDA_104] and not names & PROFILES[SEED]


def test_status_only_offline_fails_standby_passes() -> None:
    """AtlasAnalJobBroker: offline fails; brokeroff and test fail for a task not pre-assigned; standby passes."""
    snap = grid(
        [anal_queue("ON", "S1"), anal_queue("SB", "S2", status="standby"), anal_queue("OFF", "S3", status="offline"),
         anal_queue("BO", "S4", status="brokeroff")],
        [anal_task(1)],
    )  # fmt: skip
    d = run(snap, cfg(**JEDI))
    assert codes(d) == {"OFF": "-status", "BO": "-status"}
    assert {c.name for c in d.candidates} == {"ON", "SB"}


def test_seed_profile_keeps_the_seed_status_rule() -> None:
    """Under the seed profile a standby queue is skipped (the queue status must be online)."""
    snap = grid([anal_queue("ON", "S1"), anal_queue("SB", "S2", status="standby")], [anal_task(1)])
    assert codes(run(snap)) == {"SB": "-status"}


def test_memory_without_base_ram_and_int_compensation() -> None:
    """int(ramCount x queue cores x 0.9) for MBPerCore, no baseRamCount: 1000 x 4 x 0.9 = 3600 > maxrss 3500."""
    snap = grid(
        [anal_queue("A", "S1", corecount=4, maxrss=3500), anal_queue("B", "S2", corecount=4, maxrss=3600)],
        [anal_task(1, corecount=4, ramcount=1000, ramunit="MBPerCore", baseramcount=500)],
    )
    assert codes(run(snap, cfg(**JEDI))) == {"A": "-lowmemory"}


def test_zero_share_check_runs_for_analysis() -> None:
    """hasZeroShare: 'type=any:0%' zero-shares every processing group but test at that queue."""
    snap = grid(
        [anal_queue("A", "S1", fairsharepolicy="type=any:0%"), anal_queue("B", "S2")],
        [anal_task(1, processingtype="panda-client")],
    )
    assert codes(run(snap, cfg(**JEDI))) == {"A": "-zeroshare"}


def test_data_check_prefers_complete_disk_replicas() -> None:
    """Input data check: with a complete disk replica at S1 only S1's queue stays (S2 holds 3 of 10 files)."""
    snap = with_input([anal_queue("A", "S1"), anal_queue("B", "S2")], {"S1": 10, "S2": 3})
    keep, union, weight = ap.data_sites(_ctx(snap))
    names = views.queue_arrays(cache_for(snap, None)).name
    assert list(names[keep]) == ["A"] and not union
    assert weight.tolist() == [1.0, 0.0]


def test_jobs_estimate_packs_whole_files() -> None:
    """getSubChunk: 120 files of 833 events and 1000 events per job give one file per job: 120 jobs."""
    snap = grid(
        [anal_queue("A", "S1")],
        [anal_task(1, chunk_nevents=1000)],
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 120, "size_gb": 24.0, "nevents": 100000}],
    )
    assert apw.jobs_estimate(_ctx(snap)) == 120.0


def test_jobs_estimate_cuts_files_into_ranges() -> None:
    """20 files of 1000 events with 100 events per job: 10 ranges per file, 200 jobs."""
    snap = grid(
        [anal_queue("A", "S1")],
        [anal_task(1, chunk_nevents=100)],
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 20, "size_gb": 40.0, "nevents": 20000}],
    )
    assert apw.jobs_estimate(_ctx(snap)) == 200.0


def test_main_weights_class_a_task() -> None:
    """A class-A task with 200 jobs, room 0 at hi-sites and 988 at mid-sites: mid-sites get 200, hi and lo the
    initial epsilon 0.001 (no hi-site share to move)."""
    main = apw._main_weights(1, 200.0, {1: 0.0, 0: 988.0, -1: 0.0}, 988.0)
    assert main == {1: 0.0, 0: 200.0, -1: 0.0}


def test_main_weights_move_epsilons_from_hi_sites() -> None:
    """Class A, 100 jobs, room 100 at hi-sites: hi gets 100 - 0.05 - 0.002, mid 0.001 + 0.05, lo 0 + 0.002."""
    main = apw._main_weights(1, 100.0, {1: 100.0, 0: 50.0, -1: 0.0}, 150.0)
    assert math.isclose(main[1], 99.948) and math.isclose(main[0], 0.05) and math.isclose(main[-1], 0.002)


def test_basic_weight_single_mid_site() -> None:
    """One mid-site with room 100 (BASE_QUEUE_LENGTH_PER_PQ) and 5 jobs: 5 x (100 - 5) / (100 - 5) + 2^-20."""
    snap = grid([anal_queue("A", "S1")], [anal_task(1, chunk_nevents=100)],
                datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 5, "size_gb": 1.0, "nevents": 500}])  # fmt: skip
    ctx = _ctx(snap)
    ctx.stab = apw.jedi_stabilizer(ctx)
    assert apw.basic_weight(ctx, np.array([0])).tolist() == [5.0 + 2.0**-20]


def test_idle_queue_is_overloaded_when_others_are_not() -> None:
    """Overload check: nQueue 30 > OVERLOAD_MIN_QUEUE 20 with nRunning 0 removes A while B is not overloaded."""
    snap = grid(
        [anal_queue("A", "S1"), anal_queue("B", "S2")],
        [anal_task(1)],
        job_counts=counts("A", UA, activated=30) + counts("B", UA, running=10, activated=5),
    )
    d = run(snap, cfg(**JEDI))
    assert codes(d) == {"A": "-overloaded"} and [c.name for c in d.candidates] == ["B"]


def test_problematic_idle_queue_is_dropped_at_the_final_check() -> None:
    """Every queue overloaded: the overload check keeps them, but the idle one (nQueue 30 > 20, nothing running) is
    problematic and the final check drops it (-badsite)."""
    snap = grid([anal_queue("A", "S1")], [anal_task(1)], job_counts=counts("A", UA, activated=30))
    d = run(snap, cfg(**JEDI))
    assert codes(d) == {"A": "-badsite"} and not d.candidates


def test_output_space_is_judged_at_the_analysis_scope() -> None:
    """select_scope gives analysis jobs the queue's 'analysis' output scope: its endpoint with 150 GB usable is below
    STORAGE_MIN_FREE_SIZE_OUTPUT's 200 GB, so queue A is skipped (-disk) though its default scope has 500,000 GB."""
    eps = [
        {"ddm_endpoint_name": f"{s}_DATADISK", "site_name": s, "space_total": 1e6, "space_free": 5e5}
        for s in ("S1", "S2")
    ] + [{"ddm_endpoint_name": "S1_SCRATCHDISK", "site_name": "S1", "space_total": 1e3, "space_free": 150}]
    rel = [
        {"panda_queue": "A", "ddm_endpoint_name": "S1_DATADISK", "default_write": True},
        {"panda_queue": "A", "ddm_endpoint_name": "S1_SCRATCHDISK", "default_write": True, "scope": "analysis"},
        {"panda_queue": "B", "ddm_endpoint_name": "S2_DATADISK", "default_write": True},
    ]
    snap = grid([anal_queue("A", "S1"), anal_queue("B", "S2")], [anal_task(1)], ddm_endpoints=eps,
                panda_ddm_relation=rel)  # fmt: skip
    assert codes(run(snap, cfg(**JEDI))) == {"A": "-disk"}


def _ranged_input(holders: dict[str, int], **task_kw: object) -> GridSnapshot:
    """Task 1 reads 20 files of 1000 events and 0.5 GiB (10 GiB) at 100 events per job; HOLDERS: files per DATADISK."""
    return grid(
        [anal_queue("A", "S1"), anal_queue("B", "S2")],
        [anal_task(1, chunk_nevents=100, **task_kw)],
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 20, "size_gb": 10.0, "nevents": 20000}],
        dataset_replicas=[
            {"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": f"{s}_DATADISK", "nfiles": n, "size_gb": n * 0.5}
            for s, n in holders.items()
        ],
    )


def test_data_weight_counts_every_event_range() -> None:
    """AtlasAnalJobBroker's data weight without the locality check, 1 + local disk GB / 10, sums the size of every
    file record: 20 files cut into 10 ranges of 100 events are 200 records of 0.5 GiB (100 GiB in all), and the one
    file on S1's disk is 10 records, 5 GiB, so A weighs 1 + 5 / 10 = 1.5 and B (nothing local) 1 (task 149004)."""
    ctx = _ctx(_ranged_input({"S1": 1}))
    ctx.use_locality = False
    local = apw.jedi_anal_local_disk(ctx)
    assert local["total_gb"] == 100.0 and local["disk_gb"].tolist() == [5.0, 0.0]
    assert apw.data_weight(ctx, np.array([0, 1])).tolist() == [1.5, 1.0]


def test_merge_chunk_counts_a_partial_replica_as_complete() -> None:
    """A merge chunk looks up no files (check_completeness off): S1's replica of 8 of the 20 files counts as the whole
    dataset, 20 x 0.5 GiB = 10 GiB local (ranges apply to the master's event split: here 10 ranges, 100 GiB), so
    1 + 100 / 10 = 11; without merge only the 8 files' 80 records, 40 GiB: 1 + 40 / 10 = 5 (task 31006)."""
    ctx = _ctx(_ranged_input({"S1": 8}, is_merge=True))
    ctx.use_locality = False
    assert apw.data_weight(ctx, np.array([0])).tolist() == [11.0]
    plain = _ctx(_ranged_input({"S1": 8}))
    plain.use_locality = False
    assert apw.data_weight(plain, np.array([0])).tolist() == [5.0]


def test_problematic_queue_takes_its_share_of_the_basic_weight() -> None:
    """JEDI weighs every candidate before its final check drops the problematic ones (skipProblematicSites comes
    after the weights): both A (30 queued, 10 running) and the idle B (30 queued, nothing running) are overloaded
    against the grand ratio 60 / 1010 that offline C's 1000 running jobs set, so the overload check keeps them; B is
    problematic (nQueue 30 > 20, nRunning 0). A (room 100) keeps the weight it has beside B (room 100): 1 job x
    max(100 - 1/2, 0.001) / (200 - 1) + 2^-20, not the whole 1 + 2^-20 (tasks 101001, 101006)."""
    snap = grid(
        [anal_queue("A", "S1"), anal_queue("B", "S2"), anal_queue("C", "S3", status="offline")],
        [anal_task(1)],
        job_counts=counts("A", UA, running=10, activated=30)
        + counts("B", UA, activated=30)
        + counts("C", UA, running=1000),
    )
    d = run(snap, cfg(**JEDI))
    assert codes(d) == {"B": "-badsite", "C": "-status"} and [c.name for c in d.candidates] == ["A"]
    assert math.isclose(d.candidates[0].weight, 99.5 / 199.0 + 2.0**-20, rel_tol=1e-12)


def _gpu_grid(architecture: str) -> GridSnapshot:
    def sw(q: str, *archs: dict[str, object]) -> dict[str, object]:
        return {"panda_queue": q, "cmtconfigs": ["x86_64-el9-gcc13-opt"], "containers": ["any"], "cvmfs": ["atlas"],
                "architectures": list(archs), "tags": []}  # fmt: skip

    cpu = {"type": "cpu", "arch": ["x86_64"]}
    auto = {"releases": ["AUTO"]}
    queues = [anal_queue("P", "S1", **auto), anal_queue("EX", "S2", catchall="gpu", **auto),
              anal_queue("OPEN", "S3", catchall="gpu", **auto), anal_queue("ANY", "S4", catchall="gpu")]  # fmt: skip
    software = [sw("P", cpu, {"type": "gpu", "vendor": ["nvidia"]}), sw("EX", cpu, {"type": "gpu", "vendor": ["nvidia", "excl"]}),
                sw("OPEN", cpu, {"type": "gpu", "vendor": ["nvidia"]}), sw("ANY", cpu)]  # fmt: skip
    return grid(queues, [anal_task(1, architecture=architecture)], queue_software=software)


def test_gpu_queue_needs_auto_without_exclusive_attribute() -> None:
    """AtlasAnalJobBroker's architecture check: a GPU queue passes only when AUTO with a software description holding
    no 'excl' CPU/GPU attribute; no CPU/GPU spec reaches the check, so even a task asking '&nvidia' fails EX."""
    d = run(_gpu_grid("x86_64-el9-gcc13-opt&nvidia"), cfg(**JEDI))
    assert codes(d) == {"EX": "-architecture", "ANY": "-architecture"}
    assert {c.name for c in d.candidates} == {"P", "OPEN"}


def test_gpu_queue_needs_a_sw_platform() -> None:
    """AtlasAnalJobBroker's architecture check: a task without sw_platform fails every GPU queue ('architecture is
    required for GPU queues'); the seed profile has no such check."""
    d = run(_gpu_grid(""), cfg(**JEDI))
    assert {q for q, c in codes(d).items() if c == "-architecture"} == {"EX", "OPEN", "ANY"}
    assert "-architecture" not in codes(run(_gpu_grid(""))).values()


def test_scratch_uses_the_unified_queue_cores_and_one_file_per_job() -> None:
    """AtlasAnalJobBroker's scratch check: a single-core job of 2,336 events inside one 2 GiB file of 50,000 events
    needs 300 MiB + 2,048 MiB (one file: a job never spans a file) = 2,348 MB; the unified queue U (8 cores, maxwdir
    16,000) offers 16,000 / 8 = 2,000 MB (JEDI checks the unified site, not the pseudo queue) and fails -disk; A
    (1 core, maxwdir 2,400) passes."""
    queues = [anal_queue("A", "S1", maxwdir=2400),
              anal_queue("U", "S2", type="unified", capability="ucore", corecount=8, maxwdir=16000, maxrss=0)]  # fmt: skip
    replicas = [{"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": f"{s}_DATADISK", "nfiles": 1, "size_gb": 2.0}
                for s in ("S1", "S2")]  # fmt: skip
    snap = grid(
        queues,
        [anal_task(1, chunk_nevents=2336, chunk_input_mb=95.7, outdiskcount=0, workdiskcount=0)],
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 1, "size_gb": 2.0, "nevents": 50000}],
        dataset_replicas=replicas,
    )
    assert codes(run(snap, cfg(**JEDI))) == {"U": "-disk"}


def test_a_job_larger_than_a_file_is_whole_files() -> None:
    """nEventsPerJob packs whole files while their events fit: 104,910 events per job over files of 50,000 events is
    2 files, 100,000 events, so the walltime need is 10 HS06 s x 100,000 = 1,000,000, within A's (102,000 s x 10
    HS06 x 100 %) = 1,020,000 (the snapshot's 104,910 events would need 1,049,100 and fail A)."""
    task = anal_task(1, chunk_nevents=104910, chunk_input_mb=4196.4, cputime=10.0, cputimeunit="HS06sPerEvent",
                     cpuefficiency=100, basewalltime=0)  # fmt: skip
    snap = grid(
        [anal_queue("A", "S1", maxtime=102000, corepower=10.0, corecount=1)],
        [task],
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 10, "size_gb": 20.0, "nevents": 500000}],
        dataset_replicas=[
            {"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": "S1_DATADISK", "nfiles": 10, "size_gb": 20.0}
        ],
    )
    assert codes(run(snap, cfg(**JEDI))) == {}
    assert ap.job_size(_ctx(snap)) == (100000.0, 2 * 2048.0)  # 2 files of 2 GiB
    inside = snap.replace(tasks=snap.tasks.assign(chunk_nevents=2336, chunk_input_mb=95.7))
    assert ap.job_size(_ctx(inside)) == (2336.0, 95.7)  # inside one file: the snapshot's job


def test_site_lists_match_queue_names_as_jedi_regexps() -> None:
    """AtlasBrokerUtils.isMatched: includedSite 'ANALY_CERN*' is the regexp 'ANALY_CERN.*' searched in the queue
    name, so XANALY_CERN stays and CERN_UCORE_2 is -notincluded; excludedSite 'CERN-PROD' (an ATLAS site, no queue
    of that name) excludes nothing."""
    queues = [anal_queue("ANALY_CERN", "CERN-PROD"), anal_queue("CERN_UCORE_2", "CERN-PROD"),
              anal_queue("XANALY_CERN", "S3")]  # fmt: skip
    d = run(grid(queues, [anal_task(1, includedsite="ANALY_CERN*")]), cfg(**JEDI))
    assert codes(d) == {"CERN_UCORE_2": "-notincluded"}
    assert codes(run(grid(queues, [anal_task(1, excludedsite="CERN-PROD")]), cfg(**JEDI))) == {}
    assert set(codes(run(grid(queues, [anal_task(1, excludedsite="CERN-PROD")]))).values()) == {"-excluded"}


def test_a_pre_assigned_site_is_one_queue_by_its_exact_name() -> None:
    """SiteMapper.checkSite: site 'US-T2-003' pre-assigns the queue of that name only, so ANALY_US-T2-003 (same ATLAS
    site) is -nonpreassigned; the seed matches the ATLAS site too and keeps both."""
    queues = [anal_queue("US-T2-003", "US-T2-003"), anal_queue("ANALY_US-T2-003", "US-T2-003")]
    snap = grid(queues, [anal_task(1, site="US-T2-003")])
    assert codes(run(snap, cfg(**JEDI))) == {"ANALY_US-T2-003": "-nonpreassigned"}
    assert codes(run(snap)) == {}


def test_a_pre_assigned_queue_without_the_data_leaves_no_queue_in_the_data_check() -> None:
    """AtlasAnalJobBroker.py:623-628: when the pre-assigned queue P holds no replica, the data check keeps no queue
    (Q holds all 10 files and is dropped too); when P holds them, every queue holding them stays."""
    queues = [anal_queue("P", "S1"), anal_queue("Q", "S2")]
    lacking = with_input(queues, {"S2": 10}, tasks=[anal_task(1, site="P")])
    assert not ap.data_sites(_ctx(lacking))[0].any()
    holding = with_input(queues, {"S1": 10, "S2": 10}, tasks=[anal_task(1, site="P")])
    assert ap.data_sites(_ctx(holding))[0].tolist() == [True, True]


def test_a_site_naming_a_production_queue_adds_no_candidate() -> None:
    """JEDI's scan list holds analysis and unified queues only (AtlasAnalJobBroker.py:117): a task whose site names
    the production queue PQ leaves PQ out of the preliminary candidates (the seed adds it)."""
    queues = [anal_queue("A", "S1"), anal_queue("PQ", "S2", type="production")]
    snap = grid(queues, [anal_task(1, site="PQ")])
    assert "PQ" not in {c.name for c in run(snap, cfg(**JEDI)).candidates}
    assert "PQ" in {c.name for c in run(snap).candidates}


def test_a_site_naming_no_queue_replaces_the_include_list() -> None:
    """AtlasAnalJobBroker.py:119-135: a task site naming no queue becomes the include list of the queues reading an
    input endpoint of that name (site S1_DATADISK: A only, so includedSite B is replaced and B is -notincluded); a
    site naming neither drops the include list (B is not checked against includedSite A)."""
    queues = [anal_queue("A", "S1"), anal_queue("B", "S2")]
    by_endpoint = grid(queues, [anal_task(1, site="S1_DATADISK", includedsite="B")])
    assert codes(run(by_endpoint, cfg(**JEDI))) == {"B": "-notincluded"}
    unknown = grid(queues, [anal_task(1, site="NOWHERE", includedsite="A")])
    assert codes(run(unknown, cfg(**JEDI))) == {}


def test_the_temp_user_problem_check_does_not_exempt_the_pre_assigned_queue() -> None:
    """The pre-assigned queue P, idle with 30 queued (> OVERLOAD_MIN_QUEUE 20), is problematic for the temp user
    problem check (AtlasAnalJobBroker.py:1737) but kept by the final check (skipProblematicSites' preSetSiteSpec)."""
    snap = grid([anal_queue("P", "S1")], [anal_task(1, site="P")], job_counts=counts("P", UA, activated=30))
    ctx = _ctx(snap)
    assert ap.problematic(ctx, exempt_preassigned=False)[0].tolist() == [True]
    assert ap.problematic(ctx)[0].tolist() == [False]


def test_an_input_dataset_incomplete_everywhere_says_so() -> None:
    """AtlasAnalJobBroker: a dataset with no replica at readable storage holding all its files, all but
    MAX_MISSING_INPUT_FILES (10) or MIN_INPUT_COMPLETENESS (90 %) leaves the task without candidates, and the
    decision names that cause: 50 and 30 of 100 files miss 50 and 70 (> 10) and hold 50 % and 30 % (< 90 %)."""
    snap = with_input([anal_queue("A", "S1"), anal_queue("B", "S2")], {"S1": 50, "S2": 30}, nfiles=100)
    d = run(snap, cfg(**JEDI))
    assert d.status == "pending" and not d.candidates
    assert d.message.startswith("an input dataset is incomplete at online storage")
    complete = with_input([anal_queue("A", "S1"), anal_queue("B", "S2")], {"S1": 91, "S2": 30}, nfiles=100)
    assert run(complete, cfg(**JEDI)).candidates  # 91 % >= MIN_INPUT_COMPLETENESS
