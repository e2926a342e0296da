"""Files alone make a grid that brokers: CRIC + NWS + Rucio RSE usage + SiteData rows + JEDI tasks, each import
checked field by field (every problem at once, exit 2, database unchanged)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from brokerage.brokers.router import run_job_brokerage
from brokerage.cli.main import main
from brokerage.model.gdpconfig import Config
from brokerage.store import repository
from brokerage.store.importer import ImportFileError, detect_kind, import_data, import_file

DOMA = Path(__file__).parents[1] / "data" / "doma"  # real-shaped CRIC, NWS, Rucio, SiteData and JEDI rows
FILES = ("cric_sites.json", "cric_ddmendpoints.json", "cric_pandaqueues.json", "nws.json", "rse_usage.json",
         "sitedata.json", "jedi_tasks.json")  # fmt: skip
GB = 1024**3


def import_all(engine: Any, files: tuple[str, ...] = FILES) -> list[Any]:
    """Import FILES in order; SiteData's times are moved to minutes ago (the grid is taken now)."""
    out = []
    for f in files:
        data = json.loads((DOMA / f).read_text())
        if f == "sitedata.json":
            recent = (datetime.now(UTC) - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
            data = [{k: recent if k in ("laststart", "lastpilot") else v for k, v in r.items()} for r in data]
        out.append(import_data(engine, data, f))
    return out


@pytest.mark.parametrize(
    ("name", "kind"),
    [("rse_usage.json", "rse_usage"), ("sitedata.json", "pilots"), ("jedi_tasks.json", "tasks"),
     ("cric_pandaqueues.json", "cric_queues"), ("cric_ddmendpoints.json", "ddm_endpoints")],
)  # fmt: skip
def test_each_file_is_detected_by_its_content(name: str, kind: str) -> None:
    """Rucio's rse_usage dump ({rse: {storage: ...}}), SiteData rows ([{site, flag, ...}]) and JEDI rows
    ({jedi_tasks: [...]}) are recognised by their shape."""
    assert detect_kind(json.loads((DOMA / name).read_text())) == kind


def test_a_grid_from_files_alone_brokers(engine: Any) -> None:
    """db import of CRIC sites, endpoints, queues, NWS, RSE usage, pilots and tasks gives a grid where both tasks find
    queues: the wlcg task (corecount 4) SLAC_S3DF through the generic broker, the ATLAS one BNL_OSG."""
    results = import_all(engine)
    assert [r.kind for r in results] == ["sites", "ddm_endpoints", "cric_queues", "nws", "rse_usage", "pilots", "tasks"]
    snap = repository.load_snapshot(engine)
    wlcg = run_job_brokerage(snap, 7001, Config())
    assert wlcg.broker == "generic" and wlcg.ranked_names == ["SLAC_S3DF"]
    atlas = run_job_brokerage(snap, 7002, Config())
    assert atlas.broker == "production" and atlas.ranked_names == ["BNL_OSG"], atlas.skipped


def test_rse_usage_is_read_as_pandas_configurator_reads_it(engine: Any) -> None:
    """storage.used + .free (bytes / 1024**3) is the total, free less min_free_space is free, expired.used expired:
    BNL_DOMA_DISK 1500 TB total, 1024000 - 100 GB free, 10 GB expired; an RSE outside the grid is named."""
    results = import_all(engine, FILES[:5])
    eps = repository.load_snapshot(engine).tables["ddm_endpoints"].set_index("ddm_endpoint_name")
    assert eps.loc["BNL_DOMA_DISK", "space_total"] == pytest.approx((536870912000000 + 1099511627776000) / GB)
    assert eps.loc["BNL_DOMA_DISK", "space_free"] == pytest.approx(1024000 - 100)
    assert eps.loc["BNL_DOMA_DISK", "space_expired"] == pytest.approx(10)
    assert any("CERN_DOMA_DISK" in n for n in results[-1].notes)


def test_pilots_come_from_the_three_hour_sitedata_rows(engine: Any) -> None:
    """npilot = getjob + updatejob of the hours=3 row (BNL_OSG 42, not the 12-hour row's 198); unknown queues named."""
    results = import_all(engine, FILES[:6])
    q = repository.load_snapshot(engine).tables["queues"].set_index("panda_queue")
    assert q["npilot"].to_dict() == {"BNL_OSG": 42, "SLAC_S3DF": 6}
    assert any("GONE_QUEUE" in n for n in results[-1].notes)


def test_tasks_keep_brokerage_states_and_input_datasets(engine: Any) -> None:
    """Tasks waiting for or in brokerage are kept (done ones left out), their VO and cloud read; only input datasets."""
    import_all(engine)
    snap = repository.load_snapshot(engine)
    assert snap.tasks.set_index("jeditaskid")["vo"].to_dict() == {7001: "wlcg", 7002: "atlas"}
    assert snap.tasks.set_index("jeditaskid")["cloud"].to_dict()[7001] == "US"
    assert snap.tables["datasets"]["datasetid"].tolist() == [1]


BAD = {
    "rse_usage": {"X_DISK": {"storage": {"used": "lots", "free": 1}, "cache": {}},
                  "Y_DISK": {"expired": {"used": 1, "colour": "red"}}},
    "pilots": [{"site": "BNL_OSG", "flag": "sometimes", "getjob": "many", "planet": "mars"},
               {"flag": "production", "hours": 3, "updatejob": -1, "laststart": "yesterday"}],
    "tasks": {"jedi_tasks": [{"jeditaskid": "seven", "status": "ready", "favourite": 1},
                             {"taskname": 5, "corecount": 1.5}],
              "jedi_datasets": [{"jeditaskid": 7001, "datasetid": 1, "type": "input", "nfiles": "ten"}]},
}  # fmt: skip
EXPECTED = {
    "rse_usage": ["X_DISK.cache: unknown field", "X_DISK.storage.used: expected a number",
                  "X_DISK.storage: required", "Y_DISK.expired.colour: unknown field", "Y_DISK.storage: required"],
    "pilots": ["[0].planet: unknown field", "[0].getjob: expected an integer", "[0].flag: 'sometimes' is not allowed",
               "[1].laststart: expected a time", "[1].site: required", "[1].updatejob: -1 is below the minimum 0"],
    "tasks": ["jedi_tasks[0].favourite: unknown field", "jedi_tasks[0].jeditaskid: expected an integer",
              "jedi_tasks[1].taskname: expected a string", "jedi_tasks[1].corecount: expected an integer",
              "jedi_tasks[1].jeditaskid: required", "jedi_tasks[1].status: required",
              "jedi_datasets[0].nfiles: expected an integer"],
}  # fmt: skip


@pytest.mark.parametrize("kind", list(BAD))
def test_a_bad_file_lists_every_problem_exits_2_and_changes_nothing(engine: Any, tmp_path: Path, kind: str) -> None:
    """Missing fields, wrong types and unknown keys are all listed at once; `db import` exits 2; the grid is as before."""
    import_all(engine)
    before = repository.table_contents(engine)
    path = tmp_path / f"{kind}.json"
    path.write_text(json.dumps(BAD[kind]))
    assert detect_kind(BAD[kind]) == kind
    with pytest.raises(ImportFileError) as err:
        import_file(engine, path)
    for expected in EXPECTED[kind]:
        assert any(p.startswith(expected) for p in err.value.problems), (expected, err.value.problems)
    assert len(err.value.problems) == len(EXPECTED[kind]), err.value.problems
    url = engine.url.render_as_string(hide_password=False)
    out = CliRunner().invoke(main, ["db", "--database-url", url, "import", str(path)])
    assert out.exit_code == 2 and "Traceback" not in out.output
    assert repository.table_contents(engine) == before
