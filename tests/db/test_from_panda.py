"""`brokerage snapshot from-panda` reads a PanDA PostgreSQL database (its public schema's tables) and never writes it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from sqlalchemy.exc import DBAPIError

from brokerage.brokers.router import run_job_brokerage
from brokerage.cli.main import main
from brokerage.store import config_store, repository
from brokerage.store.database import make_engine
from brokerage.store.panda_db import PandaSchemaError, read_panda, readonly_engine, readonly_transaction
from tests.db.conftest import make_panda, postgres_url

PANDA = Path(__file__).parents[1] / "data" / "panda"  # the subset of PanDA's schema read, and rows made for it
SCHEMA = "doma_panda"
META = "doma_pandameta"

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(postgres_url() is None, reason="set TEST_POSTGRES_URL (scripts/services.sh start)"),
]


@pytest.fixture
def panda_url() -> Iterator[str]:
    """A new PostgreSQL database holding PanDA's tables (schema doma_panda) with the rows of rows.sql."""
    url, drop = make_panda(SCHEMA, META)
    try:
        yield url
    finally:
        drop()


def alter(url: str, sql: str) -> None:
    """Change the PanDA test database as its owner (the reader under test never can)."""
    eng = make_engine(url)
    with eng.begin() as conn:
        conn.exec_driver_sql(f"SET search_path = {SCHEMA}; {sql}")
    eng.dispose()


def test_the_connection_is_read_only(panda_url: str) -> None:
    """Any write through the reader's connection fails, so from-panda cannot change PanDA's tables."""
    with (
        pytest.raises(DBAPIError, match="read-only transaction"),
        readonly_transaction(readonly_engine(panda_url)) as conn,
    ):
        conn.execute(sa.text(f"INSERT INTO {SCHEMA}.site VALUES ('X', 'satellite', 2, 'ACTIVE')"))
    with pytest.raises(DBAPIError, match="read-only transaction"), readonly_engine(panda_url).begin() as conn:
        conn.execute(sa.text(f"DELETE FROM {SCHEMA}.config"))


def test_the_grid_is_built_from_pandas_tables(panda_url: str) -> None:
    """Queues from schedconfig JSON, relations of every scope, summed job counts, waiting tasks and input datasets."""
    grid = read_panda(panda_url, SCHEMA, META)
    t = grid.snapshot.tables
    assert sorted(t["queues"]["panda_queue"]) == ["AGLT2", "BNL"]  # HPC_SPECIAL (type special) left out
    assert dict(zip(t["sites"]["site_name"], t["sites"]["role"], strict=True)) == {
        "BNL-ATLAS": "nucleus", "AGLT2": "satellite"}  # fmt: skip
    eps = t["ddm_endpoints"].set_index("ddm_endpoint_name")
    assert eps.loc["BNL-ATLAS_DATADISK", "write_wan"] == "OFF" and eps.loc["AGLT2_DATADISK", "write_wan"] == "ON"
    rel = t["panda_ddm_relation"]
    assert sorted(zip(rel["panda_queue"], rel["scope"], rel["default_write"], strict=True)) == [
        ("AGLT2", "analysis", False), ("AGLT2", "default", True), ("BNL", "default", True)]  # fmt: skip
    running = t["job_counts"].query("panda_queue == 'AGLT2' and jobstatus == 'running'")["njobs"].tolist()
    assert running == [42]
    assert t["tasks"]["jeditaskid"].tolist() == [4242] and t["tasks"]["corecount"].tolist() == [8]
    assert t["datasets"]["datasetid"].tolist() == [1] and bool(t["datasets"]["is_master"].iloc[0])
    assert t["queue_software"]["panda_queue"].tolist() == ["AGLT2"]
    assert set(t["network"]["key"]) == {"AGIS_closeness", "Production Output_queued", "dashb_mbps_1h"}
    sent = t["job_counts"].query("panda_queue == 'BNL' and jobstatus == 'sent'")["njobs"].tolist()
    assert sent == [1] and not any("sent" in n for n in grid.notes)  # sent is a status the simulator moves
    users = t["user_job_counts"]
    assert sorted(zip(users["jobstatus"], users["njobs"], users["ncores"], strict=True)) == [
        ("activated", 1, 8),
        ("running", 2, 2),
    ]  # alice's analysis jobs; merge and production jobs aside
    pilots = t["queues"].set_index("panda_queue")["npilot"].to_dict()
    assert pilots == {"AGLT2": 42, "BNL": 6}  # getJob + updateJob of the 3-hour SiteData rows


def test_the_simulators_tables_come_from_pandas_share_tree_and_work_queues(panda_url: str) -> None:
    """GLOBAL_SHARES gives the share tree (parent, value, throttled 'N' -> False), JEDI_WORK_QUEUE the work queues
    with their criteria and bind variables, and each queue's slots are its running jobs."""
    from brokerage.sim.setup import input_problems

    t = read_panda(panda_url, SCHEMA, META).snapshot.tables
    g = t["gshares"].set_index("gshare")
    assert g.loc["MC Simulation", "parent"] == "Production" and g.loc["MC Simulation", "value"] == 40.0
    assert not g.loc["User Analysis", "throttled"] and g.loc["Production", "throttled"]
    wq = t["work_queues"].set_index("queue_id")
    assert wq.loc[1, "variables"] == {":wg": "AP_HI"} and wq.loc[1, "queue_function"] == "Resource"
    assert wq.loc[2, "criteria"] == "" and wq.loc[2, "queue_function"] == ""
    assert t["queue_slots"].set_index("panda_queue")["nslots"].to_dict() == {"AGLT2": 42, "BNL": 0}
    assert input_problems(read_panda(panda_url, SCHEMA, META).snapshot) == []


def test_the_pulled_grid_brokers_without_pilot_or_status_surprises(panda_url: str) -> None:
    """With SiteData read, no queue is skipped for missing pilots; AGLT2 (SW tags published) takes the EL9 task."""
    snap = read_panda(panda_url, SCHEMA, META).snapshot
    decision = run_job_brokerage(snap, 4242)
    assert not [s for s in decision.skipped if s.criteria == "-nopilot"]
    assert any(name.startswith("AGLT2") for name in decision.ranked_names)


def test_store_makes_a_grid_and_a_gdpconfig_version(panda_url: str, tmp_path: Any) -> None:
    """--store saves the grid and CONFIG; a registry key takes effect, others are kept and listed as not modelled."""
    store = f"sqlite:///{tmp_path / 'store.sqlite'}"
    out = CliRunner().invoke(
        main,
        [
            "snapshot",
            "from-panda",
            "--url",
            panda_url,
            "--schema",
            SCHEMA,
            "--meta-schema",
            META,
            "--store",
            "--database-url",
            store,
        ],
    )
    assert out.exit_code == 0, out.output
    assert "not modelled" in out.output and "pandaserver/dispatcher/SOMETHING_ELSE@atlas" in out.output
    engine = make_engine(store)
    assert config_store.load_config(engine)["NQUEUED_SAT_CAP"] == 300
    assert {r.key for r in config_store.config_rows(engine)} == {"NQUEUED_SAT_CAP", "SOMETHING_ELSE"}
    shown = CliRunner().invoke(main, ["db", "--database-url", store, "config-show"])
    assert "not modelled (stored, not read by brokerage): pandaserver/dispatcher/SOMETHING_ELSE" in shown.output
    snap = repository.load_snapshot(engine)
    assert snap.snapshot_id.startswith("panda:") and len(snap.tables["queues"]) == 2
    again = CliRunner().invoke(main, ["snapshot", "pull", "--url", panda_url, "--schema", SCHEMA, "--meta-schema", META, "--every", "1s",
                                      "--times", "2", "--database-url", store])  # fmt: skip
    assert again.exit_code == 0, again.output
    assert repository.snapshot_meta(engine)[1] == snap.version + 2  # each pull stores a new grid version


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("DROP TABLE jedi_datasets", "table doma_panda.jedi_datasets is missing"),
        ("ALTER TABLE site ALTER COLUMN tier_level TYPE varchar(8)",
         "doma_panda.site.tier_level: expected a column of type integer, found character varying"),
    ],
)  # fmt: skip
def test_a_missing_table_or_a_wrong_type_is_a_clear_error_and_nothing_is_stored(
    panda_url: str, tmp_path: Any, change: str, message: str
) -> None:
    """The reader names the table or column, exits 2 and leaves the store untouched."""
    alter(panda_url, change)
    with pytest.raises(PandaSchemaError) as err:
        read_panda(panda_url, SCHEMA, META)
    assert message in err.value.problems
    store = f"sqlite:///{tmp_path / 'store.sqlite'}"
    out = CliRunner().invoke(
        main,
        [
            "snapshot",
            "from-panda",
            "--url",
            panda_url,
            "--schema",
            SCHEMA,
            "--meta-schema",
            META,
            "--store",
            "--database-url",
            store,
        ],
    )
    assert out.exit_code == 2 and message in out.output
    assert repository.is_empty(make_engine(store))


def test_out_writes_a_valid_snapshot_file(panda_url: str, tmp_path: Any) -> None:
    """--out writes the grid as a snapshot file that `brokerage snapshot validate` accepts."""
    path = tmp_path / "grid.json"
    out = CliRunner().invoke(
        main,
        ["snapshot", "from-panda", "--url", panda_url, "--schema", SCHEMA, "--meta-schema", META, "--out", str(path)],
    )
    assert out.exit_code == 0, out.output
    checked = CliRunner().invoke(main, ["snapshot", "validate", str(path)])
    assert checked.exit_code == 0 and "valid (2 queues, 1 tasks)" in checked.output, checked.output
