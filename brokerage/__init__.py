"""Pure PanDA/JEDI-style brokerage core: snapshots, gdpconfig, brokers and explanations."""

from __future__ import annotations

from importlib import import_module
from typing import Any

# the names a caller may import from the package; loaded on first use so `brokerage --version` stays light
_EXPORTS = {
    "Candidate": "brokerage.model.explain",
    "Decision": "brokerage.model.explain",
    "FunnelStep": "brokerage.model.explain",
    "Note": "brokerage.model.explain",
    "Skip": "brokerage.model.explain",
    "Config": "brokerage.model.gdpconfig",
    "ConfigError": "brokerage.model.gdpconfig",
    "GridSnapshot": "brokerage.model.snapshot",
    "SnapshotError": "brokerage.model.snapshot",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'brokerage' has no attribute {name!r}")
