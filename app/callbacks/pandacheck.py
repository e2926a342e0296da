"""Task page: PanDA 1.0.4's own brokers on the task, compared with ours, as a job started when the page opens."""

from __future__ import annotations

import logging
from typing import Any

from dash import Input, Output, State, callback, html
from dash.exceptions import PreventUpdate

from app import ids
from app import ids_pandacheck as pids
from app.callbacks.jobdrive import JobControls, drive_job, fired
from app.components.layout import error_alert
from app.components.pandacheck import HIDDEN, SHOWN, missing_view, running_line, verdict_view
from app.main import services
from app.services.jobs import JobState
from brokerage.crosscheck.panda import PandaMissing

log = logging.getLogger(__name__)

Outputs = tuple[Any, ...]  # body, status line, job id, poll disabled, Cancel style, Run again style


def outputs(task_id: Any, job_id: str | None, state: JobState) -> Outputs:
    """The panel for a job's STATE: a status line while it runs, the verdict when done, an inline error else."""
    if state.state == "running":
        return html.Div(), running_line(task_id, state.label), job_id, False, SHOWN, HIDDEN
    if state.state == "done":
        return verdict_view(state.result), "", None, True, HIDDEN, HIDDEN
    if state.state == "cancelled":
        return html.Div("Cancelled.", className="small text-muted"), "", None, True, HIDDEN, SHOWN
    return (
        error_alert("PanDA 1.0.4 crosscheck", RuntimeError(state.error or state.state)),
        "",
        None,
        True,
        HIDDEN,
        SHOWN,
    )


def start_check(task_id: Any) -> Outputs:
    """The cached verdict, or the job started (or joined); PanDA missing or an unknown task said inline."""
    if task_id is None:
        raise PreventUpdate
    try:
        job_id, state = services.crosschecks.start(int(task_id))
    except PandaMissing as exc:
        return missing_view(str(exc)), "", None, True, HIDDEN, HIDDEN
    except Exception as exc:  # an unknown task, a cluster that cannot be reached: said inline, never a traceback
        log.exception("PanDA crosscheck of task %s failed to start", task_id)
        return error_alert("PanDA 1.0.4 crosscheck", exc), "", None, True, HIDDEN, SHOWN
    return outputs(task_id, job_id, state)


def named_check(task_id: Any) -> str | None:
    """The crosscheck job the page's task names (Cancel before the start answered), or None without a task."""
    if task_id is None:
        return None
    return services.crosschecks.job_id(services.crosschecks.key(int(task_id)))


@callback(
    Output(pids.PANDA_BODY, "children"),
    Output(pids.PANDA_STATUS, "children"),
    Output(pids.PANDA_JOB, "data"),
    Output(pids.PANDA_POLL, "disabled"),
    Output(pids.PANDA_CANCEL, "style"),
    Output(pids.PANDA_RUN, "style"),
    Input(ids.TASK_ID, "data"),
    Input(pids.PANDA_POLL, "n_intervals"),
    Input(pids.PANDA_CANCEL, "n_clicks"),
    Input(pids.PANDA_RUN, "n_clicks"),
    State(pids.PANDA_JOB, "data"),
)
def drive_panda_check(
    task_id: int | None, _tick: int | None, _cancel: int | None, _run: int | None, job_id: str | None
) -> Outputs:
    """Start the task's crosscheck when the page opens (or Run again), poll it, or cancel it."""
    checks = services.crosschecks
    controls = JobControls(pids.PANDA_POLL, pids.PANDA_CANCEL, checks.poll, checks.cancel)
    try:
        return drive_job(
            fired(), job_id, controls,
            show=lambda jid, state: outputs(task_id, jid, state),
            start=lambda: start_check(task_id),
            named=lambda: named_check(task_id),
        )  # fmt: skip
    except PreventUpdate:
        raise
    except Exception as exc:  # a poll that cannot reach the cluster: said inline
        log.exception("PanDA crosscheck poll failed")
        return error_alert("PanDA 1.0.4 crosscheck", exc), "", None, True, HIDDEN, SHOWN
