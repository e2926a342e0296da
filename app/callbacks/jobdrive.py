"""One poll/cancel/start dispatch for the page callbacks that drive a long job (grid what-if, report, simulation)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dash.exceptions import PreventUpdate

from app.services.jobs import JobState

Outputs = tuple[Any, ...]


@dataclass(frozen=True)
class JobControls:
    """A page's job controls: the ids of its poll interval and Cancel button, and the service calls behind them."""

    poll_id: str
    cancel_id: str
    poll: Callable[[str], JobState]
    cancel: Callable[[str], None]


def drive_job(
    trigger: Any,
    job_id: str | None,
    controls: JobControls,
    *,
    show: Callable[[str | None, JobState], Outputs],
    start: Callable[[], Outputs],
    named: Callable[[], str | None],
) -> Outputs:
    """The callback's outputs for what TRIGGER fired: a poll tick shows the job's state, Cancel cancels it, anything
    else STARTs it. SHOW turns (job id, state) into outputs. NAMED gives the id of the job the page's current request
    names (None when it names none): a Cancel clicked before the starting request answered finds no job id in the
    page yet, and cancels that job, so the run it started does not go on.

    Usage: ``return drive_job(ctx.triggered_id, job_id, controls, show=outputs, start=begin, named=job_of_request)``
    """
    if trigger == controls.poll_id:
        if not job_id:
            raise PreventUpdate
        return show(job_id, controls.poll(job_id))
    if trigger == controls.cancel_id:
        job_id = job_id or named()
        if job_id:
            controls.cancel(job_id)
        return show(job_id, JobState("cancelled"))
    return start()
