"""Writing output on a full disk (issue #34 item 10): exit 2 naming the file, and no truncated file left behind."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _capped(limit: int) -> None:
    """In the child: files may grow to LIMIT bytes (then writes fail with EFBIG, as on a full disk)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _demo(out: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    code = "import sys; from brokerage.cli.main import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, "snapshot", "demo", "--queues", "20", "--tasks", "10", "--out", out],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=(lambda: _capped(limit)) if limit else None,  # only sets a resource limit
    )  # fmt: skip


def test_demo_out_on_a_full_device_exits_2() -> None:
    """`snapshot demo --out /dev/full` (every write fails with ENOSPC) exits 2 with the path and the reason."""
    result = _demo("/dev/full")
    assert result.returncode == 2, result.stderr
    assert "/dev/full: cannot write the file (No space left on device)" in result.stderr
    assert "Traceback" not in result.stderr


def test_demo_out_that_runs_out_of_space_leaves_no_file(tmp_path: Path) -> None:
    """A write that fails half-way (files capped at 64 KiB) exits 2 and leaves neither a truncated file nor a
    temporary one; an existing file of that name is left as it was."""
    out = tmp_path / "grid.json"
    result = _demo(str(out), limit=64 * 1024)
    assert result.returncode == 2 and "cannot write the file" in result.stderr and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []
    out.write_text("previous")
    assert _demo(str(out), limit=64 * 1024).returncode == 2
    assert [p.name for p in tmp_path.iterdir()] == ["grid.json"] and out.read_text() == "previous"
    assert _demo(str(out)).returncode == 0 and out.stat().st_size > 64 * 1024
