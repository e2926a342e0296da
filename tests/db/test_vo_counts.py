"""Job counts per VO in the store (jobs_share_stats.vo), its migration, and CRIC space / task walltime kept for
GenJobBroker's checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from brokerage.brokers import generic
from brokerage.model.snapshot import GridSnapshot
from brokerage.store import repository
from brokerage.store.database import make_engine
from brokerage.store.importer import ImportFileError, import_file
from brokerage.store.schema import upgrade
from tests.builders import counts, grid, queue, task


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
    engine = make_engine(db_url)
    try:
        upgrade(engine, "vo_0006")
        with engine.begin() as conn:
            conn.execute(sa.text("INSERT INTO schedconfig_json (panda_queue, data, last_update, seq) "
                                 "VALUES ('A', '{}', CURRENT_TIMESTAMP, 0)"))  # fmt: skip
            conn.execute(sa.text("INSERT INTO jobs_share_stats (seq, panda_queue, gshare, resource_type, jobstatus, "
                                 "njobs) VALUES (0, 'A', 'MC Simulation', 'SCORE', 'running', 7)"))  # fmt: skip
        upgrade(engine)
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT vo, njobs FROM jobs_share_stats")).all()
        assert [tuple(r) for r in rows] == [("atlas", 7)]
    finally:
        engine.dispose()


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
    doc = two_vo_grid().to_dict()
    doc["job_counts"][0].pop("vo")
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(doc))
    import_file(engine, path)
    jc = repository.load_snapshot(engine).tables["job_counts"]
    assert sorted(zip(jc["vo"], jc["njobs"], strict=True)) == [("atlas", 50), ("wlcg", 2)]
    doc["job_counts"][1]["vo"] = ["wlcg"]
    path.write_text(json.dumps(doc))
    before = repository.table_contents(engine)
    with pytest.raises(ImportFileError) as err:
        import_file(engine, path)
    assert any(p.startswith("job_counts[1].vo") for p in err.value.problems), err.value.problems
    assert repository.table_contents(engine) == before
