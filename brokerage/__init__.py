"""Pure PanDA/JEDI-style brokerage core: snapshots, gdpconfig, brokers and explanations."""

from brokerage.explain import Candidate, Decision, FunnelStep, Note, Skip
from brokerage.gdpconfig import Config, ConfigError
from brokerage.snapshot import GridSnapshot, SnapshotError

__all__ = [
    "Candidate",
    "Config",
    "ConfigError",
    "Decision",
    "FunnelStep",
    "GridSnapshot",
    "Note",
    "Skip",
    "SnapshotError",
]
