"""The simulator's snapshot fields (job_ages, gshares.stretchable, work_queues.partitionid): optional, checked on
load like every other table."""

from __future__ import annotations

import pytest

from brokerage.model.snapshot import GridSnapshot, SnapshotError
from tests.builders import counts, queue, sim_grid_snapshot, task

_AGE = {"panda_queue": "A", "gshare": "MC Simulation", "jobstatus": "defined",
        "oldest_creationtime": "2026-11-20T06:00:00Z"}  # fmt: skip


def _doc() -> dict:
    return sim_grid_snapshot([queue("A", "S1")], [task(1)], job_counts=counts("A", defined=2)).to_dict()


def test_new_fields_default_when_a_document_lacks_them() -> None:
    """An older document (no job_ages, no stretchable, no partitionid) loads: no ages, no share stretchable, no
    work queue in a partition."""
    doc = _doc()
    del doc["job_ages"]
    for r in doc["gshares"]:
        del r["stretchable"]
    for r in doc["work_queues"]:
        del r["partitionid"]
    snap = GridSnapshot.from_dict(doc)
    assert snap.tables["job_ages"].empty
    assert not snap.tables["gshares"]["stretchable"].any()
    assert snap.tables["work_queues"]["partitionid"].isna().all()


def test_job_ages_of_an_unknown_queue_or_twice_for_a_group_are_refused() -> None:
    """job_ages rows name a queue of the grid, one row per job group (queue, share, resource type, status, VO)."""
    doc = _doc()
    doc["job_ages"] = [_AGE, {**_AGE, "panda_queue": "NOWHERE"}, dict(_AGE)]
    with pytest.raises(SnapshotError) as err:
        GridSnapshot.from_dict(doc)
    text = str(err.value)
    assert "job_ages[1].panda_queue: unknown queue" in text and "job_ages[2]: duplicate row" in text


def test_a_partitionid_below_minus_one_is_refused() -> None:
    """partitionid is a queue_id, -1 for a partition row, or null: -2 is out of range."""
    doc = _doc()
    doc["work_queues"][0]["partitionid"] = -2
    with pytest.raises(SnapshotError, match="partitionid"):
        GridSnapshot.from_dict(doc)
