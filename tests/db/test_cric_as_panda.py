"""CRIC records are read as PanDA reads them (SiteSpec, the configurator's get_panda_ddm_relations, parse_endpoints)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from brokerage.store import repository
from brokerage.store.importer import ImportFileError, import_data

QUEUEDATA = Path(__file__).parents[1] / "data" / "queuedata_CERN.json"  # pilot3's CRIC record of CERN, trimmed


def cern(**changes: Any) -> dict[str, Any]:
    """CERN's queuedata record with CHANGES (None removes a key)."""
    rec = json.loads(QUEUEDATA.read_text())
    for key, value in changes.items():
        if value is None:
            rec.pop(key, None)
        else:
            rec[key] = value
    return rec


def queue_row(engine: Any, name: str = "CERN") -> dict[str, Any]:
    return repository.load_snapshot(engine).tables["queues"].set_index("panda_queue").loc[name].to_dict()


def relations(engine: Any) -> list[tuple[str, str, bool]]:
    rel = repository.load_snapshot(engine).tables["panda_ddm_relation"]
    return sorted(zip(rel["ddm_endpoint_name"], rel["scope"], rel["default_write"], strict=True))


def test_a_missing_type_means_production(engine: Any) -> None:
    """SiteSpec's type defaults to production: a record without 'type' is a production queue, not a refused one."""
    import_data(engine, cern(type=None))
    assert queue_row(engine)["type"] == "production"


def test_the_memory_limit_is_maxrss_only(engine: Any) -> None:
    """PanDA reads maxrss (and minrss); maxmemory is not a limit: a record with only maxmemory has no maxrss."""
    import_data(engine, cern(maxrss=None, maxmemory=64000))
    assert queue_row(engine)["maxrss"] == 0


def test_per_core_attr_scales_maxrss_minrss_and_maxwdir_by_corecount(engine: Any) -> None:
    """catchall per_core_attr (SiteSpec.use_per_core_attr): maxrss 2000 x corecount 8 = 16000, maxwdir 10000 x 8."""
    import_data(engine, cern(catchall="per_core_attr", maxrss=2000, minrss=100, maxwdir=10000, corecount=8))
    row = queue_row(engine)
    assert (row["maxrss"], row["minrss"], row["maxwdir"]) == (16000, 800, 80000)


def test_relations_come_from_lan_roles_with_their_scope_not_pr_pw(engine: Any) -> None:
    """The configurator reads read_lan*/write_lan* roles (write_lan_analysis: scope analysis) and ignores pr/pw: the
    first write_lan endpoint of each scope is its default output."""
    ast = {"pr": ["CERN-PROD_OLDDISK"], "pw": ["CERN-PROD_OLDDISK"], "read_lan": ["CERN-PROD_DATADISK"],
           "write_lan": ["CERN-PROD_DATADISK", "CERN-PROD_SCRATCHDISK"], "write_lan_analysis": ["CERN-PROD_SCRATCHDISK"],
           "es_events": ["CERN-PROD_ES"]}  # fmt: skip
    import_data(engine, cern(astorages=ast))
    assert relations(engine) == [
        ("CERN-PROD_DATADISK", "default", True),
        ("CERN-PROD_SCRATCHDISK", "analysis", True),
        ("CERN-PROD_SCRATCHDISK", "default", False),
    ]


def test_a_record_with_only_pr_pw_has_no_storage(engine: Any) -> None:
    """Only the old pr/pw roles: PanDA builds no relation from them, so the queue has no storage relation."""
    import_data(engine, cern(astorages={"pr": ["CERN-PROD_DATADISK"], "pw": ["CERN-PROD_DATADISK"]}))
    assert relations(engine) == []


def test_a_disabled_endpoint_is_unusable(engine: Any) -> None:
    """An endpoint whose CRIC state is not ACTIVE is not loaded by PanDA's configurator: every activity OFF, noted."""
    result = import_data(engine, {"CERN-PROD_DATADISK": {"site": "CERN-PROD", "type": "DATADISK", "is_tape": False,
                                                         "state": "DISABLED", "token": "ATLASDATADISK"}})  # fmt: skip
    ep = (
        repository.load_snapshot(engine)
        .tables["ddm_endpoints"]
        .set_index("ddm_endpoint_name")
        .loc["CERN-PROD_DATADISK"]
    )
    assert [ep[a] for a in ("read_lan", "write_lan", "read_wan", "write_wan")] == ["OFF"] * 4
    assert any("not ACTIVE" in n and "CERN-PROD_DATADISK (DISABLED)" in n for n in result.notes)


def test_every_problem_of_a_record_is_listed_at_once(engine: Any) -> None:
    """A record lacking atlas_site and status, with a bad corecount, is refused with all three problems."""
    with pytest.raises(ImportFileError) as err:
        import_data(engine, {"BAD": cern(atlas_site=None, status=None, corecount="eight", panda_resource="BAD")})
    problems = err.value.problems
    for field in ("BAD.atlas_site", "BAD.status", "BAD.corecount"):
        assert any(p.startswith(field) for p in problems), (field, problems)
    assert repository.is_empty(engine)
