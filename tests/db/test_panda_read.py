"""from-panda reads PanDA's PostgreSQL schema as JEDI reads it: job counts of jobsActive4 and jobsDefined4, per VO,
every relation scope, older schemas, PanDA's schema names, nothing invented."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from brokerage.brokers import analysis, production
from brokerage.brokers.router import run_job_brokerage
from brokerage.cli.main import main
from brokerage.model.gdpconfig import Config
from brokerage.store import config_store
from brokerage.store.database import make_engine
from brokerage.store.panda_db import PandaSchemaError, read_panda
from tests.db.conftest import make_panda, postgres_url

PANDA = Path(__file__).parents[1] / "data" / "panda"
LAYOUTS = [("doma_panda", "doma_pandameta"), ("atlas_panda", "atlas_pandameta")]  # PanDA's two PostgreSQL layouts

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(postgres_url() is None, reason="set TEST_POSTGRES_URL (scripts/services.sh start)"),
]


@pytest.fixture(params=LAYOUTS, ids=[s for s, _ in LAYOUTS])
def panda(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, str]]:
    """(url, schema, meta schema) of a PanDA test database in each layout."""
    schema, meta = request.param
    url, drop = make_panda(schema, meta)
    try:
        yield url, schema, meta
    finally:
        drop()


@pytest.fixture
def doma() -> Iterator[str]:
    """The URL of a PanDA test database in the doma_panda layout."""
    url, drop = make_panda(*LAYOUTS[0])
    try:
        yield url
    finally:
        drop()


def alter(url: str, sql: str, schema: str = "doma_panda") -> None:
    """Change the PanDA test database as its owner (the reader under test never can)."""
    eng = make_engine(url)
    with eng.begin() as conn:
        conn.exec_driver_sql(f"SET search_path = {schema}; {sql}")
    eng.dispose()


def test_defined_and_assigned_jobs_come_from_jobsdefined_share_stats(panda: tuple[str, str, str]) -> None:
    """JEDI's getJobStatisticsByGlobalShare reads JOBS_SHARE_STATS and JOBSDEFINED_SHARE_STATS: 30 defined and 10
    assigned jobs at AGLT2 enter the weight, base = (42+1)/(0 activated + 0 starting + 30 defined + 10) = 1.075
    (without them 43/10 = 4.3)."""
    url, schema, meta = panda
    alter(url, "INSERT INTO jobsdefined_share_stats (ts, gshare, computingsite, jobstatus, njobs, resource_type, vo) "
               "VALUES (now(), 'MC Simulation', 'AGLT2', 'defined', 30, 'MCORE', 'atlas'), "
               "(now(), 'MC Simulation', 'AGLT2', 'assigned', 10, 'MCORE', 'atlas')", schema)  # fmt: skip
    snap = read_panda(url, schema, meta).snapshot
    jc = snap.tables["job_counts"].query("panda_queue == 'AGLT2'").groupby("jobstatus")["njobs"].sum().to_dict()
    assert jc == {"running": 42, "defined": 30, "assigned": 10}
    d = production.broker(snap, 4242, Config())
    agl = next(c for c in d.candidates if c.name.startswith("AGLT2"))
    assert agl.details["nDefined"] == 30.0 and agl.details["nAssigned"] == 0.0  # no input to move: not counted
    assert agl.factors["base"] == pytest.approx(43 / 40)


def test_a_schema_without_jobsdefined_share_stats_is_read_with_a_note(doma: str) -> None:
    """The table is optional: without it the read goes on and a note names what the weights and caps then miss."""
    alter(doma, "DROP TABLE jobsdefined_share_stats")
    grid = read_panda(doma, "doma_panda", "doma_pandameta")
    assert any("jobsdefined_share_stats is missing" in n and "nDefined" in n for n in grid.notes)


def test_a_vo_reads_its_tasks_counts_and_config_and_routes_to_the_generic_broker(doma: str, tmp_path: Any) -> None:
    """--vo wlcg reads only wlcg tasks and job counts (JEDI counts per VO); the stored grid's VO chooses the CONFIG
    rows (TIMEOUT_defined 30 h for wlcg, not atlas' 4 h) and the wlcg task goes to the generic broker."""
    alter(
        doma,
        """
        INSERT INTO jedi_tasks (jeditaskid, taskname, status, username, creationdate, modificationtime,
          prodsourcelabel, vo, corecount, ramcount, ramunit, gshare, resource_type, processingtype, currentpriority)
          VALUES (5000, 'lsst.step1', 'ready', 'lsst', now(), now(), 'managed', 'wlcg', 8, 1000, 'MB', 'Rubin',
                  'SCORE', 'pipeline', 900);
        INSERT INTO jobs_share_stats (ts, gshare, computingsite, jobstatus, njobs, resource_type, vo)
          VALUES (now(), 'Rubin', 'BNL', 'running', 5, 'SCORE', 'wlcg');
        INSERT INTO config VALUES ('pandaserver', 'job_timeout', 'TIMEOUT_defined', '4', 'float', 'atlas', 'd', NULL),
          ('pandaserver', 'job_timeout', 'TIMEOUT_defined', '30', 'float', 'wlcg', 'd', NULL)""",
    )
    every = read_panda(doma, "doma_panda", "doma_pandameta")
    assert sorted(every.snapshot.tasks["jeditaskid"]) == [4242, 5000]
    assert any("2 VOs (atlas, wlcg)" in n for n in every.notes)
    grid = read_panda(doma, "doma_panda", "doma_pandameta", vo="wlcg")
    assert grid.snapshot.tasks["jeditaskid"].tolist() == [5000] and grid.snapshot.tasks["vo"].tolist() == ["wlcg"]
    assert grid.snapshot.tables["job_counts"][["panda_queue", "njobs"]].values.tolist() == [["BNL", 5]]
    decision = run_job_brokerage(grid.snapshot, 5000)
    # BNL's 5 wlcg running jobs: (5+1)/1/1 = 6; AGLT2's 42 running jobs are atlas': (0+1)/1/1 = 1
    assert decision.broker == "generic" and decision.ranked_names == ["BNL", "AGLT2"]
    assert [c.weight for c in decision.candidates] == [6.0, 1.0]
    store = f"sqlite:///{tmp_path / 'store.sqlite'}"
    out = CliRunner().invoke(main, ["snapshot", "from-panda", "--url", doma, "--schema", "doma_panda", "--vo", "wlcg",
                                    "--store", "--database-url", store])  # fmt: skip
    assert out.exit_code == 0, out.output
    engine = make_engine(store)
    assert config_store.load_config(engine, vo="wlcg")["TIMEOUT_defined"] == 30.0
    shown = CliRunner().invoke(main, ["db", "--database-url", store, "config-show"], env={"BROKERAGE_VO": "wlcg"})
    assert "(vo wlcg)" in shown.output and "TIMEOUT_defined" in shown.output and "30" in shown.output
    listed = CliRunner().invoke(main, ["jobs", "--task", "5000", "--json"], env={"DATABASE_URL": store})
    assert listed.exit_code == 0, listed.output
    assert '"broker": "generic"' in listed.output and '"TIMEOUT_defined": 30.0' in listed.output


def test_an_analysis_output_endpoint_below_200_gb_skips_the_queue(doma: str) -> None:
    """PanDA's select_scope: an analysis task writes to the queue's 'analysis' scope endpoint (CRIC write_lan_analysis);
    AGLT2_SCRATCHDISK with 150 GB free (+0 expired) is below STORAGE_MIN_FREE_SIZE 200 GB: -disk, while production
    tasks still write to AGLT2_DATADISK (2000000 GB free)."""
    alter(
        doma,
        """
        INSERT INTO ddm_endpoint (ddm_endpoint_name, site_name, space_total, space_free, is_tape, type, space_expired,
          detailed_status) VALUES ('AGLT2_SCRATCHDISK', 'AGLT2', 1000, 150, 'N', 'SCRATCHDISK', 0, '{}');
        DELETE FROM panda_ddm_relation WHERE scope = 'analysis';
        INSERT INTO panda_ddm_relation (panda_site_name, ddm_endpoint_name, default_write, scope)
          VALUES ('AGLT2', 'AGLT2_SCRATCHDISK', 'Y', 'analysis');
        INSERT INTO jedi_tasks (jeditaskid, taskname, status, username, creationdate, modificationtime,
          prodsourcelabel, vo, corecount, ramcount, ramunit, gshare, resource_type, processingtype, currentpriority,
          architecture, transhome)
          VALUES (6000, 'user.alice.ana', 'ready', 'alice', now(), now(), 'user', 'atlas', 1, 1000, 'MB',
                  'User Analysis', 'SCORE', 'panda-client', 1000, 'x86_64-el9-gcc13-opt', 'Athena-24.0.30')""",
    )
    snap = read_panda(doma, "doma_panda", "doma_pandameta").snapshot
    d = analysis.broker(snap, 6000, Config())
    skip = d.skip_of("AGLT2") or d.skip_of("AGLT2_SCORE")
    assert skip is not None and skip.criteria == "-disk" and "AGLT2_SCRATCHDISK" in skip.reason, d.skipped
    prod = production.broker(snap, 4242, Config())
    assert not any(s.criteria == "-disk" for s in prod.skipped if s.candidate.startswith("AGLT2"))


def test_an_older_schema_is_read_and_names_what_it_lacks(doma: str) -> None:
    """Before schema 0.0.29 ddm_endpoint.detailed_status and config.value_json do not exist: the grid is still read;
    the notes name each missing column and what brokerage cannot judge without it (the blacklist checks)."""
    alter(doma, "ALTER TABLE ddm_endpoint DROP COLUMN detailed_status; ALTER TABLE config DROP COLUMN value_json")
    grid = read_panda(doma, "doma_panda", "doma_pandameta")
    assert sorted(grid.snapshot.queues["panda_queue"]) == ["AGLT2", "BNL"]
    notes = " | ".join(grid.notes)
    assert "doma_panda.ddm_endpoint.detailed_status is missing (older schema)" in notes and "-blacklist" in notes
    assert "doma_panda.config.value_json is missing" in notes
    eps = grid.snapshot.tables["ddm_endpoints"].set_index("ddm_endpoint_name")
    assert eps.loc["BNL-ATLAS_DATADISK", "write_wan"] == "ON"  # the OFF it held in detailed_status cannot be read


def test_pandas_schema_spelling_and_the_meta_schema_are_found(doma: str) -> None:
    """--schema DOMA_PANDA (PanDA's config templates) reads doma_panda; without --meta-schema, SiteData is found in
    doma_pandameta and the note says so."""
    grid = read_panda(doma, "DOMA_PANDA")
    assert sorted(grid.snapshot.queues["panda_queue"]) == ["AGLT2", "BNL"]
    assert grid.snapshot.queues.set_index("panda_queue")["npilot"].to_dict() == {"AGLT2": 42, "BNL": 6}
    assert any("SiteData read from doma_pandameta" in n for n in grid.notes)


def test_a_missing_meta_schema_is_suggested(doma: str) -> None:
    """With SiteData in two schemas and neither named <schema>meta, the error names the table and suggests one."""
    alter(doma, "ALTER SCHEMA doma_pandameta RENAME TO meta_a; CREATE SCHEMA meta_b; "
                "CREATE TABLE meta_b.sitedata (LIKE meta_a.sitedata)")  # fmt: skip
    with pytest.raises(PandaSchemaError) as err:
        read_panda(doma, "doma_panda")
    assert any("sitedata" in p and "add --meta-schema meta_a" in p for p in err.value.problems), err.value.problems


def test_no_endpoint_is_invented_and_left_out_queues_say_why(doma: str) -> None:
    """Endpoints a queue's astorages names but DDM_ENDPOINT lacks are not made up (PanDA's SiteMapper lacks them too);
    a queue left out is named with its problem; user job counts drop NULL processing types as JEDI's SQL does."""
    alter(
        doma,
        """
        UPDATE schedconfig_json SET data = jsonb_set(data::jsonb, '{astorages,read_lan}',
          '["AGLT2_DATADISK", "AGLT2_LOCALGROUPDISK"]')::json WHERE panda_queue = 'AGLT2';
        INSERT INTO schedconfig_json VALUES ('BROKEN', '{"panda_resource": "BROKEN", "atlas_site": "AGLT2"}', now())""",
    )
    grid = read_panda(doma, "doma_panda", "doma_pandameta")
    assert sorted(grid.snapshot.tables["ddm_endpoints"]["ddm_endpoint_name"]) == ["AGLT2_DATADISK",
                                                                                  "BNL-ATLAS_DATADISK"]  # fmt: skip
    assert any("BROKEN (status: required" in n for n in grid.notes), grid.notes
    users = grid.snapshot.tables["user_job_counts"]
    assert users.query("jobstatus == 'running'")["njobs"].sum() == 2  # pandaid 6 (NULL processingtype) is not counted


WLCG_TASK = """
    INSERT INTO jedi_tasks (jeditaskid, taskname, status, username, creationdate, modificationtime,
      prodsourcelabel, vo, corecount, ramcount, ramunit, gshare, resource_type, processingtype, currentpriority)
      VALUES (5000, 'lsst.step1', 'ready', 'lsst', now(), now(), 'managed', 'wlcg', 8, 1000, 'MB', 'Rubin',
              'SCORE', 'pipeline', 900);"""


def test_job_counts_of_every_vo_are_kept_per_vo(doma: str) -> None:
    """Without --vo every VO's counts are read and kept per VO, as JEDI's getJobStatisticsByGlobalShare(vo) selects
    vo=:vo: the wlcg task weighs BNL (5+1)/(0+0+1)/(0+1) = 6 and AGLT2 (3+1)/(0+2+1)/(2+1) = 0.444 on wlcg's jobs
    alone (summed over VOs AGLT2 would weigh 46/3/3 = 5.111 and BNL 6/8/1 = 0.75); a row without a VO is left out
    (JEDI never selects it) and no note says counts were summed."""
    alter(
        doma,
        WLCG_TASK
        + """
        INSERT INTO jobs_share_stats (ts, gshare, computingsite, jobstatus, njobs, resource_type, vo) VALUES
          (now(), 'Rubin', 'BNL', 'running', 5, 'SCORE', 'wlcg'), (now(), 'Rubin', 'AGLT2', 'running', 3, 'SCORE', 'wlcg'),
          (now(), 'MC Simulation', 'BNL', 'running', 100, 'SCORE', NULL);
        INSERT INTO jobsdefined_share_stats (ts, gshare, computingsite, jobstatus, njobs, resource_type, vo)
          VALUES (now(), 'Rubin', 'AGLT2', 'defined', 2, 'SCORE', 'wlcg')""",
    )
    grid = read_panda(doma, "doma_panda", "doma_pandameta")
    jc = grid.snapshot.tables["job_counts"].groupby(["panda_queue", "vo", "jobstatus"])["njobs"].sum().to_dict()
    assert jc == {
        ("AGLT2", "atlas", "running"): 42,
        ("AGLT2", "wlcg", "defined"): 2,
        ("AGLT2", "wlcg", "running"): 3,
        ("BNL", "atlas", "activated"): 7,
        ("BNL", "atlas", "sent"): 1,
        ("BNL", "wlcg", "running"): 5,
    }
    notes = " | ".join(grid.notes)
    assert "left out 1 job count row without a VO" in notes and "summed over them (JEDI" not in notes
    assert "job counts are kept per VO" in notes
    d = run_job_brokerage(grid.snapshot, 5000)
    assert d.broker == "generic" and d.ranked_names == ["BNL", "AGLT2"]
    assert [round(c.weight, 3) for c in d.candidates] == [6.0, 0.444]
    prod = production.broker(grid.snapshot, 4242, Config())
    agl = next(c for c in prod.candidates if c.name.startswith("AGLT2"))
    assert agl.details["nRunning"] == 42.0  # atlas' own: wlcg's 3 running jobs are not counted


def test_counts_of_a_schema_without_their_vo_column_are_the_vo_reads(doma: str) -> None:
    """An older JOBS_SHARE_STATS without VO: its counts cannot be split, so they are taken as the VO read's (--vo,
    else atlas) and a note says that VO's brokerage counts every VO's jobs."""
    alter(doma, "ALTER TABLE jobs_share_stats DROP COLUMN vo; ALTER TABLE jobsdefined_share_stats DROP COLUMN vo")
    grid = read_panda(doma, "doma_panda", "doma_pandameta")
    assert set(grid.snapshot.tables["job_counts"]["vo"]) == {"atlas"}
    assert grid.snapshot.tables["job_counts"]["njobs"].sum() == 50
    assert any("jobs_share_stats.vo is missing" in n and "counts every VO's jobs" in n for n in grid.notes)
    wlcg = read_panda(doma, "doma_panda", "doma_pandameta", vo="wlcg")
    assert set(wlcg.snapshot.tables["job_counts"]["vo"]) == {"wlcg"}


WLCG_ALICE = """
    INSERT INTO jobsactive4 (pandaid, prodsourcelabel, jobstatus, computingsite, processingtype, produsername,
      corecount, gshare, vo) VALUES
      (20, 'user', 'running', 'AGLT2', 'pipeline', 'alice', 1, 'User Analysis', 'wlcg'),
      (21, 'user', 'running', 'AGLT2', 'pipeline', 'alice', 1, 'User Analysis', 'wlcg'),
      (22, 'user', 'running', 'AGLT2', 'pipeline', 'alice', 1, 'User Analysis', 'wlcg'),
      (23, 'user', 'activated', 'AGLT2', 'pipeline', 'alice', 1, 'User Analysis', NULL)"""


def test_user_job_counts_are_read_per_vo(doma: str) -> None:
    """JOBSACTIVE4 grouped as getUsersJobsStats_JEDI groups it (analysis jobs, no merge, no NULL processingType) and
    by VO as well: atlas alice has 2 running, wlcg's alice 3 (another user); a job without a VO is atlas' with a
    note; --vo wlcg reads wlcg's only."""
    alter(doma, WLCG_ALICE)
    grid = read_panda(doma, "doma_panda", "doma_pandameta")
    u = grid.snapshot.tables["user_job_counts"]
    got = u.groupby(["vo", "produsername", "jobstatus"])["njobs"].sum().to_dict()
    assert got == {("atlas", "alice", "activated"): 2, ("atlas", "alice", "running"): 2,
                   ("wlcg", "alice", "running"): 3}  # fmt: skip
    notes = " | ".join(grid.notes)
    assert "1 user job without a VO counted as VO atlas's" in notes and "user job counts are kept per VO" in notes
    wlcg = read_panda(doma, "doma_panda", "doma_pandameta", vo="wlcg").snapshot.tables["user_job_counts"]
    assert sorted(zip(wlcg["vo"], wlcg["jobstatus"], wlcg["njobs"], strict=True)) == [("wlcg", "running", 3)]


def test_user_counts_of_a_schema_without_their_vo_column_are_the_vo_reads(doma: str) -> None:
    """An older JOBSACTIVE4 without VO: user counts cannot be split, so they are the VO read's (--vo, else atlas)
    and a note says that VO's user caps and Stabilizer count every VO's users."""
    alter(doma, WLCG_ALICE.replace("NULL)", "'atlas')") + "; ALTER TABLE jobsactive4 DROP COLUMN vo")
    grid = read_panda(doma, "doma_panda", "doma_pandameta")
    u = grid.snapshot.tables["user_job_counts"]
    assert set(u["vo"]) == {"atlas"} and u.query("jobstatus == 'running'")["njobs"].sum() == 5
    assert any("jobsactive4.vo is missing" in n and "every VO's users" in n for n in grid.notes), grid.notes
    wlcg = read_panda(doma, "doma_panda", "doma_pandameta", vo="wlcg").snapshot.tables["user_job_counts"]
    assert set(wlcg["vo"]) == {"wlcg"} and wlcg["njobs"].sum() == 7


def test_split_rules_come_from_the_tasks_splitrule(doma: str) -> None:
    """JEDI_TASKS.SPLITRULE ("Rules for job splitting", seed 003) gives the split rules the simulator sizes jobs
    with: NE nEventsPerJob, NF nFilesPerJob, NG nGBPerJob, TN tgtMaxOutputForNG, MW maxWalltime (hours), MF
    nMaxFilesPerJob; a token it lacks reads as not set."""
    alter(doma, "UPDATE jedi_tasks SET splitrule = 'NG=10,TN=8,MW=24,MF=50,DR=1' WHERE jeditaskid = 4242")
    t = read_panda(doma, "doma_panda", "doma_pandameta").snapshot.tasks.set_index("jeditaskid").loc[4242]
    assert (t["ngbperjob"], t["tgtmaxoutputforng"], t["maxwalltime"], t["nmaxfilesperjob"]) == (10.0, 8.0, 24, 50)
    assert (t["neventsperjob"], t["nfilesperjob"]) == (0, 0)
