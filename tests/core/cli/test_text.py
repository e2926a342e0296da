"""The command line as a newcomer types it: default text output, clear refusals, names offered for typos."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from brokerage.brokers.router import run_job_brokerage
from brokerage.cli.figures import figure, listing
from brokerage.cli.main import main
from brokerage.model.explain import fmt, fmt_many
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.sim.events import RULES, cause
from brokerage.store.database import make_engine
from brokerage.store.repository import load_snapshot
from brokerage.synth.demo import demo_snapshot


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GridSnapshot]:
    snap = demo_snapshot(seed=0, queues=60, tasks=200)
    path = tmp_path_factory.mktemp("cli") / "grid.json"
    snap.to_json(path)
    return path, snap


def _task(snap: GridSnapshot, label: str, status: str | None = None) -> int:
    t = snap.tasks
    rows = t[(t["prodsourcelabel"] == label) & (t["status"] == status if status else True)]
    return int(rows["jeditaskid"].iloc[0])


def run(*args: str) -> tuple[int, str, str]:
    out = CliRunner().invoke(main, list(args))
    return out.exit_code, out.stdout, out.stderr


def test_explain_in_its_default_form_counts_the_grid(grid: tuple[Path, GridSnapshot]) -> None:
    """`brokerage explain` without --no-grid brokers the whole grid, then prints each lever as "KEY old → new"."""
    path, snap = grid
    task = _task(snap, "managed", "assigning")
    skipped = run_job_brokerage(snap, task, Config()).skipped
    queue = next(s.candidate for s in skipped if s.criteria in ("-io", "-nopilot"))  # a gdpconfig key lets it in
    code, out, err = run("explain", "--snapshot", str(path), "--task", str(task), "--queue", queue)
    assert code == 0, err
    assert "brokering the grid: 100 %" in err
    lever_lines = [line for line in out.splitlines() if line.strip().startswith("lever ")]
    assert lever_lines and all("→" in line for line in lever_lines)
    assert any("other task" in line for line in lever_lines)  # the grid count, the part that used to crash


def test_explain_offers_the_names_meant(grid: tuple[Path, GridSnapshot]) -> None:
    """An unknown nucleus is refused (exit 2) before any brokerage, naming the nuclei that start like it."""
    path, snap = grid
    task = _task(snap, "managed", "assigning")
    code, _, err = run("explain", "--snapshot", str(path), "--task", str(task), "--nucleus", "CERN")
    assert code == 2
    assert "unknown nucleus 'CERN'; did you mean CERN-PROD" in err
    code, _, err = run("explain", "--snapshot", str(path), "--task", str(task), "--queue", "NET2_MCOR")
    assert code == 2 and "did you mean NET2_MCORE" in err


def test_nucleus_refuses_an_analysis_task(grid: tuple[Path, GridSnapshot]) -> None:
    """Analysis tasks have no nucleus brokerage: `brokerage nucleus` on one exits 2 and says so."""
    path, snap = grid
    code, out, err = run("nucleus", "--snapshot", str(path), "--task", str(_task(snap, "user")))
    assert code == 2 and out == ""
    assert "analysis task" in err and "no nucleus brokerage" in err


def test_jobs_names_the_skipped_queues_per_criteria_code(grid: tuple[Path, GridSnapshot]) -> None:
    """The text output lists, per criteria code, how many queues it removed and the first of them by name."""
    path, snap = grid
    code, out, _ = run("jobs", "--snapshot", str(path), "--task", str(_task(snap, "managed", "assigning")))
    assert code == 0
    section = out.split("skipped by criteria:", 1)[1].strip().splitlines()
    queues = set(snap.queues["panda_queue"])
    for line in section:
        if not line.startswith("  -"):
            break
        named = line.split(None, 2)[2].split(" and ")[0].split(", ")
        assert named and set(named) <= queues


def test_tasks_prints_whole_user_names(grid: tuple[Path, GridSnapshot]) -> None:
    """`brokerage tasks` never cuts a user name (operators search for them)."""
    path, snap = grid
    code, out, _ = run("tasks", "--snapshot", str(path), "--limit", "0")
    assert code == 0
    longest = max(snap.tasks["username"].astype(str), key=len)
    assert len(longest) > 14 and longest in out


def test_simulate_prints_figures_a_person_reads(grid: tuple[Path, GridSnapshot]) -> None:
    """The simulate headline has counts with separators and at most a few digits, never raw float noise."""
    path, _ = grid
    code, out, _ = run("simulate", "--snapshot", str(path), "--hours", "0.5", "--quiet")
    assert code == 0
    assert re.search(r"^jobs generated +\d{1,3}(,\d{3})*$", out, re.M)
    assert not re.search(r"\d\.\d{4,}", out)  # no 51.895502007912704


def test_simulate_refuses_an_unknown_job_history_id(grid: tuple[Path, GridSnapshot]) -> None:
    """--job-history with an id the run never made ends with exit 2 naming it."""
    path, _ = grid
    code, _, err = run("simulate", "--snapshot", str(path), "--hours", "0.2", "--quiet", "--job-history", "987654321")
    assert code == 2 and "987654321" in err


@pytest.mark.parametrize(
    ("value", "shown"),
    [(118431.0, "118,431"), (51.895502007912704, "51.9"), (0.4213, "0.421"), (7, "7"), (None, "-"), (2.0, "2")],
)
def test_figures(value: object, shown: str) -> None:
    """A figure shows whole counts with separators and other numbers with three significant digits."""
    assert figure(value) == shown


def test_listing_wraps_at_item_boundaries() -> None:
    """A long list wraps between items, never inside a name with spaces, and says how many there are."""
    names = [f"MC Event Generation/SCORE_{i}" for i in range(12)]
    text = listing(names, indent=4, width=60)
    assert text.startswith("12: ")
    for line in text.splitlines():
        assert len(line) <= 60
        assert not line.rstrip().endswith("MC Event")


@pytest.mark.parametrize(
    ("value", "shown"),
    [(51100.5, "51,100"), (0.0000123, "0.0000123"), (1234.5, "1,230"), (0.421, "0.421"), (14850.0, "14850")],
)
def test_reason_numbers_have_no_scientific_notation(value: float, shown: str) -> None:
    """A number in a reason sentence keeps three significant digits without an exponent (5.11e+04 GB reads as
    51,100 GB), the vectorised formatter alike."""
    assert fmt(value) == shown
    assert fmt_many(np.array([value] * 9)) == [shown] * 9


def test_a_job_already_running_at_the_start_fails_without_an_error_zero() -> None:
    """A job of the snapshot's own counts that the Adder fails has no error code: its sentence says so instead of
    "failed with error 0"; a generated job's sentence names its error."""
    background = cause("adder_failed", 0, 0.05)
    assert "error 0" not in background and "already in the grid at the start" in background
    assert "failed with error 1235" in cause("adder_failed", 1235, 0.05)


def test_simulate_json_names_each_rule_once(grid: tuple[Path, GridSnapshot], tmp_path: Path) -> None:
    """The JSON of a run carries a `rules` legend: each rule code it names, once, with who applies it and the
    sentence; no rule the run does not name."""
    path, _ = grid
    out = tmp_path / "run.json"
    code, _, err = run("simulate", "--snapshot", str(path), "--hours", "1", "--quiet", "--out", str(out))
    assert code == 0, err
    doc = json.loads(out.read_text())
    legend = doc["rules"]
    assert legend and set(legend) <= set(RULES)
    assert "generate" in legend and legend["generate"]["by"] == "JobGenerator"
    body = json.dumps({k: v for k, v in doc.items() if k != "rules"})
    assert all(f'"{code}"' in body for code in legend)


def test_demo_with_history_keeps_the_task_history_through_an_import(
    tmp_path: Path, monkeypatch, demo_database: tuple[Path, str]
) -> None:
    """`snapshot demo --later 1 --history` writes the pull 10 minutes later with the task status history `db init`
    stores, so the README's diff recipe (`db import later.json`) keeps the task states page's history."""
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'b.sqlite'}")
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(demo_database[0], tmp_path / "b.sqlite")  # a copy of what `db init` stored (tests/conftest.py)
    engine = make_engine(f"sqlite:///{tmp_path / 'b.sqlite'}")
    before = load_snapshot(engine)
    code, _, err = run("snapshot", "demo", "--later", "1", "--history", "--out", "later.json")
    assert code == 0, err
    assert run("db", "import", "later.json")[0] == 0
    after = load_snapshot(engine)
    assert len(before.tables["task_status_log"]) > 0
    assert len(after.tables["task_status_log"]) == len(before.tables["task_status_log"])
    assert after.taken_at > before.taken_at


def test_reason_numbers_keep_infinities_and_nan() -> None:
    """An unlimited value (inf) or a missing one (NaN) reads as before: "inf", "-inf", "n/a"."""
    assert [fmt(float("inf")), fmt(-float("inf")), fmt(float("nan"))] == ["inf", "-inf", "n/a"]
    assert fmt_many(np.array([np.inf, np.nan] * 5))[:2] == ["inf", "n/a"]


def test_demo_built_for_a_rule_profile(tmp_path: Path, monkeypatch) -> None:
    """`snapshot demo --rules panda-1.0.4` places the jobs with that profile's brokers (the snapshot id says so);
    a profile that does not exist exits 2 naming the allowed ones."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run(
        "snapshot", "demo", "--queues", "20", "--tasks", "10", "--rules", "panda-1.0.4", "--out", "p.json"
    )
    assert code == 0, err
    assert GridSnapshot.from_json(tmp_path / "p.json").snapshot_id == "demo-s0-q20-t10-panda-1.0.4"
    code, _, err = run("snapshot", "demo", "--rules", "jedi", "--out", "x.json")
    assert code == 2 and "'jedi' is not one of 'seed', 'panda-1.0.4'" in err
