"""Production rules the demo grid exposed: strict isExpress, taskBrokerOnMaster, scratch at unified queues."""

from __future__ import annotations

import pytest

from brokerage.brokers import production
from brokerage.checks import production_queues
from brokerage.model import views
from brokerage.model.cache import cache_for
from brokerage.model.gdpconfig import Config
from tests.builders import grid, queue, site, task

PANDA = Config().with_overrides({"RULES": "panda-1.0.4"})


@pytest.mark.parametrize(
    ("priority", "ptype", "seed", "jedi"),
    [
        (1000, "simul", True, False),
        (1001, "simul", True, True),
        (999, "simul", False, False),
        (500, "urgent", True, True),
    ],
)
def test_express_priority(priority: int, ptype: str, seed: bool, jedi: bool) -> None:
    """Seed 003: 'processingType=urgent or priority>=1000 makes the FTS transfers ... use the express activity';
    under express_strict_priority JEDI's isExpress needs currentPriority > 1000, so a task at exactly 1000 is not
    express (urgent tasks are at any priority)."""
    cache = cache_for(grid([queue("Q", "A")], [task(1, currentpriority=priority, processingtype=ptype)]), None)
    row = views.task_row(cache, 1)
    assert production_queues.make_context(row, Config(), cache).express is seed
    assert production_queues.make_context(row, PANDA, cache).express is jedi


def test_job_broker_reads_every_dataset_despite_task_broker_on_master() -> None:
    """job_broker_all_datasets: only JEDI's task broker reads taskBrokerOnMaster; the job broker's data factor
    (avail + total) / (total x (missing files / 100 + 1)) counts the secondary too. Master 10 files / 10 GB on the
    queue's disk, secondary 10 files / 10 GB elsewhere (B): the seed profile (master only) gives (10 + 10) / (10 x 1) = 2,
    PanDA's (10 + 20) / (20 x 1.1) = 30 / 22."""
    eps = [{"ddm_endpoint_name": f"{s}_DATADISK", "site_name": s, "space_total": 1e6, "space_free": 5e5} for s in "AB"]
    snap = grid(
        [queue("Q", "A")], [task(1, nucleus="A", taskbrokeronmaster=True)], sites=[site("A"), site("B", role="satellite")],
        ddm_endpoints=eps,
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 10, "size_gb": 10.0, "is_master": True},
                  {"jeditaskid": 1, "datasetid": 2, "nfiles": 10, "size_gb": 10.0, "is_master": False}],
        dataset_replicas=[{"jeditaskid": 1, "datasetid": d, "ddm_endpoint_name": f"{s}_DATADISK", "nfiles": 10,
                           "size_gb": 10.0} for d, s in ((1, "A"), (2, "B"))],
    )  # fmt: skip
    seed = production.broker(snap, 1, Config()).candidates[0].factors["data"]
    jedi = production.broker(snap, 1, PANDA).candidates[0].factors["data"]
    assert seed == pytest.approx(2.0) and jedi == pytest.approx(30.0 / 22.0)


def test_scratch_at_a_unified_queue_uses_its_own_cores() -> None:
    """scratch_as_jedi: JEDI checks the unified site, so a single-core task at a unified queue of 8 cores and maxwdir
    16000 MB has 16000 / 8 = 2000 MB; it needs the 1500 MiB output floor + 300 MiB margin + one 500 MiB input file =
    2300 MiB (copy to scratch) and is skipped -disk, although its SCORE pseudo queue (1 core) would have 16000 MB."""
    eps = [{"ddm_endpoint_name": "A_DATADISK", "site_name": "A", "space_total": 1e6, "space_free": 5e5}]
    snap = grid(
        [queue("U", "A", capability="ucore", type="unified", corecount=8, maxwdir=16000, maxrss=64000)],
        [task(1, nucleus="A", corecount=1, outdiskcount=0, workdiskcount=0, chunk_nevents=100)],
        sites=[site("A")], ddm_endpoints=eps,
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 2, "size_gb": 1000.0 / 1024, "nevents": 2000,
                   "is_master": True}],
        dataset_replicas=[{"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": "A_DATADISK", "nfiles": 2,
                           "size_gb": 1000.0 / 1024}],
    )  # fmt: skip
    skip = {s.candidate: s for s in production.broker(snap, 1, PANDA).skipped}["U"]
    assert skip.criteria == "-disk" and "2000 MB less than 2300 MB" in skip.reason


def test_scratch_reads_a_large_dataset_as_the_converter_describes_it() -> None:
    """scratch_as_jedi: JEDI adds the whole input files of the job; the snapshot holds a dataset in aggregate and the
    crosscheck describes one of more than 20,000 files as 20,000 equal files (panda_data.MAX_FILES, as the data weight
    reads it). 40,000 files of 20,000 GiB are 20,000 files of 1 GiB, so a 100-event job needs the 1500 MiB output
    floor + 300 MiB margin + 1024 MiB = 2824 MiB, over a single-core queue's maxwdir of 2500 MB (-disk)."""
    eps = [{"ddm_endpoint_name": "A_DATADISK", "site_name": "A", "space_total": 1e6, "space_free": 5e5}]
    snap = grid(
        [queue("Q", "A", corecount=1, maxwdir=2500)],
        [task(1, nucleus="A", corecount=1, outdiskcount=0, workdiskcount=0, chunk_nevents=100, chunk_input_mb=50.0)],
        sites=[site("A")], ddm_endpoints=eps,
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 40000, "size_gb": 20000.0, "nevents": 40_000_000,
                   "is_master": True}],
        dataset_replicas=[{"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": "A_DATADISK", "nfiles": 40000,
                           "size_gb": 20000.0}],
    )  # fmt: skip
    skip = {s.candidate: s for s in production.broker(snap, 1, PANDA).skipped}["Q"]
    assert skip.criteria == "-disk" and "2500 MB less than 2824 MB" in skip.reason


def test_a_queue_short_of_space_is_not_tested_for_the_blacklist() -> None:
    """blacklist_temporary: the blacklist test is part of JEDI's storage check, which names a queue short of output
    space (-disk: 60 + 40 GB free + expired <= 200 GB) and tests only the others for the blacklist, so Q, whose
    DATADISK is also read_lan OFF, keeps -disk as its temporary skip; R (space enough, read_lan OFF) is blacklisted."""
    eps = [{"ddm_endpoint_name": "A_DATADISK", "site_name": "A", "space_total": 1e6, "space_free": 5e5},
           {"ddm_endpoint_name": "B_DATADISK", "site_name": "B", "space_total": 1e5, "space_free": 60.0,
            "space_expired": 40.0, "read_lan": "OFF"},
           {"ddm_endpoint_name": "C_DATADISK", "site_name": "C", "space_total": 1e5, "space_free": 5e4,
            "read_lan": "OFF"}]  # fmt: skip
    snap = grid(
        [queue("N1", "A"), queue("Q", "B"), queue("R", "C")], [task(1, nucleus="A")],
        sites=[site("A"), site("B", role="satellite"), site("C", role="satellite")], ddm_endpoints=eps,
    )  # fmt: skip
    skips = {s.candidate: s.criteria for s in production.broker(snap, 1, PANDA).skipped}
    assert skips == {"Q": "-disk", "R": "-read_lan_blacklist"}


def _walltime_grid(chunk_nevents: int, queue_kw: dict | None = None, **task_kw: object) -> object:
    """Queue Q (1 core, corepower 10, maxtime 2200 s: 2200 x 10 x 100 % = 22,000 HS06 s) at the nucleus; the task's
    10 input files of 1000 events each; cpuTime 10 HS06 s per event, cpuEfficiency 100 %, no baseWalltime."""
    eps = [{"ddm_endpoint_name": "A_DATADISK", "site_name": "A", "space_total": 1e6, "space_free": 5e5}]
    return grid(
        [queue("Q", "A", **{"maxtime": 2200, **(queue_kw or {})})],
        [task(1, nucleus="A", corecount=1, cputime=10.0, cputimeunit="HS06sPerEvent", cpuefficiency=100,
              basewalltime=0, chunk_nevents=chunk_nevents, **task_kw)],
        sites=[site("A")], ddm_endpoints=eps,
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 10, "size_gb": 10.0, "nevents": 10000, "is_master": True}],
        dataset_replicas=[{"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": "A_DATADISK", "nfiles": 10,
                           "size_gb": 10.0}],
    )  # fmt: skip


@pytest.mark.parametrize(("nevents", "kept"), [(2500, True), (2000, True), (3000, False)])
def test_walltime_reads_the_events_of_whole_files(nevents: int, kept: bool) -> None:
    """walltime_as_jedi: JEDI's walltime check multiplies cpuTime by the events of its largest sub-chunk
    (InputChunk.getMaxAtomSize), whole files up to nEventsPerJob: 2500 events per job over files of 1000 are 2 files,
    10 x 2000 = 20,000 HS06 s <= 22,000 (kept, where 10 x 2500 = 25,000 would fail); 3000 are 3 files, 30,000 > 22,000
    (-shortwalltime)."""
    d = production.broker(_walltime_grid(nevents), 1, PANDA)
    skips = {s.candidate: s.criteria for s in d.skipped}
    assert (skips.get("Q") is None) is kept and (kept or skips["Q"] == "-shortwalltime")


def test_walltime_of_an_event_service_job_is_shared_over_its_attempts() -> None:
    """walltime_as_jedi: for event service tasks JEDI divides cpuTime x nEventsPerJob by nEsConsumers (1) x
    maxAttemptEsJob (its default 3, EventServiceUtils.defMaxAttemptEsJob): 10 x 6000 / 3 = 20,000 HS06 s fits the
    22,000 of Q's maxtime where a non-ES task's 60,000 fails -shortwalltime."""
    plain = {s.candidate: s.criteria for s in production.broker(_walltime_grid(6000), 1, PANDA).skipped}
    assert plain.get("Q") == "-shortwalltime"
    es = production.broker(_walltime_grid(6000, eventservice=True), 1, PANDA)
    assert "-shortwalltime" not in {s.criteria for s in es.skipped if s.candidate == "Q"}


@pytest.mark.parametrize(("maxwdir", "kept"), [(4000, True), (3800, False)])
def test_scratch_counts_the_whole_files_of_the_sub_chunk(maxwdir: int, kept: bool) -> None:
    """scratch_as_jedi: a job of 2500 events over files of 1000 events (1 GiB each) is JEDI's sub-chunk of 2 whole
    files: 1500 MiB output floor + 300 MiB margin + 2 x 1024 MiB = 3848 MiB, within maxwdir 4000 MB (not the 3 files,
    4872 MiB, of the files the job's events touch) and over 3800 MB (-disk)."""
    snap = _walltime_grid(2500, outdiskcount=0, workdiskcount=0)
    snap = grid(
        [queue("Q", "A", maxwdir=maxwdir)], snap.tasks.to_dict("records"), sites=[site("A")],
        ddm_endpoints=snap.ddm_endpoints.to_dict("records"), datasets=snap.datasets.to_dict("records"),
        dataset_replicas=snap.dataset_replicas.to_dict("records"),
    )  # fmt: skip
    skip = {s.candidate: s for s in production.broker(snap, 1, PANDA).skipped}.get("Q")
    assert (skip is None) is kept
    assert kept or (skip.criteria == "-disk" and "3800 MB less than 3848 MB" in skip.reason)


def test_walltime_of_a_merge_job_is_one_file() -> None:
    """walltime_as_jedi: a merge job's sub-chunk is one file (no nFilesPerMergeJob in the snapshot), 1000 events x 10
    HS06 s = 10,000 HS06 s, below the 1500 s x 10 = 15,000 of Q's mintime (-longwalltime), where a production job
    of 2500 events (2 whole files, 20,000) passes it (maxtime 100,000 s keeps the merges' 24 h floor out of the way)."""
    wide = {"maxtime": 100000, "mintime": 1500}
    merge = production.broker(_walltime_grid(2500, wide, is_merge=True), 1, PANDA)
    assert {s.candidate: s.criteria for s in merge.skipped}.get("Q") == "-longwalltime"
    plain = production.broker(_walltime_grid(2500, wide), 1, PANDA)
    assert "Q" in {c.name for c in plain.candidates}
