"""The app's services over its state: tuning what-ifs, config administration (save, restore, roles), reports."""

from __future__ import annotations

from dataclasses import dataclass

from app.services.admin import ConfigAdmin, Outcome
from app.services.admission import Admission
from app.services.diffs import Diffs
from app.services.dirac import Dirac
from app.services.jobs import Jobs, JobState
from app.services.levers import Levers
from app.services.reports import MadeReport, Reports
from app.services.runs import CACHE_DIR, GridRuns
from app.services.simulations import Simulations
from app.services.whatif import GridWhatIf, TaskWhatIf, WhatIf
from app.state import AppState

__all__ = [
    "ConfigAdmin",
    "Diffs",
    "Dirac",
    "GridWhatIf",
    "JobState",
    "Jobs",
    "MadeReport",
    "Outcome",
    "Reports",
    "Services",
    "Simulations",
    "TaskWhatIf",
    "WhatIf",
]


ADMISSION_DIR = CACHE_DIR / "admission"
JOBS_DIR = CACHE_DIR / "jobs"


@dataclass(frozen=True)
class Services:
    """Everything callbacks and routes call, built over one AppState.

    Usage: ``services = Services.build(AppState()); services.whatif.task(4242, {})``
    """

    state: AppState
    runs: GridRuns
    whatif: WhatIf
    admin: ConfigAdmin
    reports: Reports
    dirac: Dirac
    jobs: Jobs
    diffs: Diffs
    levers: Levers
    simulations: Simulations

    @classmethod
    def build(cls, state: AppState) -> Services:
        """Wire the services over STATE (one per process: see app/main.py)."""
        runs = GridRuns(state)
        admission = Admission(ADMISSION_DIR)  # one queue for what-ifs and whole-grid reports, shared by processes
        jobs = Jobs(JOBS_DIR)
        return cls(
            state, runs, WhatIf(state, runs, admission), ConfigAdmin(state), Reports(state, admission=admission),
            Dirac(state), jobs, Diffs(state, runs, admission), Levers(state), Simulations(state, jobs, admission),
        )  # fmt: skip
