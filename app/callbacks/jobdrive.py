"""One poll/cancel/start dispatch for the page callbacks that drive a long job (grid what-if, report, simulation)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dash import ctx
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


def fired() -> list[Any]:
    """The ids of every input that fired this callback call. Dash merges the requests of one callback made before
    the first is sent (a poll tick and a Cancel click) into one call that fired both, and ``ctx.triggered_id``
    names only one of them.

    Usage: ``drive_job(fired(), job_id, controls, ...)``
    """
    return list(ctx.triggered_prop_ids.values()) or [ctx.triggered_id]


def drive_job(
    trigger: Any,
    job_id: str | None,
    controls: JobControls,
    *,
    show: Callable[[str | None, JobState], Outputs],
    start: Callable[[], Outputs],
    named: Callable[[], str | None],
) -> Outputs:
    """The callback's outputs for what TRIGGER fired (an input id, or the list ``fired`` gives): Cancel cancels the
    job, whatever fired with it; a poll tick alone shows the job's state; anything else STARTs it (a new edit that
    fired with a tick is not lost). SHOW turns (job id, state) into outputs. NAMED gives the id of the job the
    page's current request names (None when it names none): a Cancel clicked before the starting request answered
    finds no job id in the page yet, and cancels that job, so the run it started does not go on.

    Usage: ``return drive_job(fired(), job_id, controls, show=outputs, start=begin, named=job_of_request)``
    """
    ids = trigger if isinstance(trigger, list) else [trigger]
    if controls.cancel_id in ids:
        job_id = job_id or named()
        if job_id:
            controls.cancel(job_id)
        return show(job_id, JobState("cancelled"))
    if all(i == controls.poll_id for i in ids):
        if not job_id:
            raise PreventUpdate
        return show(job_id, controls.poll(job_id))
    return start()
