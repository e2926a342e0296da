"""The core knows no screen: brokerage/ never imports dash, flask or plotly; brokers never import sqlalchemy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Runs in a fresh interpreter so sys.modules holds only what the imports themselves pulled in.
PROBE = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
names = [package.__name__]
for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    importlib.import_module(info.name)
    names.append(info.name)
loaded = sorted({m.split(".")[0] for m in sys.modules})
print(json.dumps({"modules": names, "top_level": loaded}))
"""


def imported_by(package: str) -> tuple[list[str], set[str]]:
    """Import PACKAGE and all its submodules in a clean interpreter; return them and every top-level module loaded."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, package], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return data["modules"], set(data["top_level"])


def test_core_imports_no_screen_libraries() -> None:
    """Importing every brokerage module pulls in none of dash, flask or plotly."""
    modules, loaded = imported_by("brokerage")
    assert "brokerage.brokers.production" in modules
    assert "brokerage.model.gdpconfig" in modules
    assert not loaded & {"dash", "flask", "plotly", "flask_caching", "dash_bootstrap_components", "dash_ag_grid"}


def test_brokers_import_no_sqlalchemy() -> None:
    """Importing every module under brokerage/brokers/ pulls in no sqlalchemy (storage stays in brokerage/store)."""
    modules, loaded = imported_by("brokerage.brokers")
    assert "brokerage.brokers.production" in modules
    assert "sqlalchemy" not in loaded
    assert "alembic" not in loaded
