"""Tuning what-if orchestration: validate edits, re-rank one task, re-broker the whole grid, pick a showcase task."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from app.services.admission import Admission, Waiting
from app.services.roles import client_address
from app.services.runs import GridRuns
from app.state import AppState
from app.viewmodels import queues as qvm
from brokerage.brokers.batch import GridRun
from brokerage.brokers.router import needs_nucleus
from brokerage.model import views
from brokerage.model.gdpconfig import Edits, parse_edits
from brokerage.whatif.compare import Progress, TaskDiff, compare
from brokerage.whatif.impact import GridImpact, impact

Stage = Literal["jobs", "nucleus"]


@dataclass(frozen=True)
class TaskWhatIf:
    """One task before and after the edits: the nucleus diff (when it still needs a nucleus) and the job diff."""

    task: int
    nucleus: TaskDiff | None
    jobs: TaskDiff
    config: str  # fingerprint of the what-if config


@dataclass(frozen=True)
class GridWhatIf:
    """Every waiting task re-brokered: the impact, the run behind it, task names and the config fingerprint."""

    impact: GridImpact
    after: GridRun
    names: dict[int, str]
    config: str


class WhatIf:
    """What the tuning page asks: edits checked against the stored config and their effect on tasks and the grid.

    Usage: ``WhatIf(state, runs).task(4242, {"NW_ACTIVE": False}).jobs.moves``
    """

    def __init__(self, state: AppState, runs: GridRuns, admission: Admission | None = None) -> None:
        self.state = state
        self.runs = runs
        self.admission = admission
        self._last_edits: tuple[Any, Edits] | None = None

    def edits(self, raw: Mapping[str, Any] | None) -> Edits:
        """The operator's raw edits checked against the stored config: valid overrides and refusals.

        Usage: ``whatif.edits({"NQUEUED_SAT_CAP": "0"}).errors``
        """
        config = self.state.config()
        key = (config.fingerprint(), json.dumps(raw or {}, sort_keys=True, default=str))
        last = self._last_edits
        if last is not None and last[0] == key:
            return last[1]  # the callbacks of one keystroke ask for the same edits: parsed once
        edits = parse_edits(raw or {}, config, variants=False)
        self._last_edits = (key, edits)
        return edits

    def task(self, task_id: int, overrides: Mapping[str, Any]) -> TaskWhatIf:
        """Before/after of TASK_ID's nucleus brokerage (if it still needs one) and of its job brokerage."""
        st, tid = self.state, int(task_id)
        nucleus = None
        if needs_nucleus(views.task_row(st.grid_cache(), tid)):
            nucleus = compare(st.nucleus_decision(tid), st.nucleus_decision(tid, overrides))
        jobs = compare(st.job_decision(tid), st.job_decision(tid, overrides))
        return TaskWhatIf(tid, nucleus, jobs, st.effective_config(overrides).fingerprint())

    def grid(
        self,
        overrides: Mapping[str, Any],
        progress: Progress | None = None,
        waiting: Waiting | None = None,
        client: str | None = None,
    ) -> GridWhatIf:
        """Every waiting task re-brokered under OVERRIDES; only brokers that read an edited key run again.

        With an Admission, the run waits its turn (WAITING is told the queue position) and identical runs are shared;
        CLIENT is the requesting address (the current request's when None).
        Usage: ``whatif.grid({"NQUEUED_SAT_CAP": 300}).impact``
        """
        if self.admission is None:
            before, after = self.runs.whatif_runs(overrides, progress=progress)
        else:
            key = ("grid", self.state.keys()[0], self.state.effective_config(overrides).fingerprint())
            before, after = self.admission.run(
                key, client or client_address(), lambda: self.runs.whatif_runs(overrides, progress=progress), waiting
            )
        t = self.state.snapshot().tasks
        names = dict(zip(t["jeditaskid"].astype(int), t["taskname"].astype(str), strict=False)) if not t.empty else {}
        return GridWhatIf(impact(before, after), after, names, self.state.effective_config(overrides).fingerprint())

    def base_run(self, progress: Progress | None = None) -> GridRun:
        """Every waiting task under the stored config (once per snapshot and config version)."""
        return self.runs.base_run(progress)

    def warm(self) -> None:
        """Start computing the stored config's grid run in the background, so the first edit finds it ready."""
        self.runs.warm_base_in_background()

    def showcase_task(self, stage: Stage = "jobs") -> int | None:
        """The task a brokerage view opens on when the URL names none (runs up to 20 memoised brokerages).

        Usage: ``whatif.showcase_task("nucleus")``
        """
        st = self.state
        if stage == "nucleus":
            return qvm.showcase_task(
                st.snapshot(), lambda t: len(st.nucleus_decision(t).candidates), want=3, stage="nucleus"
            )
        return qvm.showcase_task(st.snapshot(), lambda t: len(st.job_decision(t).candidates))
