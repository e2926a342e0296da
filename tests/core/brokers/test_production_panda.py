"""PanDA 1.0.4's production weight and pseudo-queue rules (switches of the panda-1.0.4 profile), hand-computed."""

from __future__ import annotations

import pytest

from brokerage.brokers import production
from brokerage.model import profiles
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests.builders import counts, grid, queue, site, task

PANDA = Config().with_overrides({"RULES": "panda-1.0.4"})


def _without(monkeypatch: pytest.MonkeyPatch, switch: str) -> None:
    """The panda-1.0.4 profile less one switch (to show what that switch alone changes)."""
    monkeypatch.setitem(profiles.PROFILES, profiles.PANDA_104, profiles.PROFILES[profiles.PANDA_104] - {switch})


def _data_grid(**queue_kw: object) -> object:
    """Queue A at satellite S1 reads S1_DATADISK and S1_DATATAPE; the task's 10 files (10 GB) are complete on
    S1_DATATAPE only; nucleus N (queue N1, without the input)."""
    eps = [{"ddm_endpoint_name": f"{s}_DATADISK", "site_name": s, "space_total": 1e6, "space_free": 5e5}
           for s in ("N", "S1")]  # fmt: skip
    eps.append({"ddm_endpoint_name": "S1_DATATAPE", "site_name": "S1", "type": "DATATAPE", "is_tape": True,
                "space_total": 1e6, "space_free": 5e5})  # fmt: skip
    rel = [{"panda_queue": "A", "ddm_endpoint_name": "S1_DATADISK", "default_write": True},
           {"panda_queue": "A", "ddm_endpoint_name": "S1_DATATAPE", "default_write": False},
           {"panda_queue": "N1", "ddm_endpoint_name": "N_DATADISK", "default_write": True}]  # fmt: skip
    return grid(
        [queue("A", "S1", **queue_kw), queue("N1", "N")],
        [task(1, nucleus="N")],
        sites=[site("N"), site("S1", role="satellite")],
        ddm_endpoints=eps, panda_ddm_relation=rel,
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 10, "size_gb": 10.0, "is_master": True}],
        dataset_replicas=[{"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": "S1_DATATAPE", "nfiles": 10,
                           "size_gb": 10.0}],
    )  # fmt: skip


def _factors(snap: object, config: Config, name: str) -> dict[str, float]:
    d = production.broker(snap, 1, config)
    return next(c.factors for c in d.candidates if c.name == name)


def test_data_weight_counts_disk_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """data_weight_as_jedi: only input on disk counts: A's complete tape copy gives (10 + 0) / 10 / (10 / 100 + 1)
    = 1/1.1; without the switch the tape copy counts as local: (10 + 10) / 10 / (0 / 100 + 1) = 2."""
    assert _factors(_data_grid(), PANDA, "A")["data"] == pytest.approx(1 / 1.1, rel=1e-12)
    _without(monkeypatch, "data_weight_as_jedi")
    assert _factors(_data_grid(), PANDA, "A")["data"] == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize("profile", [pytest.param(PANDA, id="-non_local:panda-1.0.4")])
def test_only_local_data_queue_skipped_when_input_moves(profile: Config) -> None:
    """non_local_check: a queue whose catchall holds use_only_local_data is skipped (-non_local) when any input is
    not on its disk (A's only copy is on tape); the seed has no such rule."""
    snap = _data_grid(catchall="use_only_local_data")
    assert {s.candidate: s.criteria for s in production.broker(snap, 1, profile).skipped}.get("A") == "-non_local"
    assert "A" not in {s.candidate for s in production.broker(snap, 1, Config()).skipped}


def test_t1_weight_floor_for_scouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """t1weight_as_jedi: scouts (any priority, not event service, not pre-assigned) get t1Weight = max(t1Weight,
    100) at the nucleus' queues; a priority-500 scout task at N1 weighs x100, without the switch x1."""
    snap = grid([queue("N1", "N"), queue("S1", "S")], [task(1, nucleus="N", is_scout=True)],
                sites=[site("N"), site("S", role="satellite")])  # fmt: skip
    assert _factors(snap, PANDA, "N1")["t1"] == 100.0
    es = grid([queue("N1", "N", jobseed="all")], [task(1, nucleus="N", is_scout=True, eventservice=True)],
              sites=[site("N")])  # fmt: skip
    assert _factors(es, PANDA, "N1")["t1"] == 1.0  # event service: no high-priority floor
    _without(monkeypatch, "t1weight_as_jedi")
    assert _factors(snap, PANDA, "N1")["t1"] == 1.0


def test_many_assigned_adds_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """many_assigned_as_jedi: manyAssigned = (assigned + 1) / (activated + 1) within [1, 2]: 46 / 41 for 45
    assigned and 40 activated at a queue the input must move to; without the switch 45 / 40."""
    snap = grid([queue("A", "S1"), queue("N1", "N")], [task(1, nucleus="N")],
                sites=[site("N"), site("S1", role="satellite")],
                datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 10, "size_gb": 10.0, "is_master": True}],
                dataset_replicas=[{"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": "N_DATADISK", "nfiles": 10,
                                   "size_gb": 10.0}],
                job_counts=counts("A", running=100, activated=40, assigned=45))  # fmt: skip
    d = production.broker(snap, 1, PANDA)
    assert next(c.details for c in d.candidates if c.name == "A")["manyAssigned"] == pytest.approx(46 / 41)
    _without(monkeypatch, "many_assigned_as_jedi")
    d = production.broker(snap, 1, PANDA)
    assert next(c.details for c in d.candidates if c.name == "A")["manyAssigned"] == pytest.approx(45 / 40)


def test_unified_queue_passes_through_any_pseudo_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    """unified_any_pseudo: a unified queue stays while any of its pseudo queues passes. An any-core task of 40
    HS06 s x 1000 events = 40,000 HS06 s is below the MCORE pseudo queue's scaled mintime 3600 x 8 x 10 x 0.9 =
    259,200 but above the SCORE one's 3600 x 1 x 10 x 0.9 = 32,400, so U passes; with only the task's own view
    (MCORE) it fails -longwalltime."""
    uq = queue("U", "S1", type="unified", capability="ucore", corecount=8, mintime=3600, maxrss=64000)
    snap = grid([uq], [task(1, corecount=0, cputime=40.0, cputimeunit="HS06sPerEvent", cpuefficiency=90,
                            chunk_nevents=1000)])  # fmt: skip
    assert "U" in {c.name for c in production.broker(snap, 1, PANDA).candidates}
    _without(monkeypatch, "unified_any_pseudo")
    assert {s.candidate: s.criteria for s in production.broker(snap, 1, PANDA).skipped}.get("U") == "-longwalltime"


def _satellite_grid(datasets: list[dict], dataset_replicas: list[dict]) -> GridSnapshot:
    """Queue A at satellite S1 and N1 at nucleus N (10 running each), _data_grid's endpoints, task 1 for N with
    DATASETS and DATASET_REPLICAS."""
    base = _data_grid()
    return grid(
        [queue("A", "S1"), queue("N1", "N")], [task(1, nucleus="N")], sites=[site("N"), site("S1", role="satellite")],
        ddm_endpoints=base.ddm_endpoints.to_dict("records"),
        panda_ddm_relation=base.panda_ddm_relation.to_dict("records"),
        datasets=datasets, dataset_replicas=dataset_replicas,
        job_counts=counts("A", running=10) + counts("N1", running=10),
    )  # fmt: skip


def test_data_weight_counts_complete_secondaries_only() -> None:
    """data_weight_as_jedi: JEDI looks up secondary datasets with complete_only (AtlasProdJobBroker.py:1560), so a
    partial secondary replica adds nothing local: master 10 files (10 GB) complete on S1_DATADISK, secondary 2 of 4
    files (1 GB each) there: (14 + 10) / 14 / (4 / 100 + 1), not (14 + 12) / 14 / (2 / 100 + 1) (task 135003)."""
    snap = _satellite_grid(
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 10, "size_gb": 10.0, "is_master": True},
                  {"jeditaskid": 1, "datasetid": 2, "nfiles": 4, "size_gb": 4.0, "is_master": False}],
        dataset_replicas=[{"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": "S1_DATADISK", "nfiles": 10,
                           "size_gb": 10.0},
                          {"jeditaskid": 1, "datasetid": 2, "ddm_endpoint_name": "S1_DATADISK", "nfiles": 2,
                           "size_gb": 2.0}],
    )  # fmt: skip
    assert _factors(snap, PANDA, "A")["data"] == pytest.approx(24 / 14 / 1.04, rel=1e-12)


def test_best_candidates_are_pseudo_queues(monkeypatch: pytest.MonkeyPatch) -> None:
    """best_pseudo_queues: seed 001 says 'For WORLD tasks, the best 10 candidates are taken'; JEDI's best 10 are
    pseudo queues, one place per pseudo queue that passed. With 2 places, an any-core task of 1000 MB per core and the
    unified queue U (8 cores, maxrss 16000) passing as SCORE and MCORE (the HIMEM ones need > 2000 MB per core):
    U (weight (100 + 1) / 10 = 10.1) takes both places and Q1 ((50 + 1) / 10 = 5.1) is cut; the seed keeps U and Q1."""
    uq = queue("U", "S1", type="unified", capability="ucore", corecount=8, maxrss=16000)
    snap = grid([uq, queue("Q1", "S1"), queue("Q2", "S1")], [task(1, corecount=0, ramcount=1000)],
                job_counts=counts("U", running=100) + counts("Q1", running=50) + counts("Q2", running=10))  # fmt: skip
    two = {"MAX_SITE_CANDIDATES": 2}
    d = production.broker(snap, 1, PANDA.with_overrides(two))
    assert [(c.name, c.weight) for c in d.candidates] == [("U", pytest.approx(10.1))]
    assert {s.candidate: s.criteria for s in d.skipped} == {"Q1": "-low_weight", "Q2": "-low_weight"}
    assert [c.name for c in production.broker(snap, 1, Config().with_overrides(two)).candidates] == ["U", "Q1"]
    _without(monkeypatch, "best_pseudo_queues")
    assert [c.name for c in production.broker(snap, 1, PANDA.with_overrides(two)).candidates] == ["U", "Q1"]


def test_data_weight_scales_a_large_partial_replica_as_the_converter() -> None:
    """data_weight_as_jedi over a dataset of more than 20,000 files, described as 20,000 files (panda_data.MAX_FILES)
    with each replica's fraction kept: 40,000 files (40,000 GB) of which S1_DATADISK holds 17,000 are 8,500 of 20,000
    files of 2 GB, so (17,000 + 40,000) / 40,000 / (11,500 / 100 + 1), not the 17,000 of 20,000 the cap alone gives
    (the nucleus holds the complete replica JEDI's input pre-check needs)."""
    snap = _satellite_grid(
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 40000, "size_gb": 40000.0, "is_master": True}],
        dataset_replicas=[{"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": "S1_DATADISK", "nfiles": 17000,
                           "size_gb": 17000.0},
                          {"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": "N_DATADISK", "nfiles": 40000,
                           "size_gb": 40000.0}],
    )  # fmt: skip
    assert _factors(snap, PANDA, "A")["data"] == pytest.approx(57000 / 40000 / 116, rel=1e-12)
