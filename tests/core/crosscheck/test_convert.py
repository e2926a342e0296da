"""The snapshot as PanDA's offline inputs (no PanDA needed): queues, endpoints, relations, tasks, chunks, rucio."""

from __future__ import annotations

import json

import pytest

from brokerage.crosscheck.chunks import (
    BYTES_PER_GB,
    MAX_RECORDS,
    PSEUDO,
    datasets_and_replicas,
    split_rule,
    task_spec,
)
from brokerage.crosscheck.convert import UNKNOWN_CLOUD, grid_document
from brokerage.crosscheck.generator import random_grid
from brokerage.crosscheck.run import brokers_of, panda_config, select_tasks
from brokerage.model import views
from brokerage.model.cache import cache_for
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import PANDA_104
from tests.builders import anal_queue, anal_task, grid


@pytest.fixture(scope="module")
def doc() -> dict:
    snap = random_grid(3)
    cache = cache_for(snap, None)
    return {
        "snap": snap,
        "grid": grid_document(cache, panda_config(Config()), select_tasks(cache, ["prod", "nucleus", "anal"])),
    }


def test_the_document_is_plain_json(doc: dict) -> None:
    assert json.loads(json.dumps(doc["grid"]))["queues"]


def test_queues_carry_cric_keys_site_role_and_a_cloud(doc: dict) -> None:
    snap, g = doc["snap"], doc["grid"]
    assert set(g["queues"]) == set(snap.queues["panda_queue"])
    roles = dict(zip(snap.sites["site_name"], snap.sites["role"], strict=True))
    for q in snap.queues.to_dict("records"):
        data = g["queues"][q["panda_queue"]]
        assert data["role"] == roles[q["atlas_site"]]
        assert data["data"]["nickname"] == q["panda_queue"]
        assert data["data"]["corecount"] == q["corecount"] and data["data"]["maxrss"] == q["maxrss"]
        assert data["data"]["cloud"] not in ("", None)
        assert (data["data"]["workflow"] == "pull_ups") == (q["capability"] == "ucore")


def test_bare_nucleus_mode_goes_into_the_catchall(doc: dict) -> None:
    snap, g = doc["snap"], doc["grid"]
    bare = dict(zip(snap.sites["site_name"], snap.sites["bare_nucleus"], strict=True))
    for q in snap.queues.to_dict("records"):
        mode = bare[q["atlas_site"]]
        assert (f"bareNucleus={mode}" in g["queues"][q["panda_queue"]]["data"]["catchall"]) == bool(mode)


def test_relations_read_everywhere_and_write_at_the_default(doc: dict) -> None:
    for r in doc["grid"]["panda_ddm_relation"]:
        assert "read_lan" in r["roles"]
        assert ("write_lan" in r["roles"]) == (r["default_write"] == "Y")


def test_endpoints_keep_space_and_activity_status(doc: dict) -> None:
    snap, g = doc["snap"], doc["grid"]
    for e in snap.ddm_endpoints.to_dict("records"):
        out = g["ddm_endpoints"][e["ddm_endpoint_name"]]
        assert out["space_free"] == e["space_free"] and out["is_tape"] == bool(e["is_tape"])
        assert out["detailed_status"]["write_wan"] == e["write_wan"]


def test_the_profile_travels_as_gdpconfig_and_panda_keys_by_component(doc: dict) -> None:
    cfg = doc["grid"]["config"]
    assert cfg["jobbroker:NQUEUED_SAT_CAP"] == 150
    assert cfg["taskbrokerage:DISK_THRESHOLD"] == 100
    assert not any(k.endswith(":RULES") for k in cfg)  # our own keys never reach PanDA
    assert panda_config(Config())["RULES"] == PANDA_104


def test_chunks_split_the_dataset_into_files_with_its_bytes_and_events(doc: dict) -> None:
    snap, g = doc["snap"], doc["grid"]
    for t in g["tasks"]:
        tid = t["jediTaskID"]
        for d in t["datasets"]:
            if d["datasetName"] == PSEUDO:
                continue
            row = snap.datasets[
                (snap.datasets["jeditaskid"] == tid) & (snap.datasets["datasetid"] == d["datasetID"])
            ].iloc[0]
            sizes = {f["lfn"]: f["fsize"] for f in d["files"]}  # one record per event range of a file
            assert len(sizes) == row["nfiles"]
            assert sum(sizes.values()) == pytest.approx(row["size_gb"] * BYTES_PER_GB, rel=1e-6)
            assert sum(f["endEvent"] - f["startEvent"] + 1 for f in d["files"]) == row["nevents"]
            per_job = int(
                g["tasks"][[x["jediTaskID"] for x in g["tasks"]].index(tid)]["spec"]["splitRule"].split(",")[0][3:] or 0
            )
            assert max(f["endEvent"] - f["startEvent"] + 1 for f in d["files"]) <= max(
                per_job, row["nevents"] // row["nfiles"]
            )
            reps = g["rucio"]["dataset_replicas"][d["datasetName"]]
            for r in reps:
                have = [lfn for lfn in sizes if r["rse"] in g["rucio"]["file_replicas"].get(lfn, [])]
                assert len(have) == r["available_length"]


def test_split_rule_and_spec_fields() -> None:
    t = {"jeditaskid": 7, "chunk_nevents": 500, "t1weight": -1, "fullchain": "require", "allowinputlan": "only",
         "inputprestaging": True, "maxcorecount": 8, "ipconnectivity": "http#IPv6", "currentpriority": 900}  # fmt: skip
    assert split_rule(t) == "NE=500,TW=-1,FU=2,IL=2,IS=1,CC=8,IP=2,IK=6"
    assert split_rule({"chunk_nevents": 0}) == "NF=1"
    spec = task_spec({**t, "prodsourcelabel": "managed", "cputime": 30.0, "nucleus": "CERN"})
    assert spec["currentPriority"] == 900 and spec["cloud"] == "WORLD" and spec["nucleus"] == "CERN"


def test_which_brokers_a_task_meets() -> None:
    wanted = ("prod", "nucleus", "anal")
    assert brokers_of({"prodsourcelabel": "user"}, wanted) == ["anal"]
    assert brokers_of({"prodsourcelabel": "managed", "nucleus": "CERN"}, wanted) == ["prod"]
    assert brokers_of({"prodsourcelabel": "managed", "nucleus": None}, wanted) == ["nucleus"]


def test_random_grids_are_deterministic_and_valid() -> None:
    a, b = random_grid(11), random_grid(11)
    assert a.to_dict() == b.to_dict()
    assert a.to_dict() != random_grid(12).to_dict()
    assert {"ucore"} <= set(a.queues["capability"]) | set(random_grid(12).queues["capability"])


def test_unknown_cloud_is_filled(doc: dict) -> None:
    assert UNKNOWN_CLOUD == "XX"


def test_a_task_without_parent_is_its_own_parent() -> None:
    """A null parent_tid becomes the task's own id (a JEDI root task), so the full-chain check finds no parent."""
    assert task_spec({"jeditaskid": 7, "parent_tid": None})["parent_tid"] == 7
    assert task_spec({"jeditaskid": 7, "parent_tid": 3})["parent_tid"] == 3


def test_secondary_datasets_add_no_files_to_a_job() -> None:
    """The snapshot's job input is chunk_input_mb (the master's files): a secondary dataset reaches JEDI with
    'ratio=0' (JediDatasetSpec.getRatioToMaster), so InputChunk.getMaxAtomSize counts the master's files only;
    the master carries no attributes (JEDI's default ratio)."""
    snap = next(g for g in map(random_grid, range(1, 40)) if not g.datasets["is_master"].astype(bool).all())
    cache = cache_for(snap, None)
    g = grid_document(cache, panda_config(Config()), select_tasks(cache, ["prod", "nucleus", "anal"]))
    secondary = {int(d) for d, m in zip(snap.datasets["datasetid"], snap.datasets["is_master"], strict=True) if not m}
    seen = [d for t in g["tasks"] for d in t["datasets"] if d["datasetID"] in secondary]
    assert seen and all(d["attributes"] == "ratio=0" for d in seen)
    assert all("attributes" not in t["datasets"][0] for t in g["tasks"])


def test_random_grids_vary_site_state_secondaries_and_software() -> None:
    """The fields the demo grid exposed are drawn too: non-ACTIVE nuclei, secondary datasets, base platforms and
    architecture alternations, queues lacking the task's cmtconfig or naming a registry path as container."""
    grids = [random_grid(s) for s in range(1, 41)]
    states = {s for g in grids for s in g.sites["state"]}
    archs = {a for g in grids for a in g.tasks["architecture"]}
    assert {"ACTIVE", "INACTIVE"} <= states
    assert any(not m for g in grids for m in g.datasets["is_master"])
    assert {"x86_64-el9-gcc13-opt@el9", "(x86_64|aarch64)-el9-gcc13-opt"} <= archs
    rows = [r for g in grids for r in g.queue_software.to_dict("records")]
    assert any(list(r["cmtconfigs"]) == ["x86_64-centos7-gcc11-opt"] for r in rows)
    assert any(str(c).startswith("/cvmfs/unpacked") for r in rows for c in r["containers"])


def test_analysis_files_are_cut_into_job_ranges_beyond_the_production_cap() -> None:
    """An analysis task's master files are cut into ranges of chunk_nevents up to ANALYSIS_MAX_RECORDS records (a
    production task's up to MAX_RECORDS), so JEDI's getMaxAtomSize sees the snapshot's job: 3,000 files of 50,000
    events in jobs of 2,336 events are 3,000 x 22 = 66,000 records, the largest 2,336 events."""
    rucio: dict = {"dids": {}, "rules": {}, "dataset_replicas": {}, "file_replicas": {}}
    ds = {"jeditaskid": 1, "datasetid": 1, "datasetname": "user.x", "is_master": True, "nfiles": 3000,
          "size_gb": 6000.0, "nevents": 150_000_000}  # fmt: skip
    base = {"jeditaskid": 1, "chunk_nevents": 2336, "chunk_input_mb": 95.7}
    snap = grid([anal_queue("A", "S1")], [anal_task(**base)], datasets=[ds])
    files = datasets_and_replicas(cache_for(snap, None), views.task_row(cache_for(snap, None), 1), rucio)[0]["files"]
    assert len(files) == 66_000 > MAX_RECORDS
    assert max(f["endEvent"] - f["startEvent"] + 1 for f in files) == 2336
    prod = grid([anal_queue("A", "S1")], [anal_task(prodsourcelabel="managed", **base)], datasets=[ds])
    files = datasets_and_replicas(cache_for(prod, None), views.task_row(cache_for(prod, None), 1), rucio)[0]["files"]
    assert len(files) == 3000  # whole files: 66,000 records are over the production cap


def test_analysis_site_lists_set_limited_sites() -> None:
    """AtlasAnalTaskRefiner sets limitedSites (LS: 1 allow list, 2 deny list, 3 both) when the task has site lists;
    without it AtlasAnalJobBroker ignores includedSite and excludedSite."""
    user = {"prodsourcelabel": "user", "chunk_nevents": 0}
    assert "LS=1" in split_rule({**user, "includedsite": "ANALY_*"}).split(",")
    assert "LS=2" in split_rule({**user, "excludedsite": "X"}).split(",")
    assert "LS=3" in split_rule({**user, "includedsite": "A", "excludedsite": "X"}).split(",")
    assert "LS" not in split_rule(user)
