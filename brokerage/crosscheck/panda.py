"""Where PanDA's code is, and running its brokers in a subprocess of PanDA's own venv (this process never imports it).

``scripts/panda.sh`` puts the unpacked panda-server sdist and a venv holding panda-common beside it, under
``BROKERAGE_PANDA_DIR`` (default ``~/.cache/brokerage-panda``). The driver (``jedi/driver.py``) reads the converted
grids as JSON on stdin and answers JSON on stdout.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brokerage.crosscheck.driver_process import run_driver, setup_dir
from brokerage.model.errors import BrokerageError, InputError

PANDA_VERSION = "1.0.4"
DRIVER = Path(__file__).resolve().parent / "jedi" / "driver.py"
HOW_TO_GET = "run scripts/panda.sh (it downloads panda-server {v} as a non-root user into {d}; set BROKERAGE_PANDA_DIR to move it)"


class PandaMissing(InputError, RuntimeError):
    """PanDA's source or its venv is not where scripts/panda.sh puts them; the message says how to get them."""


class PandaFailed(BrokerageError, RuntimeError):
    """PanDA's side stopped with an error (its traceback is the message)."""


@dataclass(frozen=True)
class PandaEnv:
    """The unpacked sdist, the python of PanDA's venv, and the version."""

    src: Path
    python: Path
    version: str = PANDA_VERSION


def panda_dir() -> Path:
    """Where scripts/panda.sh installs (``setup_dir``)."""
    return setup_dir("panda")


def find_panda(version: str = PANDA_VERSION) -> PandaEnv:
    """PanDA's environment as scripts/panda.sh leaves it, or PandaMissing with one sentence saying how to get it.

    Usage: ``env = find_panda()``
    """
    base = panda_dir()
    src = base / f"panda-server-{version}"
    python = base / "venv" / "bin" / "python"
    if not (src / "pandajedi" / "jedibrokerage").is_dir() or not python.exists():
        raise PandaMissing(f"PanDA {version}'s source is not at {src}: " + HOW_TO_GET.format(v=version, d=base) + ".")
    return PandaEnv(src, python, version)


def run_jedi(
    env: PandaEnv, grids: list[dict[str, Any]], timeout: float = 3600.0, debug: bool = False
) -> dict[str, Any]:
    """PanDA's brokers on GRIDS (``convert.grid_document`` outputs), in one subprocess of PanDA's venv.

    Returns ``{"panda_version", "grids": [{"tasks": {tid: {broker: result}}, "seconds"}]}``.
    PYTHONHASHSEED=0 makes PanDA's set orders (and so its logs) reproducible (reference pitfall 12).
    """
    with tempfile.TemporaryDirectory(prefix="brokerage-jedi-") as work:
        argv = [str(env.python), str(DRIVER), "--src", str(env.src), "--work", work, *(["--debug"] if debug else [])]
        code, out, tail = run_driver(argv, {"grids": grids}, {"PYTHONHASHSEED": "0"}, None, timeout)
    if code != 0:
        raise PandaFailed(f"PanDA's driver exited with {code}:\n{tail}")
    return out
