"""The embedded Dask cluster opens no dashboard port unless asked, so it never warns about a busy 8787."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

START_AND_CLOSE = "from brokerage.runs import engine; engine.get_client(); engine.close(); print('started')"


def test_embedded_cluster_is_quiet_when_8787_is_taken() -> None:
    """With port 8787 held by another program, starting the embedded cluster prints no port warning."""
    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", 8787))
        holder.listen()
    except OSError:
        holder.close()
        holder = None  # something else already holds it: the condition under test holds anyway
    try:
        out = subprocess.run(
            [sys.executable, "-c", START_AND_CLOSE],
            capture_output=True, text=True, timeout=180, env={**_env(), "BROKERAGE_DASK_WORKERS": "1"},
        )  # fmt: skip
    finally:
        if holder is not None:
            holder.close()
    assert out.returncode == 0, out.stderr
    assert "started" in out.stdout
    assert "already in use" not in out.stderr and "8787" not in out.stderr


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "BROKERAGE_DASK_DASHBOARD"}
