"""Imports: kind detection, CRIC / DDM / sites mapping, snapshot replacement, all-or-nothing on bad files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from brokerage.model.snapshot import GridSnapshot
from brokerage.store import config_store, repository
from brokerage.store.importer import ImportFileError, detect_kind, import_file
from tests.db.helpers import edge_grid, frames_equal


def cric_queue(name: str, site: str, **kw: Any) -> dict[str, Any]:
    """A CRIC pandaqueue record shaped like cric_pandaqueues.json, with fields brokerage ignores too."""
    rec = {
        "name": name, "panda_resource": name, "nickname": name, "atlas_site": site, "cloud": "US",
        "type": "unified", "status": "online", "corecount": 8, "corepower": 11.2, "maxrss": 48000,
        "minrss": 0, "maxtime": 259200, "mintime": 0, "maxwdir": 160000, "direct_access_lan": True,
        "transferringlimit": 3000, "releases": ["AUTO"], "jobseed": "std", "capability": "ucore",
        "catchall": "", "fairsharepolicy": "type=evgensimul:100%", "wnconnectivity": "full#IPv4",
        "maxdiskio": 5000, "maxinputsize": 100000, "harvester": "CERN_central_A", "is_cvmfs": True,
        "astorages": {"read_lan": [f"{site}_DATADISK", f"{site}_MCTAPE"], "write_lan": [f"{site}_DATADISK"],
                      "pr": [f"{site}_DATADISK"]},
        "queues": [{"ce_endpoint": "gate01.example.org:9619", "ce_flavour": "HTCONDOR-CE"}],
    }  # fmt: skip
    rec.update(kw)
    return rec


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_cric_queues_are_mapped_field_by_field(engine: Any, tmp_path: Path) -> None:
    """CRIC attributes land in the queue columns of the same name; astorages become endpoint relations."""
    path = write(tmp_path, "cric.json", {"AGLT2": cric_queue("AGLT2", "AGLT2"), "OLDQ": cric_queue(
        "OLDQ", "AGLT2", astorages=None, ddm="AGLT2_SCRATCHDISK,AGLT2_DATADISK", releases="ANY", maxdiskio=None,
        corecount=1, capability=None, jobseed=None, type="production", status="brokeroff")})  # fmt: skip
    result = import_file(engine, path)
    assert result.kind == "cric_queues" and result.counts["queues"] == 2
    snap = repository.load_snapshot(engine)
    q = snap.tables["queues"].set_index("panda_queue")
    a = q.loc["AGLT2"]
    assert (a["atlas_site"], a["cloud"], a["type"], a["status"]) == ("AGLT2", "US", "unified", "online")
    assert (a["corecount"], a["corepower"], a["maxrss"], a["maxtime"], a["maxwdir"]) == (8, 11.2, 48000, 259200, 160000)
    assert (a["direct_access_lan"], a["transferringlimit"], a["releases"], a["capability"]) == (
        True,
        3000,
        ["AUTO"],
        "ucore",
    )
    assert (a["fairsharepolicy"], a["wnconnectivity"], a["maxdiskio"]) == ("type=evgensimul:100%", "full#IPv4", 5000)
    old = q.loc["OLDQ"]
    assert (old["releases"], old["maxdiskio"], old["capability"], old["jobseed"]) == (["ANY"], 0, "score", "std")
    assert (old["type"], old["status"]) == ("production", "brokeroff")
    rel = snap.tables["panda_ddm_relation"]
    got = {(r.panda_queue, r.ddm_endpoint_name, r.default_write) for r in rel.itertuples()}
    assert got == {
        ("AGLT2", "AGLT2_DATADISK", True),
        ("AGLT2", "AGLT2_MCTAPE", False),
        ("OLDQ", "AGLT2_SCRATCHDISK", True),
        ("OLDQ", "AGLT2_DATADISK", False),
    }
    eps = snap.tables["ddm_endpoints"].set_index("ddm_endpoint_name")
    assert eps.loc["AGLT2_MCTAPE", "is_tape"] and eps.loc["AGLT2_MCTAPE", "type"] == "MCTAPE"
    assert snap.tables["sites"]["site_name"].tolist() == ["AGLT2"]
    assert any("added 1 site" in n for n in result.notes) and any("endpoint" in n for n in result.notes)


def test_cric_import_updates_a_queue_in_place(engine: Any, tmp_path: Path) -> None:
    """Re-importing a known queue replaces its CRIC fields in place and keeps live fields such as npilot."""
    repository.save_snapshot(engine, edge_grid())
    before = repository.load_snapshot(engine).tables["queues"]
    rec = cric_queue("Q2", "SITE_B", type="analysis", maxrss=64000, astorages={"read_lan": ["SITE_B_DATADISK"],
                     "write_lan": ["SITE_B_DATADISK"]})  # fmt: skip
    import_file(engine, write(tmp_path, "one.json", {"Q2": rec}))
    after = repository.load_snapshot(engine)
    q = after.tables["queues"]
    assert q["panda_queue"].tolist() == before["panda_queue"].tolist()
    row = q.set_index("panda_queue").loc["Q2"]
    assert (row["maxrss"], row["npilot"], row["site_class"]) == (64000, 10, -1)
    assert after.version > edge_grid().version


def test_queue_types_brokerage_does_not_use_are_skipped(engine: Any, tmp_path: Path) -> None:
    """Queues of other CRIC types (e.g. special) are skipped with a note instead of failing the file."""
    path = write(tmp_path, "q.json", {"A": cric_queue("A", "S"), "B": cric_queue("B", "S", type="special")})
    result = import_file(engine, path)
    assert repository.load_snapshot(engine).tables["queues"]["panda_queue"].tolist() == ["A"]
    assert any("B (special)" in n for n in result.notes)


def test_ddm_endpoints_and_sites_are_imported(engine: Any, tmp_path: Path) -> None:
    """DDM endpoint and site files fill space, detailed status, roles (datapolicies) and bare-nucleus modes."""
    import_file(engine, write(tmp_path, "q.json", {"AGLT2": cric_queue("AGLT2", "AGLT2")}))
    endpoints = {
        "AGLT2_DATADISK": {"site": "AGLT2", "type": "DATADISK", "is_tape": False, "space_total": 5000.0,
                           "space_used": 3000.0, "detailed_status": {"read_lan": "ON", "write_wan": {"status": "OFF"}}},
        "AGLT2_MCTAPE": {"site": "AGLT2", "type": "MCTAPE", "is_tape": True, "token": "ATLASMCTAPE"},
    }  # fmt: skip
    sites = {"AGLT2": {"tier_level": 2, "cloud": "US", "state": "ACTIVE", "datapolicies": ["Nucleus", "Tier2"],
                       "catchall": "bareNucleus=allow", "ddmendpoints": {}}}  # fmt: skip
    assert import_file(engine, write(tmp_path, "ddm.json", endpoints)).kind == "ddm_endpoints"
    assert import_file(engine, write(tmp_path, "sites.json", sites)).kind == "sites"
    snap = repository.load_snapshot(engine)
    ep = snap.tables["ddm_endpoints"].set_index("ddm_endpoint_name").loc["AGLT2_DATADISK"]
    assert (ep["space_total"], ep["space_free"], ep["read_lan"], ep["write_wan"]) == (5000.0, 2000.0, "ON", "OFF")
    site = snap.tables["sites"].set_index("site_name").loc["AGLT2"]
    assert (site["role"], site["tier_level"], site["cloud"], site["bare_nucleus"]) == ("nucleus", 2, "US", "allow")


def test_snapshot_file_replaces_the_grid(engine: Any, tmp_path: Path, small_grid: GridSnapshot) -> None:
    """A snapshot file replaces the whole grid (gdpconfig stays) and loads back equal to the file."""
    repository.save_snapshot(engine, small_grid)
    config_store.save_changes(engine, {"NQUEUED_SAT_CAP": 300}, "alice", "", 0)
    path = tmp_path / "snap.json"
    edge_grid().to_json(path)
    result = import_file(engine, path)
    assert result.kind == "snapshot"
    frames_equal(GridSnapshot.from_json(path), repository.load_snapshot(engine))
    assert config_store.load_config(engine).get("NQUEUED_SAT_CAP") == 300


def test_broken_cric_file_lists_every_problem_and_writes_nothing(engine: Any, tmp_path: Path) -> None:
    """Every bad field of every queue is listed at once, and the database stays byte-for-byte the same."""
    repository.save_snapshot(engine, edge_grid())
    before = repository.table_contents(engine)
    data = {
        "Q_OK": cric_queue("Q_OK", "SITE_A"),
        "Q_BAD1": cric_queue("Q_BAD1", "SITE_A", maxrss="lots", corecount=-2, status="sleeping"),
        "Q_BAD2": cric_queue("Q_BAD2", "SITE_A", releases=[1, 2], direct_access_lan="yes"),
        "Q_BAD3": {**cric_queue("Q_BAD3", "SITE_A"), "atlas_site": None},
        "Q_BAD4": "not an object",
    }
    with pytest.raises(ImportFileError) as err:
        import_file(engine, write(tmp_path, "bad.json", data))
    problems = err.value.problems
    for expected in ("Q_BAD1.maxrss", "Q_BAD1.corecount", "Q_BAD1.status", "Q_BAD2.releases",
                     "Q_BAD2.direct_access_lan", "Q_BAD3.atlas_site", "Q_BAD4: expected an object"):  # fmt: skip
        assert any(p.startswith(expected) for p in problems), (expected, problems)
    assert len(problems) == 7
    assert "nothing imported" in str(err.value)
    assert repository.table_contents(engine) == before


def test_broken_snapshot_file_lists_every_problem_and_writes_nothing(engine: Any, tmp_path: Path) -> None:
    """A malformed snapshot is refused with all its field problems and leaves the stored grid untouched."""
    repository.save_snapshot(engine, edge_grid())
    before = repository.table_contents(engine)
    data = edge_grid().to_dict()
    data["queues"][0]["corecount"] = "eight"
    data["queues"][1]["status"] = "sleeping"
    data["tasks"][0]["jeditaskid"] = 0
    data["bogus_table"] = []
    with pytest.raises(ImportFileError) as err:
        import_file(engine, write(tmp_path, "bad_snap.json", data))
    heads = sorted(p.split(":")[0] for p in err.value.problems)
    assert heads == ["bogus_table", "queues[0].corecount", "queues[1].status", "tasks[0].jeditaskid"]
    assert repository.table_contents(engine) == before


def test_snapshot_with_an_illegal_status_log_writes_nothing(engine: Any, tmp_path: Path) -> None:
    """A snapshot whose status log breaks the transition rules is refused as a whole."""
    repository.save_snapshot(engine, edge_grid())
    before = repository.table_contents(engine)
    data = edge_grid().to_dict()
    data["task_status_log"][1]["status"] = "finished"
    with pytest.raises(ImportFileError) as err:
        import_file(engine, write(tmp_path, "bad_log.json", data))
    assert any("cannot change to 'finished'" in p for p in err.value.problems)
    assert repository.table_contents(engine) == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        ('{"X": {"colour": "blue"}}', "cannot tell what the file describes"),
        ("[1, 2]", "cannot tell what the file describes"),
    ],
)
def test_unreadable_files_are_refused(engine: Any, tmp_path: Path, content: str, message: str) -> None:
    """Files that are not JSON or describe nothing known are refused with a clear reason."""
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(ImportFileError, match=message):
        import_file(engine, path)
    assert repository.is_empty(engine)


def test_missing_file_is_refused(engine: Any, tmp_path: Path) -> None:
    """A path that cannot be read is reported with the reason."""
    with pytest.raises(ImportFileError, match="cannot read"):
        import_file(engine, tmp_path / "nope.json")


def test_kind_is_detected_from_content() -> None:
    """Snapshots, CRIC queues, DDM endpoints and sites are told apart by their attributes."""
    assert detect_kind({"taken_at": "2026-01-01T00:00:00Z"}) == "snapshot"
    assert detect_kind({"Q": cric_queue("Q", "S")}) == "cric_queues"
    assert detect_kind([{"name": "E", "site": "S", "is_tape": False}]) == "ddm_endpoints"
    assert detect_kind({"S": {"tier_level": 1, "datapolicies": []}}) == "sites"
