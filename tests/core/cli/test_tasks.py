"""``brokerage tasks``: lists tasks by status, label, user and name, highest priority first; bad statuses exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from brokerage.cli.main import main
from tests.builders import grid, queue, task


@pytest.fixture(scope="module")
def snapshot_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four tasks: two pending (priorities 500 and 900), one running, one pending user task named 'higgs'."""
    snap = grid(
        [queue("A", "S1")],
        [
            task(1, status="pending", currentpriority=500),
            task(2, status="pending", currentpriority=900),
            task(3, status="running"),
            task(4, status="pending", prodsourcelabel="user", taskname="user.x.higgs.1", currentpriority=100),
        ],
    )
    path = tmp_path_factory.mktemp("grid") / "grid.json"
    snap.to_json(path)
    return path


def run(path: Path, *args: str) -> tuple[int, str, str]:
    """Invoke ``brokerage tasks --snapshot PATH ARGS``: exit code, stdout, stderr."""
    r = CliRunner().invoke(main, ["tasks", "--snapshot", str(path), *args])
    return r.exit_code, r.stdout, r.stderr


def test_status_filter_lists_highest_priority_first(snapshot_file: Path) -> None:
    """--status pending keeps the three pending tasks, priority 900 before 500 before 100, and counts them."""
    code, out, err = run(snapshot_file, "--status", "pending", "--json")
    assert code == 0
    assert [r["jeditaskid"] for r in json.loads(out)] == [2, 1, 4]
    code, out, err = run(snapshot_file, "--status", "pending")
    assert code == 0 and "3 tasks match" in err
    assert [int(line.split()[0]) for line in out.splitlines()[1:]] == [2, 1, 4]


def test_label_name_and_limit_narrow_the_list(snapshot_file: Path) -> None:
    """--label user and --name HIGGS (case-insensitive) find task 4 alone ("1 task matches"); --limit 1 says how
    many more there are."""
    code, out, err = run(snapshot_file, "--label", "user", "--name", "HIGGS")
    assert code == 0 and "1 task matches" in err and out.splitlines()[1].split()[0] == "4"
    code, out, err = run(snapshot_file, "--status", "pending", "--limit", "1")
    assert code == 0 and len(out.splitlines()) == 2 and "2 more (--limit 0 for all)" in err


def test_unknown_status_exits_2_naming_the_allowed_ones(snapshot_file: Path) -> None:
    """A status JEDI does not have is refused with exit code 2, naming the field and the allowed statuses."""
    code, _, err = run(snapshot_file, "--status", "pendng")
    assert code == 2 and "--status: unknown task status 'pendng'" in err and "pending" in err
    assert "Traceback" not in err
