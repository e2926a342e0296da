"""GridSnapshot: JSON round trip, validation that reports every problem, references, and the JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd
import pytest

from brokerage.model.snapshot import GridSnapshot, SnapshotError
from brokerage.model.tables import TABLES, json_schema
from brokerage.model.validation import validate
from tests.builders import counts, grid, queue, task


def sample() -> GridSnapshot:
    """A small snapshot touching most column types (time, list, nullable int, bool, float)."""
    qs = [queue("A", "S1", numslots=5), queue("B", "S2", laststart=None, releases=["AUTO"], direct_access_lan=True)]
    network = [{"src": "S1", "dst": "S2", "key": "AGIS_closeness", "value": 3.0, "ts": None}]
    return grid(
        qs,
        [task(1, nucleus="S2", maxcorecount=8, iointensity=12.5), task(2, site="A")],
        job_counts=counts("A", running=3, activated=2),
        network=network,
        datasets=[{"jeditaskid": 1, "datasetid": 7, "nfiles": 3, "size_gb": 1.5}],
    )


def doc() -> dict[str, Any]:
    """The sample as a JSON document."""
    return sample().to_dict()


def test_json_round_trip(tmp_path: Path) -> None:
    """to_json then from_json gives back the same tables and the same document."""
    snap = sample()
    path = tmp_path / "snap.json"
    snap.to_json(path)
    back = GridSnapshot.from_json(path)
    assert back.to_dict() == snap.to_dict()
    assert back.taken_at == snap.taken_at
    for name in TABLES:
        pd.testing.assert_frame_equal(back.tables[name], snap.tables[name], check_dtype=True)
    assert back.queues["numslots"].isna().tolist() == [False, True]
    assert back.tasks["maxcorecount"].tolist()[0] == 8
    assert back.queues["releases"].tolist() == [["ANY"], ["AUTO"]]


def test_validation_reports_every_bad_field_at_once() -> None:
    """Several errors in one document are all reported, each with its path."""
    d = doc()
    d["queues"][0]["corecount"] = -1
    d["queues"][0]["status"] = "sleeping"
    d["queues"][1]["maxrss"] = "lots"
    d["queues"][1]["releases"] = "ANY"
    d["tasks"][0]["eventservice"] = "yes"
    del d["tasks"][1]["jeditaskid"]
    d["network"][0]["ts"] = "yesterday"
    with pytest.raises(SnapshotError) as err:
        GridSnapshot.from_dict(d)
    paths = [p.split(":")[0] for p in err.value.problems]
    assert paths == [
        "queues[0].status",
        "queues[0].corecount",
        "queues[1].maxrss",
        "queues[1].releases",
        "network[0].ts",
        "tasks[0].eventservice",
        "tasks[1].jeditaskid",
    ]
    assert "7 problems" in str(err.value)
    assert "expected one of 'online'" in str(err.value)
    assert "below the minimum 0" in str(err.value)


def test_unknown_table_and_column() -> None:
    """Unknown tables and columns are named, with what is expected."""
    d = doc()
    d["queue"] = []
    d["queues"][0]["maxmemory"] = 4000
    problems = validate(d)
    assert problems[0].startswith("queue: unknown table; expected one of queues, sites")
    assert "queues[0].maxmemory: unknown column" in problems


def test_document_level_problems() -> None:
    """A missing taken_at, a table that is not a list and a row that is not an object are reported together."""
    d = doc()
    del d["taken_at"]
    d["tasks"] = {"jeditaskid": 1}
    d["sites"].append("S3")
    problems = validate(d)
    assert any(p.startswith("taken_at: required") for p in problems)
    assert "tasks: expected a list of rows" in problems
    assert "sites[2]: expected an object" in problems
    assert validate([]) == ["$: expected a JSON object with the snapshot tables"]


def test_reference_checks() -> None:
    """Queues at unknown sites and duplicate queue names are reported after the field checks pass."""
    d = doc()
    d["queues"].append(dict(d["queues"][0]))
    d["queues"].append(dict(d["queues"][0], panda_queue="C", atlas_site="NOWHERE"))
    d["panda_ddm_relation"].append({"panda_queue": "GHOST", "ddm_endpoint_name": "S1_DATADISK"})
    with pytest.raises(SnapshotError) as err:
        GridSnapshot.from_dict(d)
    assert err.value.problems == [
        "queues[2].panda_queue: duplicate 'A'",
        "queues[3].atlas_site: unknown site 'NOWHERE'",
        "panda_ddm_relation[2].panda_queue: unknown queue 'GHOST'",
    ]


def test_unreadable_file_is_a_snapshot_error(tmp_path: Path) -> None:
    """A missing file or a file that is not JSON is a SnapshotError naming the file."""
    with pytest.raises(SnapshotError, match="cannot read file"):
        GridSnapshot.from_json(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SnapshotError, match=r"bad\.json: not JSON"):
        GridSnapshot.from_json(bad)


def test_nan_in_integer_column_is_reported(tmp_path: Path) -> None:
    """NaN or Infinity (which json.loads accepts) in an integer column is reported as a bad field."""
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(doc(), separators=(",", ":")).replace('"corecount":1,', '"corecount":NaN,', 1))
    with pytest.raises(SnapshotError, match=r"queues\[0\]\.corecount"):
        GridSnapshot.from_json(path)
    d = doc()
    d["queues"][0]["maxrss"] = float("inf")
    assert any(p.startswith("queues[0].maxrss") for p in validate(d))


def test_nan_in_number_column_is_reported() -> None:
    """NaN in a number column is reported as a bad field rather than accepted."""
    d = doc()
    d["queues"][0]["corepower"] = float("nan")
    assert any(p.startswith("queues[0].corepower") for p in validate(d))


def test_json_schema_accepts_valid_and_rejects_bad_documents() -> None:
    """json_schema() validates a real snapshot document with jsonschema and rejects a malformed one."""
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    good = json.loads(json.dumps(doc()))
    assert list(validator.iter_errors(good)) == []
    bad = json.loads(json.dumps(doc()))
    bad["queues"][0]["status"] = "sleeping"
    bad["queues"][0]["corecount"] = -1
    bad["queues"][1]["maxmemory"] = 1
    bad["unknown_table"] = []
    del bad["tasks"][0]["jeditaskid"]
    errors = list(validator.iter_errors(bad))
    assert len(errors) == 5
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema, cls=jsonschema.Draft202012Validator)
    # the core's own validation finds the same five problems
    assert len(validate(bad)) == 5


def test_job_counts_without_a_vo_are_atlas_and_a_bad_vo_is_named() -> None:
    """A snapshot written before job counts had a VO still loads: its counts are VO atlas' (the ATLAS brokers read
    them as before); a VO that is not a string, a walltime below 0 and a CRIC space below 0 are each named."""
    d = doc()
    assert all(r["vo"] == "atlas" for r in d["job_counts"])  # written with the column
    for r in d["job_counts"]:
        r.pop("vo")
    d["queues"][0].pop("space")
    d["tasks"][0].pop("walltime")
    back = GridSnapshot.from_dict(d)
    assert set(back.job_counts["vo"]) == {"atlas"} and back.queues["space"].tolist() == [0, 0]
    assert back.tasks["walltime"].tolist() == [0, 0]
    d["job_counts"][0]["vo"] = 5
    d["tasks"][0]["walltime"] = -1
    d["queues"][1]["space"] = -3
    with pytest.raises(SnapshotError) as err:
        GridSnapshot.from_dict(d)
    paths = [p.split(":")[0] for p in err.value.problems]
    assert paths == ["queues[1].space", "job_counts[0].vo", "tasks[0].walltime"]
