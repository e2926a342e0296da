"""Tuning what-if orchestration: validate edits, re-rank one task, re-broker the whole grid as a job, pick a showcase
task; the stored config's grid run (the baseline of what-ifs, the overview's census, the pending page) as a job."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from app.services import work
from app.services.jobs import Jobs, JobState
from app.state import AppState, Lru
from app.viewmodels import queues as qvm
from brokerage.brokers.batch import GridRun
from brokerage.brokers.router import needs_nucleus
from brokerage.model import views
from brokerage.model.gdpconfig import Edits, parse_edits
from brokerage.whatif.compare import TaskDiff, compare

log = logging.getLogger(__name__)

Stage = Literal["jobs", "nucleus"]
GridWhatIf = work.GridWhatIf
RUNS_HELD = 2  # stored-config runs kept in this process's memory (the current snapshot and config, and the one before)


@dataclass(frozen=True)
class TaskWhatIf:
    """One task before and after the edits: the nucleus diff (when it still needs a nucleus) and the job diff."""

    task: int
    nucleus: TaskDiff | None
    jobs: TaskDiff
    config: str  # fingerprint of the what-if config


class WhatIf:
    """What the tuning page asks: edits checked against the stored config and their effect on tasks and the grid.

    Usage: ``WhatIf(state, jobs).task(4242, {"NW_ACTIVE": False}).jobs.moves``
    """

    def __init__(self, state: AppState, jobs: Jobs) -> None:
        self.state = state
        self.jobs = jobs
        self._runs: Lru[GridRun] = Lru(RUNS_HELD)
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

    # ------------------------------------------------------------ the whole grid under edits

    def grid_job_id(self, overrides: Mapping[str, Any]) -> str:
        """The whole-grid job of OVERRIDES on the current snapshot: identical edits share one job and its result."""
        return f"grid:{self.state.keys()[0]}:{self.state.effective_config(overrides).fingerprint()}"

    def start_grid(self, overrides: Mapping[str, Any], client: str) -> tuple[str, JobState]:
        """Start (or join) the job that re-brokers every waiting task under OVERRIDES; it waits its turn among the
        long jobs (CLIENT: the requesting address).

        Usage: ``job_id, state = whatif.start_grid({"NQUEUED_SAT_CAP": 300}, "10.0.0.7")``
        """
        src = self.state.source()
        config = self.state.effective_config(overrides)
        snap_future = self.jobs.snapshot(src.snap)
        job_id = self.grid_job_id(overrides)
        return job_id, self.jobs.start(job_id, work.grid_whatif, snap_future, src.config, config, admit=client)

    def grid(self, overrides: Mapping[str, Any], client: str = "local", timeout_s: float | None = None) -> GridWhatIf:
        """Every waiting task re-brokered under OVERRIDES (start or join the job and wait for it).

        Usage: ``whatif.grid({"NQUEUED_SAT_CAP": 300}).impact``
        """
        job_id, _ = self.start_grid(overrides, client)
        return self.jobs.result(job_id, timeout_s)  # type: ignore[no-any-return]

    # ------------------------------------------------------------ the stored config's run

    def base_job_id(self) -> str:
        """The job of the stored config's grid run on the current snapshot."""
        return work.base_job_id(*self.state.keys())

    def start_base(self) -> tuple[str, JobState]:
        """Start (or join) the job of the stored config's grid run (computed once per snapshot and config version)."""
        src = self.state.source()
        job_id = work.base_job_id(src.snap.key, src.config.fingerprint())
        if self._runs.peek(job_id) is not None:
            return job_id, JobState("done", 100, "done", result=self._runs.peek(job_id))
        snap_future = self.jobs.snapshot(src.snap)
        state = self.jobs.start(job_id, work.base_run, snap_future, src.config, keep_s=work.RUN_KEEP_S, evict=False)
        return job_id, state

    def base_state(self, wait_s: float = 0.0) -> JobState:
        """Where the stored config's run is (started if needed); done carries the run. WAIT_S answers a run that
        finishes within it without a poll round trip."""
        job_id, state = self.start_base()
        if state.state == "running" and wait_s > 0:
            state = self.jobs.wait(job_id, wait_s)
        if state.state == "done":
            self._runs.put(job_id, state.result)
        return state

    def base_run(self, timeout_s: float | None = None) -> GridRun:
        """Every waiting task under the stored config (waits for its job when it is not computed yet).

        Usage: ``whatif.base_run().outcomes[("production", 4242)].top``
        """
        job_id, state = self.start_base()
        run = state.result if state.state == "done" else self.jobs.result(job_id, timeout_s)
        self._runs.put(job_id, run)
        return run  # type: ignore[no-any-return]

    def base_run_if_ready(self) -> GridRun | None:
        """The stored config's grid run if it has been computed already (starts it otherwise, never waits)."""
        state = self.base_state()
        return state.result if state.state == "done" else None

    def warm(self) -> None:
        """Start the stored config's grid run, so the first edit (and the overview's census) finds it ready."""
        try:
            self.start_base()
        except Exception:  # no grid (or no cluster) yet: nothing to warm, the first run says what is wrong
            log.warning("warming the stored config's grid run failed", exc_info=True)

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
