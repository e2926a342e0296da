"""Run a crosscheck driver in another project's venv: JSON in on stdin, JSON out on stdout."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any


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
