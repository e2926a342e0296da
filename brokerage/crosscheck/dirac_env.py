"""Where DIRAC's code and its MariaDB are, and running DIRAC's TaskQueueDB in a subprocess of DIRAC's own venv.

``scripts/dirac.sh`` makes the venv under ``BROKERAGE_DIRAC_DIR`` (default ``~/.cache/brokerage-dirac``) and
``scripts/dirac.sh db start`` a MariaDB on 127.0.0.1:53306 (``DIRAC_DB_HOST``, ``DIRAC_DB_PORT``, ``DIRAC_DB_USER``,
``DIRAC_DB_PASSWORD`` move it). The driver (``tqdb/driver.py``) reads the converted grids as JSON on stdin and
answers JSON on stdout; this process never imports DIRAC.
"""

from __future__ import annotations

import os
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brokerage.crosscheck.driver_process import run_driver, setup_dir
from brokerage.model.errors import BrokerageError, InputError

DIRAC_VERSION = "9.1.22"
DRIVER = Path(__file__).resolve().parent / "tqdb" / "driver.py"
HOW_TO_GET = "run scripts/dirac.sh (DIRAC {v} into its own venv under {d}) and scripts/dirac.sh db start (a MariaDB)"


class DiracMissing(InputError, RuntimeError):
    """DIRAC's venv or its MariaDB is not there; the message says how to get them."""


class DiracFailed(BrokerageError, RuntimeError):
    """DIRAC's side stopped with an error (its traceback is the message)."""


@dataclass(frozen=True)
class DiracEnv:
    """The python of DIRAC's venv, the MariaDB settings, and the version."""

    python: Path
    db: dict[str, Any]
    version: str = DIRAC_VERSION


def dirac_dir() -> Path:
    """Where scripts/dirac.sh installs (``setup_dir``)."""
    return setup_dir("dirac")


def db_settings() -> dict[str, Any]:
    """The MariaDB scripts/dirac.sh starts, or the one DIRAC_DB_* name."""
    return {
        "host": os.environ.get("DIRAC_DB_HOST", "127.0.0.1"),
        "port": int(os.environ.get("DIRAC_DB_PORT", "53306")),
        "user": os.environ.get("DIRAC_DB_USER", "dirac"),
        "password": os.environ.get("DIRAC_DB_PASSWORD", "dirac"),
    }


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def find_dirac(version: str = DIRAC_VERSION) -> DiracEnv:
    """DIRAC's environment as scripts/dirac.sh leaves it, or DiracMissing with one sentence saying how to get it.

    Usage: ``env = find_dirac()``
    """
    base = dirac_dir()
    python = base / "venv" / "bin" / "python"
    how = HOW_TO_GET.format(v=version, d=base)
    if not (base / f"READY-{version}").exists() or not python.exists():
        raise DiracMissing(f"DIRAC {version}'s venv is not at {base / 'venv'}: {how}.")
    db = db_settings()
    if not _listening(db["host"], db["port"]):
        raise DiracMissing(f"no MariaDB answers on {db['host']}:{db['port']} for DIRAC's TaskQueueDB: {how}.")
    return DiracEnv(python, db, version)


def run_tqdb(env: DiracEnv, grids: list[dict[str, Any]], timeout: float = 3600.0) -> dict[str, Any]:
    """DIRAC's TaskQueueDB and Matcher on GRIDS (``dirac_convert.grid_document`` outputs), in one subprocess.

    Returns ``{"dirac_version", "grids": [{"taskqueues", "jobs", "pilots", "seconds"} or {"error"}]}``.
    """
    with tempfile.TemporaryDirectory(prefix="brokerage-dirac-") as work:
        argv = [str(env.python), str(DRIVER)]
        code, out, tail = run_driver(argv, {"db": env.db, "grids": grids}, {"HOME": work}, work, timeout,
                                     drop=("DIRACSYSCONFIG",))  # fmt: skip
    if code != 0:
        raise DiracFailed(f"DIRAC's driver exited with {code}:\n{tail}")
    return out
