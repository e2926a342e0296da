"""DIRAC matching for the app, over the state's current snapshot and its GridCache (task queues built once)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.state import AppState
from brokerage.dirac.matcher import DiracMatch, match, task_queues
from brokerage.dirac.taskqueues import TaskQueues


class Dirac:
    """Pilot matching and task queues of the current grid under the stored config plus what-if overrides.

    Usage: ``Dirac(state).run_match("Site=LCG.CERN.cern,CPUTime=40000", {})``
    """

    def __init__(self, state: AppState) -> None:
        self.state = state

    def run_match(self, pilot: str, overrides: Mapping[str, Any], seed: int = 0) -> DiracMatch:
        """Match PILOT under the stored config plus OVERRIDES (PilotError / ConfigError on bad input)."""
        cache = self.state.grid_cache()
        return match(cache.snap, pilot, self.state.effective_config(overrides), seed=seed, cache=cache)

    def queues(self, overrides: Mapping[str, Any]) -> TaskQueues:
        """The task queues under the stored config plus OVERRIDES."""
        cache = self.state.grid_cache()
        return task_queues(cache.snap, self.state.effective_config(overrides), cache)
