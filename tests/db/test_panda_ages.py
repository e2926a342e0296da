"""from-panda reads what the simulator's rules need beyond the brokers' counts: the live jobs' creation and
modification times per job group (jobsActive4, jobsDefined4), Harvester_Slots, and the work queues' partition link."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

from brokerage.model.gdpconfig import Config
from brokerage.sim.engine import Simulation
from brokerage.sim.jobs import S
from brokerage.store.panda_db import read_panda
from tests.db.conftest import make_panda, postgres_url
from tests.db.test_panda_read import alter

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(postgres_url() is None, reason="set TEST_POSTGRES_URL (scripts/services.sh start)"),
]

_AGO = "(now() AT TIME ZONE 'UTC') - interval '{} hours'"  # PanDA's job times: UTC without a time zone
_JOB_TIMES = """
ALTER TABLE jobsactive4 ADD COLUMN resource_type varchar(56), ADD COLUMN creationtime timestamp,
  ADD COLUMN modificationtime timestamp;
CREATE TABLE jobsdefined4 (pandaid bigint PRIMARY KEY, jobstatus varchar(15), computingsite varchar(128),
  gshare varchar(32), resource_type varchar(56), vo varchar(16), creationtime timestamp, modificationtime timestamp);
CREATE TABLE harvester_slots (pandaqueuename varchar(128) NOT NULL, gshare varchar(32), resourcetype varchar(56),
  numslots bigint NOT NULL, modificationtime timestamp NOT NULL, expirationtime timestamp);
"""


@pytest.fixture
def doma() -> Iterator[str]:
    """A PanDA test database (doma_panda layout) whose job tables carry PanDA's creationtime and modificationtime."""
    url, drop = make_panda("doma_panda", "doma_pandameta")
    try:
        yield url
    finally:
        drop()


def _jobs(table: str, status: str, created: list[int], modified: list[int], first_id: int) -> str:
    rows = ", ".join(
        f"({first_id + i}, '{status}', 'BNL', 'MC Simulation', 'MCORE', 'atlas', {_AGO.format(c)}, {_AGO.format(m)})"
        for i, (c, m) in enumerate(zip(created, modified, strict=True))
    )
    return (f"INSERT INTO {table} (pandaid, jobstatus, computingsite, gshare, resource_type, vo, creationtime, "
            f"modificationtime) VALUES {rows};")  # fmt: skip


def _hours(taken: pd.Timestamp, t: pd.Series) -> list[float]:
    return ((taken - pd.to_datetime(t, utc=True)).dt.total_seconds() / 3600).round(1).tolist()


def test_job_groups_carry_the_oldest_median_and_newest_times_of_their_jobs(doma: str) -> None:
    """Issue 30: "Snapshot jobs carry their real ages where the source has them (a PanDA database has creation and
    modification times)": BNL's activated MC Simulation MCORE jobs created 10, 6 and 2 h ago (modified 5, 3, 1 h
    ago) give oldest 10 h, median 6 h, newest 2 h; two defined jobs of jobsDefined4 created 30 and 20 h ago give
    oldest 30, median 30 (percentile_disc: the first at half), newest 20; the simulator then starts the group's 7
    activated jobs at 10, 8.67, 7.33, 6, 4.67, 3.33 and 2 h before the snapshot."""
    alter(doma, _JOB_TIMES + _jobs("jobsactive4", "activated", [10, 6, 2], [5, 3, 1], 100)
          + _jobs("jobsdefined4", "defined", [30, 20], [30, 20], 200)
          + "INSERT INTO jobsdefined_share_stats (ts, gshare, computingsite, jobstatus, njobs, resource_type, vo) "
            "VALUES (now(), 'MC Simulation', 'BNL', 'defined', 2, 'MCORE', 'atlas');")  # fmt: skip
    grid = read_panda(doma, "doma_panda", "doma_pandameta")
    snap = grid.snapshot
    ages = snap.tables["job_ages"].set_index("jobstatus")
    assert sorted(ages.index) == ["activated", "defined"]
    taken = pd.Timestamp(snap.taken_at)
    act, dfn = ages.loc[["activated"]], ages.loc[["defined"]]
    assert act[["panda_queue", "gshare", "resource_type", "vo"]].values.tolist() == [
        ["BNL", "MC Simulation", "MCORE", "atlas"]
    ]
    ranks = ["oldest", "median", "newest"]
    assert [_hours(taken, act[f"{r}_creationtime"])[0] for r in ranks] == [10.0, 6.0, 2.0]
    assert [_hours(taken, act[f"{r}_modificationtime"])[0] for r in ranks] == [5.0, 3.0, 1.0]
    assert [_hours(taken, dfn[f"{r}_creationtime"])[0] for r in ranks] == [30.0, 30.0, 20.0]
    assert not any("recorded ages" in n for n in grid.notes)
    sim = Simulation(snap, Config(), seed=0)
    j = sim.jobs
    rows = sim.live[(j["jobStatus"][sim.live] == S["activated"]) & (j["computingSite"][sim.live] == sim.qi["BNL"])]
    assert np.round(-j["creationTime"][rows] / 3600, 1).tolist() == [10.0, 8.7, 7.3, 6.0, 4.7, 3.3, 2.0]


def test_an_older_schema_without_job_times_is_read_and_its_ages_are_drawn(doma: str) -> None:
    """Without creationtime/modificationtime in jobsActive4 (and without jobsDefined4) no job group has recorded
    ages: job_ages is empty and a note per table says the simulator draws them."""
    grid = read_panda(doma, "doma_panda", "doma_pandameta")
    assert grid.snapshot.tables["job_ages"].empty
    notes = [n for n in grid.notes if "recorded ages" in n]
    assert len(notes) == 2 and "jobsactive4 lacks resource_type, creationtime, modificationtime" in notes[0]


def test_harvester_slots_give_numslots_and_work_queues_their_partition(doma: str) -> None:
    """Harvester_Slots rows not expired set a queue's numSlots (the queue-wide row first): BNL 300, and 300 slots
    for the simulator (0 running); AGLT2's only row expired a day ago, so it has none (fast rebrokerage then looks
    at it) and keeps its 42 running jobs as slots. JEDI_WORK_QUEUE.PARTITIONID is read."""
    alter(doma, _JOB_TIMES + f"""
        INSERT INTO harvester_slots VALUES ('BNL', 'MC Simulation', 'MCORE', 50, now(), NULL),
          ('BNL', NULL, NULL, 300, now(), NULL), ('AGLT2', NULL, NULL, 80, now(), {_AGO.format(24)});
        UPDATE jedi_work_queue SET partitionid = 1 WHERE queue_id = 2;
        UPDATE jedi_work_queue SET partitionid = -1 WHERE queue_id = 1;""")  # fmt: skip
    snap = read_panda(doma, "doma_panda", "doma_pandameta").snapshot
    slots = snap.tables["queues"].set_index("panda_queue")["numslots"]
    assert slots["BNL"] == 300 and pd.isna(slots["AGLT2"])
    nslots = snap.tables["queue_slots"].set_index("panda_queue")["nslots"]
    assert nslots["BNL"] == 300 and nslots["AGLT2"] == 42  # the larger of numSlots and the running jobs
    assert snap.tables["work_queues"].set_index("queue_id")["partitionid"].to_dict() == {1: -1, 2: 1}
