"""The ``brokerage report`` command: exit codes, clear errors, no file on failure, progress on stderr."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from brokerage.cli.main import main
from brokerage.report.progress import ProgressBar, bar_text
from brokerage.synth.demo import demo_snapshot
from tests.core.report.test_whatif import linked_grid


@pytest.fixture(scope="module")
def snapshot_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small demo grid saved as a snapshot file."""
    path = tmp_path_factory.mktemp("grid") / "grid.json"
    demo_snapshot(seed=0, queues=60, tasks=40).to_json(path)
    return path


@pytest.fixture(scope="module")
def a_task(snapshot_file: Path) -> int:
    """The id of the first task in the snapshot file."""
    return int(json.loads(snapshot_file.read_text())["tasks"][0]["jeditaskid"])


def run(snapshot_file: Path, *args: str) -> Result:
    """Invoke ``brokerage report --snapshot FILE ARGS``."""
    return CliRunner().invoke(main, ["report", "--snapshot", str(snapshot_file), *args], catch_exceptions=False)


def test_report_command_is_attached() -> None:
    """``brokerage report`` is a subcommand of ``brokerage``."""
    import click

    assert main.get_command(click.Context(main), "report") is not None
    result = CliRunner().invoke(main, ["report", "--help"])
    assert result.exit_code == 0 and "--all" in result.output and "--task" in result.output


def test_all_tasks_json_with_progress(snapshot_file: Path, tmp_path: Path) -> None:
    """--all writes a JSON file that parses, records the source file, and draws progress lines on stderr."""
    out = tmp_path / "r.json"
    result = run(snapshot_file, "--all", "--format", "json", "--out", str(out))
    assert result.exit_code == 0, result.stderr
    doc = json.loads(out.read_text())
    n = len(doc["tasks"])
    assert n > 0 and doc["meta"]["origin"] == f"snapshot file {snapshot_file.resolve()}"
    assert f"] {n}/{n} tasks" in result.stderr and "[" + "#" * 30 + "]" in result.stderr
    assert len(result.stderr.splitlines()) <= 7  # not a tty: a few lines, not one per task
    assert f"wrote {out}" in result.stderr


def test_gz_out_writes_the_same_report_compressed(snapshot_file: Path, tmp_path: Path) -> None:
    """--out NAME.json.gz takes the format from the name before .gz and writes the same JSON gzip-compressed."""
    plain, packed = tmp_path / "r.json", tmp_path / "r.json.gz"
    assert run(snapshot_file, "--all", "--quiet", "--out", str(plain)).exit_code == 0
    result = run(snapshot_file, "--all", "--quiet", "--out", str(packed))
    assert result.exit_code == 0, result.stderr
    unpacked, expected = json.loads(gzip.decompress(packed.read_bytes())), json.loads(plain.read_text())
    assert unpacked["tasks"] == expected["tasks"] and unpacked["summary"] == expected["summary"]
    assert packed.stat().st_size < plain.stat().st_size


def test_quiet_prints_nothing(snapshot_file: Path, a_task: int, tmp_path: Path) -> None:
    """--quiet writes the file and prints nothing at all."""
    out = tmp_path / "r.csv"
    result = run(snapshot_file, "--task", str(a_task), "--out", str(out), "--quiet")
    assert result.exit_code == 0 and result.stderr == "" and result.stdout == ""
    rows = list(csv.DictReader(io.StringIO(out.read_text(), newline="")))
    assert {r["task"] for r in rows if r["record"] == "decision"} == {str(a_task)}


def test_repeated_task_and_overrides_in_html(snapshot_file: Path, a_task: int, tmp_path: Path) -> None:
    """--task is repeatable, --set values are recorded, and the format follows the .html extension."""
    out = tmp_path / "r.html"
    result = run(snapshot_file, "--task", str(a_task), "--task", str(a_task), "--set", "NQUEUED_SAT_CAP=300",
                 "--out", str(out), "--quiet")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    page = out.read_text()
    assert "<svg" in page and "NQUEUED_SAT_CAP" in page and f"Task {a_task}" in page


@pytest.mark.parametrize(
    ("assignment", "needle"),
    [
        ("NQUEUED_SAT_CAP=0", "NQUEUED_SAT_CAP: 0 is below the minimum: expected an integer in [1, "),
        ("NQUEUED_SAT_CAP=lots", "NQUEUED_SAT_CAP: cannot read 'lots' as int"),
        ("NO_SUCH_KEY=1", "NO_SUCH_KEY: unknown gdpconfig key"),
        ("NQUEUED_SAT_CAP", "NQUEUED_SAT_CAP: expected KEY=VALUE"),
    ],
)
def test_bad_set_exits_2_and_writes_nothing(snapshot_file: Path, tmp_path: Path, assignment: str, needle: str) -> None:
    """A bad --set names the key (and the allowed range), exits 2 and leaves no output file."""
    out = tmp_path / "r.csv"
    result = run(snapshot_file, "--all", "--set", assignment, "--out", str(out))
    assert result.exit_code == 2
    prefix = "error: " if "unknown" in needle else "error: bad gdpconfig value: "
    assert result.stderr.startswith(prefix) and needle in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_failure_keeps_an_existing_file(snapshot_file: Path, tmp_path: Path) -> None:
    """A failing run leaves a previous report untouched."""
    out = tmp_path / "r.json"
    out.write_text("previous")
    result = run(snapshot_file, "--task", "123456789", "--out", str(out))
    assert result.exit_code == 2 and "unknown task 123456789" in result.stderr
    assert out.read_text() == "previous" and [p.name for p in tmp_path.iterdir()] == ["r.json"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--all", "--task", "1"], "not both"),
        ([], "give --task ID (repeatable) or --all"),
        (["--all", "--format", "xml"], "'xml' is not one of"),
    ],
)
def test_usage_errors_exit_2(snapshot_file: Path, tmp_path: Path, args: list[str], needle: str) -> None:
    """--task with --all, neither of them, or an unknown format is a usage error (exit 2, no file)."""
    out = tmp_path / "r.csv"
    result = run(snapshot_file, *args, "--out", str(out))
    assert result.exit_code == 2 and needle in result.stderr
    assert not out.exists()


def test_format_must_be_known(snapshot_file: Path, tmp_path: Path) -> None:
    """Without --format the extension of --out must name a format."""
    result = run(snapshot_file, "--all", "--out", str(tmp_path / "r.txt"))
    assert result.exit_code == 2 and "give --format csv|json|html" in result.stderr


def test_missing_directory_is_one_line(snapshot_file: Path, tmp_path: Path) -> None:
    """An --out in a directory that does not exist is refused in one line before any brokerage."""
    result = run(snapshot_file, "--all", "--out", str(tmp_path / "nope" / "r.csv"))
    assert result.exit_code == 2 and "does not exist" in result.stderr and "Traceback" not in result.stderr


def test_progress_bar_redraws_in_place_on_a_terminal() -> None:
    """On a terminal the bar is redrawn with carriage returns and ends with one newline."""

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    bar = ProgressBar(stream)
    for i in range(101):
        bar(i, 100)
    bar.close()
    text = stream.getvalue()
    assert text.endswith("\r" + bar_text(100, 100) + "\n") and text.count("\n") == 1
    assert bar_text(812, 1915) == "[" + "#" * 12 + "-" * 18 + "] 812/1915 tasks"


def test_progress_bar_prints_few_lines_otherwise() -> None:
    """Off a terminal the bar prints a line at 0, 25, 50, 75 and 100 percent only."""
    stream = io.StringIO()
    bar = ProgressBar(stream)
    for i in range(1001):
        bar(i, 1000)
    bar.close()
    assert [line.split("] ")[1] for line in stream.getvalue().splitlines()] == [
        f"{n}/1000 tasks" for n in (0, 250, 500, 750, 1000)
    ]


def test_the_command_starts_without_the_heavy_libraries() -> None:
    """`brokerage --version` loads neither pandas, numpy nor SQLAlchemy (each subcommand loads what it uses)."""
    import subprocess
    import sys

    code = (
        "import sys; from click.testing import CliRunner; from brokerage.cli.main import main; "
        "r = CliRunner().invoke(main, ['--version']); assert r.exit_code == 0, r.output; "
        "print(sorted(m for m in ('pandas', 'numpy', 'sqlalchemy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_all_json_is_a_summary_unless_full(snapshot_file: Path, tmp_path: Path) -> None:
    """--all JSON defaults to the summary (skip counts per criteria code, no skip rows) and says so; --full writes
    every skipped candidate."""
    short, full = tmp_path / "s.json", tmp_path / "f.json"
    result = run(snapshot_file, "--all", "--out", str(short))
    assert result.exit_code == 0 and "summary: top candidates and skip counts per task; --full" in result.stderr
    assert run(snapshot_file, "--all", "--full", "--out", str(full)).exit_code == 0
    s, f = json.loads(short.read_text()), json.loads(full.read_text())
    assert s["meta"]["detail"] == "summary" and f["meta"]["detail"] == "full"
    job = next(t["job"] for t in f["tasks"] if t["job"] and t["job"]["skipped"])
    same = next(t["job"] for t in s["tasks"] if t["task"] == job["task"])
    assert "skipped" not in same and same["skipped_total"] == len(job["skipped"])


def test_set_adds_the_before_after_of_the_moved_task(tmp_path: Path) -> None:
    """`report --set NQUEUED_SAT_CAP=1000` on a grid where that edit lets task 1's closer queue Q1 pass -link_unusable
    says on stderr that task 1 moved Q2 → Q1 and why, and the CSV holds the whatif row."""
    path = tmp_path / "grid.json"
    linked_grid().to_json(path)
    out = tmp_path / "r.csv"
    result = run(path, "--all", "--set", "NQUEUED_SAT_CAP=1000", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "before/after the edits: 1 decision compared, 1 changed, 1 task moved" in result.output
    assert "task 1: Q2 → Q1, Q1 no longer removed by -link_unusable" in result.output
    rows = [r for r in csv.DictReader(io.StringIO(out.read_text())) if r["record"] == "whatif"]
    assert [(r["task"], r["before"], r["after"]) for r in rows] == [("1", "Q2", "Q1")]
