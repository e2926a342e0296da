"""The store keeps the dirac_ tables: round trips (lists as JSON), imports of DIRAC-only documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from brokerage.dirac.matcher import match
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.store import repository
from brokerage.store.importer import ImportFileError, detect_kind, import_file
from brokerage.synth.demo import demo_snapshot
from tests.db.helpers import frames_equal

PILOT = "Site=LCG.CERN.cern,CPUTime=86400,Platform=x86_64-el9"


@pytest.fixture(scope="module")
def demo() -> GridSnapshot:
    """A small demo grid with the full DIRAC community."""
    return demo_snapshot(seed=2, queues=40, tasks=30)


def test_dirac_tables_round_trip(engine: Any, demo: GridSnapshot) -> None:
    """Saving and loading keeps every dirac_ row, lists included, and the same match."""
    repository.save_snapshot(engine, demo)
    loaded = repository.load_snapshot(engine)
    frames_equal(demo, loaded)
    assert loaded.tables["dirac_jobs"]["Sites"].map(type).eq(list).all()
    assert (
        match(loaded, PILOT, Config(), seed=1).to_dict()["matched"]
        == match(demo, PILOT, Config(), seed=1).to_dict()["matched"]
    )


def test_dirac_only_document_replaces_just_those_tables(engine: Any, tmp_path: Path, demo: GridSnapshot) -> None:
    """A file of dirac_ tables alone is detected as such and replaces them, keeping the PanDA tables."""
    repository.save_snapshot(engine, demo)
    doc = {"dirac_jobs": [{"JobID": 7, "Owner": "zoe", "OwnerGroup": "lhcb_user", "CPUTime": 100, "Sites": ["X"]}],
           "dirac_site_mask": [{"Site": "X", "Status": "Active"}]}  # fmt: skip
    assert detect_kind(doc) == "dirac"
    path = tmp_path / "dirac.json"
    path.write_text(json.dumps(doc))
    result = import_file(engine, path)
    assert result.kind == "dirac" and result.counts == {"dirac_jobs": 1, "dirac_site_mask": 1}
    loaded = repository.load_snapshot(engine)
    assert loaded.tables["dirac_jobs"]["JobID"].tolist() == [7]
    assert loaded.tables["dirac_jobs"]["Sites"].tolist() == [["X"]]
    assert len(loaded.tables["queues"]) == len(demo.tables["queues"])
    assert len(loaded.tables["dirac_ces"]) == len(demo.tables["dirac_ces"])  # not in the file: kept


def test_bad_dirac_document_names_the_field_and_writes_nothing(engine: Any, tmp_path: Path, demo: GridSnapshot) -> None:
    """A DIRAC job without Owner or with a bad Status is refused with the path, and nothing changes."""
    repository.save_snapshot(engine, demo)
    before = repository.snapshot_key(engine)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"dirac_jobs": [{"JobID": 1, "OwnerGroup": "g", "Status": "Running"}]}))
    with pytest.raises(ImportFileError) as err:
        import_file(engine, path)
    text = str(err.value)
    assert "dirac_jobs[0].Owner: required" in text and "dirac_jobs[0].Status" in text
    assert repository.snapshot_key(engine) == before


def test_duplicate_job_ids_are_refused(engine: Any, demo: GridSnapshot) -> None:
    """Two dirac_jobs rows with one JobID cannot be stored (the table's key)."""
    jobs = demo.tables["dirac_jobs"]
    bad = demo.replace(dirac_jobs=jobs.iloc[[0, 0]].reset_index(drop=True))
    assert any("dirac_jobs[1]: duplicate key" in p for p in repository.store_problems(bad))
