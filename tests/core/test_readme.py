"""The README's command tour runs as a newcomer types it: every line exits 0 and prints something."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from brokerage.crosscheck.panda import PandaMissing, find_panda

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


BENCHMARK = re.compile(r"`(python benchmarks/crosscheck\.py[^`]*)`")


def test_the_readme_crosscheck_benchmark_runs_as_typed(tmp_path: Path) -> None:
    """The README's crosscheck benchmark command runs as a newcomer types it, from the checkout without PYTHONPATH
    (shrunk to 2 random grids and 1 demo waiting task), and prints each broker's median time per brokerage, ours
    and PanDA's, with the agreement."""
    try:
        find_panda()
    except PandaMissing as exc:
        pytest.skip(f"PanDA is not set up: {exc}")
    commands = BENCHMARK.findall((ROOT / "README.md").read_text())
    assert commands, "README.md no longer names python benchmarks/crosscheck.py"
    for command in commands:
        args = shlex.split(command)
        assert args[:2] == ["python", "benchmarks/crosscheck.py"] and "--grids" in args, command
        args[args.index("--grids") + 1] = "2"
        args += ["--demo-tasks", "1"] if "--demo" in args else []
        env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", str(tmp_path))}
        env |= {k: os.environ[k] for k in ("BROKERAGE_PANDA_DIR", "XDG_CACHE_HOME") if k in os.environ}
        out = subprocess.run(
            [sys.executable, *args[1:]], cwd=ROOT, capture_output=True, text=True, timeout=900, env=env
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("random: 2 grid(s)"), out.stdout
        for broker in ("prod", "nucleus", "anal"):
            assert re.search(rf"^  {broker}: \d+ grids, \d+ tasks; .*per brokerage median ours [\d.]+ ms, PanDA [\d.]+ ms, "
                             r"ratio [\d.]+; tasks identical", out.stdout, re.M), out.stdout  # fmt: skip
        if "--demo" in args:
            assert re.search(r"^demo: 1 grid\(s\), 1 waiting tasks in ", out.stdout, re.M), out.stdout
