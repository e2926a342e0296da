"""The README's command tour runs as a newcomer types it: every line exits 0 and prints something."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOUR = re.compile(r"<!-- tour -->\n```bash\n(.*?)```", re.S)


def tour_lines() -> list[str]:
    """The commands of the README's tour block, in order."""
    found = TOUR.search((ROOT / "README.md").read_text())
    assert found, "README.md lost its <!-- tour --> block"
    return [line for line in found.group(1).splitlines() if line.strip()]


def brokerage_command() -> list[str]:
    """The installed `brokerage` script beside this interpreter, else the module (same code either way)."""
    script = Path(sys.executable).with_name("brokerage")
    if script.exists():
        return [str(script)]
    found = shutil.which("brokerage")
    return [found] if found else [sys.executable, "-c", "from brokerage.cli.main import main; main()"]


def test_the_tour_has_the_commands_people_start_with() -> None:
    """The tour shows the task list, a job brokerage, a nucleus brokerage, an explanation and a report."""
    words = {shlex.split(line)[1] for line in tour_lines()}
    assert {"snapshot", "tasks", "jobs", "nucleus", "explain", "report", "simulate"} <= words


def run_line(line: str, workdir: Path) -> subprocess.CompletedProcess[str]:
    """One tour line as a shell would run it, in WORKDIR, with the project's own `brokerage`."""
    args = shlex.split(line)
    assert args[0] == "brokerage"
    return subprocess.run(
        brokerage_command() + args[1:], cwd=workdir, capture_output=True, text=True, timeout=600,
        env={"PATH": "/usr/bin:/bin", "HOME": str(workdir), "BROKERAGE_DASK_WORKERS": "1",
             "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where the tour's first line (the demo grid every other line reads) has run."""
    folder = tmp_path_factory.mktemp("tour")
    first = run_line(tour_lines()[0], folder)
    assert first.returncode == 0, first.stderr
    return folder


@pytest.mark.parametrize("line", tour_lines()[1:])
def test_tour_line(line: str, workdir: Path) -> None:
    """Each README tour line after the first exits 0 with output and no traceback, on the grid the first wrote."""
    out = run_line(line, workdir)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert out.stdout.strip() or out.stderr.strip()
