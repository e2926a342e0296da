"""Another project's code for a crosscheck: where its set-up script put it, and running its driver (JSON in, JSON out)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any


def setup_dir(name: str) -> Path:
    """BROKERAGE_<NAME>_DIR, else ~/.cache/brokerage-<name> (XDG_CACHE_HOME respected): where scripts/<name>.sh
    installs.

    Usage: ``setup_dir("panda") / "venv"``
    """
    chosen = os.environ.get(f"BROKERAGE_{name.upper()}_DIR")
    if chosen:
        return Path(chosen)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / f"brokerage-{name}"


def run_driver(
    argv: list[str],
    payload: dict[str, Any],
    env: dict[str, str],
    cwd: str | None,
    timeout: float,
    drop: tuple[str, ...] = (),
) -> tuple[int, Any, str]:
    """Run ARGV with PAYLOAD as JSON on stdin, the caller's environment plus ENV, without PYTHONPATH (the driver's
    venv must never see this project's modules) nor the names in DROP; (exit code, parsed stdout or None, stderr's
    last lines).

    Usage: ``code, out, tail = run_driver([python, driver], {"grids": g}, {"HOME": work}, work, 600.0)``
    """
    environ = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **env}
    for name in ("PYTHONPATH", *drop):
        environ.pop(name, None)
    proc = subprocess.run(
        argv, input=json.dumps(payload), capture_output=True, text=True, env=environ, cwd=cwd, timeout=timeout,
        check=False,
    )  # fmt: skip
    tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
    return proc.returncode, json.loads(proc.stdout) if proc.returncode == 0 else None, tail
