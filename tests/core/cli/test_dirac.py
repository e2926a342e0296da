"""`brokerage dirac taskqueues|match`: JSON shapes, what-if overrides, bad pilots exit 2 naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from brokerage.cli.main import main
from brokerage.dirac.demo import SITES
from brokerage.dirac.matcher import task_queues
from brokerage.model.gdpconfig import Config
from brokerage.synth.demo import demo_snapshot
from tests.core.dirac.helpers import CERN, job, snapshot


@pytest.fixture(scope="module")
def grid_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small snapshot file with two task queues."""
    path = tmp_path_factory.mktemp("dirac") / "grid.json"
    snapshot([job(1, cpu=4000), job(2, owner="bob", cpu=100, Sites=["LCG.CNAF.it"])]).to_json(path)
    return str(path)


def run(*args: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one command."""
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_taskqueues_json_lists_requirements_bucket_priority_jobs(grid_file: str) -> None:
    """taskqueues --json gives every queue's definition with its bucket, Priority and job count."""
    code, out, _ = run("dirac", "taskqueues", "--snapshot", grid_file, "--json")
    data = json.loads(out)
    assert code == 0 and data["buckets"] == [500, 5000, 50000, 300000]
    assert [(t["id"], t["CPUTime"], t["Jobs"], t["Priority"]) for t in data["taskqueues"]] == [
        (1, 5000, 1, 500.0),
        (2, 500, 1, 500.0),
    ]
    assert data["taskqueues"][1]["Sites"] == ["LCG.CNAF.it"]


def test_match_json_has_the_documented_shape(grid_file: str) -> None:
    """match --json: pilot, matched {taskqueue, job}, taskqueues {id, verdict, reasons, priority, probability}, funnel."""
    code, out, _ = run("dirac", "match", "--snapshot", grid_file, "--pilot", f"Site={CERN},CPUTime=4500", "--json")
    data = json.loads(out)
    assert code == 0 and data["pilot"] == {"Site": CERN, "CPUTime": 4500}
    assert data["matched"] is None  # TQ 1 needs 5000 s, TQ 2 only runs at CNAF
    assert [(t["id"], t["verdict"], [r["rule"] for r in t["reasons"]]) for t in data["taskqueues"]] == [
        (1, "excluded", ["CPUTime"]),
        (2, "excluded", ["Site"]),
    ]
    assert {"id", "verdict", "reasons", "priority", "probability"} <= set(data["taskqueues"][0])
    assert data["funnel"][0] == {"filter": "OwnerGroup", "before": 2, "after": 2}


def test_match_with_set_and_seed(grid_file: str) -> None:
    """--set changes the buckets (4000 s -> 21600 s needs a bigger pilot); --seed picks reproducibly."""
    args = ("dirac", "match", "--snapshot", grid_file, "--pilot", f"Site={CERN},CPUTime=20000", "--json")
    assert json.loads(run(*args)[1])["matched"]["taskqueue"] == 1
    dirac = json.loads(run(*args, "--set", "DIRAC_CPU_BUCKETS=[360,1800,3600,21600]")[1])
    assert dirac["matched"] is None and dirac["config"]["DIRAC_CPU_BUCKETS"] == [360, 1800, 3600, 21600]
    assert run(*args, "--seed", "4")[1] == run(*args, "--seed", "4")[1]


@pytest.mark.parametrize(("pilot", "field"), [("Site=A,Colour=red", "Colour"), ("Site=A,CPUTime=x", "CPUTime")])
def test_bad_pilot_exits_2_naming_the_field(grid_file: str, pilot: str, field: str) -> None:
    """Unknown pilot fields and unreadable values exit 2 with the field named."""
    code, out, err = run("dirac", "match", "--snapshot", grid_file, "--pilot", pilot, "--json")
    assert code == 2 and out == "" and field in err


def test_bad_override_exits_2(grid_file: str) -> None:
    """An out-of-range --set exits 2 naming the key."""
    code, _, err = run("dirac", "taskqueues", "--snapshot", grid_file, "--set", "DIRAC_MAX_JOBS_IN_TQ=0")
    assert code == 2 and "DIRAC_MAX_JOBS_IN_TQ" in err


def test_demo_grid_has_a_dirac_community() -> None:
    """The demo grid holds several groups and users, sites, CEs and a few thousand waiting jobs in task queues."""
    snap = demo_snapshot(seed=0, queues=60, tasks=40)
    jobs = snap.tables["dirac_jobs"]
    assert len(jobs) == 3000 and jobs["OwnerGroup"].nunique() >= 4 and jobs["Owner"].nunique() >= 10
    assert set(snap.tables["dirac_ces"]["Site"]) == set(SITES)
    tqs = task_queues(snap, Config())
    assert 100 < len(tqs) < 1000 and (tqs.njobs == 0).any()


def test_refused_request_prints_the_reason(grid_file: str, tmp_path: Path) -> None:
    """A pilot without CPUTime is refused by the matcher (exit 0, the refusal said)."""
    code, out, _ = run("dirac", "match", "--snapshot", grid_file, "--pilot", f"Site={CERN}")
    assert code == 0 and "Missing mandatory field 'CPUTime'" in out
