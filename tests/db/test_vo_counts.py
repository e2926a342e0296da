"""Job counts and user job counts per VO in the store (jobs_share_stats.vo, jobs_user_stats.vo), their migrations,
and CRIC space / task walltime kept for GenJobBroker's checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from brokerage.brokers import analysis, generic
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.store import repository
from brokerage.store.database import make_engine
from brokerage.store.importer import ImportFileError, import_file
from brokerage.store.schema import upgrade
from tests.builders import anal_task, counts, grid, queue, task, user_counts


def two_vo_grid() -> GridSnapshot:
    """Queue A with 50 running atlas jobs and 2 running wlcg jobs; a wlcg task with walltime 7200 at A (maxtime 0)."""
    jc = counts("A", running=50) + [{**r, "vo": "wlcg"} for r in counts("A", "Rubin", running=2)]
    return grid([queue("A", "S", space=500)], [task(1, vo="wlcg", walltime=7200, walltimeunit="s")], job_counts=jc)


def test_counts_of_two_vos_round_trip(engine: Any) -> None:
    """jobs_share_stats keeps each row's VO, as PanDA's JOBS_SHARE_STATS does; space and walltime come back too."""
    repository.save_snapshot(engine, two_vo_grid())
    back = repository.load_snapshot(engine)
    jc = back.tables["job_counts"].groupby("vo")["njobs"].sum().to_dict()
    assert jc == {"atlas": 50, "wlcg": 2}
    assert back.tables["queues"]["space"].tolist() == [500]
    assert back.tables["tasks"][["walltime", "walltimeunit"]].values.tolist() == [[7200, "s"]]
    assert generic.broker(back, 1).candidates[0].details["nRunning"] == 2.0  # wlcg's own


def test_the_migration_gives_stored_counts_vo_atlas(db_url: str) -> None:
    """Counts stored before job counts had a VO were ATLAS' (every broker read them as such): after the upgrade they
    are VO atlas'."""
    rows = _vo_after_upgrade(db_url, "vo_0006", "INSERT INTO jobs_share_stats (seq, panda_queue, gshare, "
                             "resource_type, jobstatus, njobs) VALUES (0, 'A', 'MC Simulation', 'SCORE', 'running', 7)",
                             "jobs_share_stats")  # fmt: skip
    assert rows == [("atlas", 7)]


def test_a_cric_queue_brings_its_space_to_genjobbrokers_se_check(engine: Any, tmp_path: Path) -> None:
    """CRIC's space (GB) is what GenJobBroker's SE space check reads: 150 < 200 GB skips the queue with -disk."""
    repository.save_snapshot(engine, two_vo_grid())
    path = tmp_path / "cric_pandaqueues.json"
    path.write_text(json.dumps({"A": {"atlas_site": "S", "status": "online", "space": 150, "corecount": 1}}))
    import_file(engine, path)
    snap = repository.load_snapshot(engine)
    assert snap.tables["queues"]["space"].tolist() == [150]
    skip = generic.broker(snap, 1).skip_of("A")
    assert skip is not None and (skip.criteria, skip.reason) == ("-disk", "disk shortage in SE = 150 < 200GB")


def test_a_snapshot_file_keeps_its_counts_vo_and_a_bad_vo_is_refused(engine: Any, tmp_path: Path) -> None:
    """db import of a snapshot: each count row keeps its VO (rows without one are atlas'); a VO that is not a string
    is refused with its path and the database is left as it was."""
    _import_keeps_vo_and_refuses_a_bad_one(engine, tmp_path, two_vo_grid(), "job_counts", ["wlcg"],
                                           [("atlas", 50), ("wlcg", 2)])  # fmt: skip


def two_vo_users() -> GridSnapshot:
    """Queue A: alice has 60 running atlas jobs and, as another user of VO wlcg, 60 running jobs; an atlas task."""
    uc = user_counts("A", running=60) + [{**r, "vo": "wlcg"} for r in user_counts("A", running=60)]
    return grid([queue("A", "S", type="analysis")], [anal_task(1)], user_job_counts=uc)


def test_user_counts_of_two_vos_round_trip(engine: Any) -> None:
    """jobs_user_stats keeps each row's VO (a user is a (USERNAME, VO) pair): alice's atlas jobs alone meet
    CAP_RUNNING_USER_JOBS=100 after the round trip (60 <= 100; summed, 120 would throttle)."""
    repository.save_snapshot(engine, two_vo_users())
    back = repository.load_snapshot(engine)
    uc = back.tables["user_job_counts"]
    assert sorted(zip(uc["vo"], uc["njobs"], strict=True)) == [("atlas", 60), ("wlcg", 60)]
    cfg = Config().with_overrides({"CAP_RUNNING_USER_JOBS": 100})
    assert analysis.broker(back, 1, cfg).extra["throttled"] is None


def test_the_migration_gives_stored_user_counts_vo_atlas(db_url: str) -> None:
    """User counts stored before they had a VO were ATLAS' (the ATLAS analysis broker read them): after the upgrade
    to uservo_0009 they are VO atlas'."""
    rows = _vo_after_upgrade(db_url, "split_0008", "INSERT INTO jobs_user_stats (seq, panda_queue, gshare, "
                             "produsername, workinggroup, jobstatus, njobs, ncores) VALUES (0, 'A', 'User Analysis', "
                             "'alice', NULL, 'running', 7, 7)", "jobs_user_stats")  # fmt: skip
    assert rows == [("atlas", 7)]


def _vo_after_upgrade(db_url: str, revision: str, insert: str, table: str) -> list[tuple]:
    """A database at REVISION with queue A and one count row (INSERT), upgraded to the head: TABLE's (vo, njobs)."""
    engine = make_engine(db_url)
    try:
        upgrade(engine, revision)
        with engine.begin() as conn:
            conn.execute(sa.text("INSERT INTO schedconfig_json (panda_queue, data, last_update, seq) "
                                 "VALUES ('A', '{}', CURRENT_TIMESTAMP, 0)"))  # fmt: skip
            conn.execute(sa.text(insert))
        upgrade(engine)
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(f"SELECT vo, njobs FROM {table}")).all()]
    finally:
        engine.dispose()


def test_a_snapshot_file_keeps_its_user_counts_vo(engine: Any, tmp_path: Path) -> None:
    """db import of a snapshot: each user count row keeps its VO (rows without one are atlas'); a VO that is not a
    string is refused with its path and the database is left as it was."""
    _import_keeps_vo_and_refuses_a_bad_one(engine, tmp_path, two_vo_users(), "user_job_counts", 3,
                                           [("atlas", 60), ("wlcg", 60)])  # fmt: skip


def _import_keeps_vo_and_refuses_a_bad_one(engine: Any, tmp_path: Path, snap: GridSnapshot, table: str, bad: Any,
                                           want: list[tuple[str, int]]) -> None:  # fmt: skip
    """Import SNAP as a file with TABLE's first row stripped of its VO: (vo, njobs) is WANT; then with row 1's VO set
    to BAD: refused naming the path, the database unchanged."""
    doc = snap.to_dict()
    doc[table][0].pop("vo")
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(doc))
    import_file(engine, path)
    rows = repository.load_snapshot(engine).tables[table]
    assert sorted(zip(rows["vo"], rows["njobs"], strict=True)) == want
    doc[table][1]["vo"] = bad
    path.write_text(json.dumps(doc))
    before = repository.table_contents(engine)
    with pytest.raises(ImportFileError) as err:
        import_file(engine, path)
    assert any(p.startswith(f"{table}[1].vo") for p in err.value.problems), err.value.problems
    assert repository.table_contents(engine) == before
