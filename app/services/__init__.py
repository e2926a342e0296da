"""The app's services over its state: tuning what-ifs, config administration (save, restore, roles), reports, and
the one job service every long job goes through."""

from __future__ import annotations

from dataclasses import dataclass

from app.services.admin import ConfigAdmin, Outcome
from app.services.crosschecks import Crosschecks
from app.services.diffs import Diffs
from app.services.dirac import Dirac
from app.services.jobs import Jobs, JobsBusy, JobState
from app.services.levers import Levers
from app.services.reports import MadeReport, Reports
from app.services.simulations import Simulations
from app.services.whatif import GridWhatIf, TaskWhatIf, WhatIf
from app.state import AppState

__all__ = [
    "ConfigAdmin",
    "Crosschecks",
    "Diffs",
    "Dirac",
    "GridWhatIf",
    "JobState",
    "Jobs",
    "JobsBusy",
    "MadeReport",
    "Outcome",
    "Reports",
    "Services",
    "Simulations",
    "TaskWhatIf",
    "WhatIf",
]


@dataclass(frozen=True)
class Services:
    """Everything callbacks and routes call, built over one AppState.

    Usage: ``services = Services.build(AppState()); services.whatif.task(4242, {})``
    """

    state: AppState
    whatif: WhatIf
    admin: ConfigAdmin
    reports: Reports
    dirac: Dirac
    jobs: Jobs
    diffs: Diffs
    levers: Levers
    simulations: Simulations
    crosschecks: Crosschecks

    @classmethod
    def build(cls, state: AppState) -> Services:
        """Wire the services over STATE (one per process: see app/main.py)."""
        jobs = Jobs()  # every long job goes to the Dask cluster; its state lives on the scheduler
        return cls(
            state, WhatIf(state, jobs), ConfigAdmin(state), Reports(state, jobs), Dirac(state), jobs,
            Diffs(state, jobs), Levers(state), Simulations(state, jobs), Crosschecks(state, jobs),
        )  # fmt: skip
