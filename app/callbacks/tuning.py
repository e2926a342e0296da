"""Tuning page callbacks: edits → validated overrides → re-ranked task and grid impact; save, restore, reports."""

from __future__ import annotations

import logging
from typing import Any

from dash import Input, Output, Patch, State, callback, clientside_callback, ctx, html, no_update
from dash.exceptions import PreventUpdate

from app import ids
from app.callbacks.jobdrive import JobControls, drive_job, fired
from app.components.layout import error_alert, failure_alert
from app.components.tuning import edit_summary, grid_impact_view, grid_placeholder, task_diff_view
from app.components.tuning_store import diff_table
from app.main import services
from app.services import GridWhatIf, JobsBusy, JobState, Outcome
from app.services.admin import NoDatabaseError
from app.services.roles import client_address
from app.viewmodels import queues as qvm
from app.viewmodels import tuning as vm

log = logging.getLogger(__name__)

RAW = Input(ids.TUNE_RAW, "data")


def edits_of(raw: dict[str, Any] | None) -> vm.Edits:
    """The operator's raw edits checked against the stored config: valid overrides and refusals."""
    return services.whatif.edits(raw)


# The editor's rows become {key: value} for every value that differs from the stored one, in the browser
# (vm.raw_from_rows is the same rule in Python); every what-if callback reads that store.
clientside_callback(
    """
    function(changed, rows) {
        if (!rows) { return window.dash_clientside.no_update; }
        const raw = {};
        for (const r of rows) {
            const v = r.value;
            const same = v === r.stored || (v !== null && r.stored !== null && String(v) === String(r.stored));
            // an emptied box is "" and a number the grid cannot hold (1e999) its text: the server refuses both
            if (!same) { raw[r.key] = v == null ? "" : (typeof v === "number" && !isFinite(v) ? String(v) : v); }
        }
        return raw;
    }
    """,
    Output(ids.TUNE_RAW, "data"),
    Input(ids.TUNE_EDITOR, "cellValueChanged"),
    State(ids.TUNE_EDITOR, "rowData"),
    prevent_initial_call=True,
)


@callback(
    Output(ids.TUNE_EDITOR, "rowTransaction"),
    Output(ids.TUNE_EDIT_SUMMARY, "children"),
    Output(ids.TUNE_PERMALINK, "href"),
    Output(ids.TUNE_SIM_LINK, "href"),
    Input(ids.TUNE_GRID_TRIGGER, "data"),
    State(ids.TUNE_TASK, "value"),
    State(ids.TUNE_EDITOR, "rowData"),
)
def update_edits(
    raw: dict[str, Any] | None, task: Any, shown_rows: list[dict[str, Any]] | None = None
) -> tuple[Any, ...]:
    """Refuse invalid values inline (with the allowed range), mark edited rows, and keep the permalink current.

    Runs after the task view (it follows the edits the task view passes on), so the re-ranking paints first.
    """
    config = services.state.config()
    edits = edits_of(raw)
    rows = vm.editor_rows(config, raw or {}, edits)
    # only rows whose flags changed are sent: redrawing all 80 rows costs the browser more than the round trip
    before = {r["key"]: (r.get("edited"), r.get("error")) for r in shown_rows or []}
    changed = [r for r in rows if before.get(r["key"]) != (r["edited"], r["error"])]
    return (
        {"update": changed} if changed else no_update,
        edit_summary(edits.overrides, edits.errors, config),
        vm.permalink(qvm.parse_task(task), edits.overrides),
        vm.simulation_link(edits.overrides),
    )


@callback(Output(ids.TUNE_EDITOR, "dashGridOptions"), Input(ids.TUNE_SEARCH, "value"), prevent_initial_call=True)
def search_params(text: str | None) -> Patch:
    """Filter the editor's rows by any text in any column."""
    patch = Patch()
    patch["quickFilterText"] = text or ""
    return patch


# The permalink is mirrored into the address bar (no reload) and into the copy button.
clientside_callback(
    """
    function(href) {
        if (!href) { return [window.dash_clientside.no_update, window.dash_clientside.no_update]; }
        const kept = window.gridUrlState ? window.gridUrlState.keep(href) : href;  // the tables' filters stay
        window.history.replaceState(window.history.state, "", kept);
        return [href, window.location.origin + kept];
    }
    """,
    Output(ids.TUNE_URL_SINK, "data"),
    Output(ids.TUNE_COPY, "content"),
    Input(ids.TUNE_PERMALINK, "href"),
)


@callback(
    Output(ids.TUNE_EDITOR, "rowData"),
    Output(ids.TUNE_RAW, "data", allow_duplicate=True),
    Input(ids.TUNE_RESET, "n_clicks"),
    prevent_initial_call=True,
)
def reset_edits(n_clicks: int | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Put every value back to the stored one."""
    if not n_clicks:
        raise PreventUpdate
    return vm.editor_rows(services.state.config(), {}, vm.Edits({}, {})), {}


def task_view(task: Any, overrides: dict[str, Any]) -> Any:
    """Before/after of the task's nucleus brokerage (when it still needs a nucleus) and of its job brokerage."""
    tid = qvm.parse_task(task)
    if tid is None:
        return html.Div("Pick a task to compare its ranking before and after the edits.", className="text-muted small")
    w = services.whatif.task(tid, overrides)
    parts = [task_diff_view(w.nucleus, "Task brokerage (nucleus)")] if w.nucleus is not None else []
    parts.append(task_diff_view(w.jobs, f"Job brokerage ({w.jobs.broker})"))
    return html.Div(parts, id="tune-task-diff", **{"data-task": str(tid), "data-config": w.config})


@callback(Output(ids.TUNE_TASK, "value"), Input(ids.TUNE_PICK, "data"))
def on_tuning_load(picked: int | None) -> int | None:
    """On the page's first load: start warming the stored config's grid run; the task is the URL's, or when it
    names none a showcase task."""
    services.whatif.warm()
    return picked if picked is not None else services.whatif.showcase_task("jobs")


@callback(
    Output(ids.TUNE_TASK_VIEW, "children"), Output(ids.TUNE_GRID_TRIGGER, "data"), RAW, Input(ids.TUNE_TASK, "value")
)
def update_task_view(raw: dict[str, Any] | None, task: Any) -> tuple[Any, Any]:
    """Re-rank the picked task under the valid edits, next to its ranking under the stored config; then hand the
    edits on to the whole-grid job, which starts only once this view is answered (the interactive part goes first)."""
    try:
        view = task_view(task, edits_of(raw).overrides)
    except Exception as exc:  # error boundary: say what failed inline
        log.exception("what-if of task %s failed", task)
        view = error_alert("What-if of the task", exc)
    return view, raw or {}


def grid_result_view(g: GridWhatIf, overrides: dict[str, Any]) -> Any:
    """The whole-grid impact of a finished what-if job: counts, loads, criteria and the moved tasks (each linked to
    the tuning page with OVERRIDES and that task)."""
    link = vm.permalink(None, overrides)
    view = grid_impact_view(
        g.impact, g.names, g.seconds, g.recomputed, g.reused, link + ("&" if "?" in link else "?") + "task=", g.moved
    )
    return html.Div(view, id="tune-grid-impact", **{"data-config": g.config})


def grid_waiting_view(state: JobState, overrides: dict[str, Any]) -> html.Div:
    """The grid card while the whole-grid job for OVERRIDES waits for a worker or runs: its edits and its place."""
    edits = ", ".join(f"{k}={v}" for k, v in sorted(overrides.items()))
    where = state.label or "waiting for a worker"
    doing = "Waiting its turn" if state.percent == 0 else f"Re-brokering every waiting task ({state.percent} %)"
    return html.Div([html.Span(f"{doing} under {edits}: ", className="small"), html.Strong(where, className="small")],
                    id="tune-grid-waiting", className="alert alert-info py-1 mb-0")  # fmt: skip


def grid_view(overrides: dict[str, Any]) -> Any:
    """Re-broker every waiting task under the edits and show what moved, waiting for the job (placeholder when
    nothing is edited)."""
    if not overrides:
        return grid_placeholder()
    return grid_result_view(services.whatif.grid(overrides, client_address()), overrides)


# the request that starts the whole-grid job waits this long for it: a demo-sized run (under a second) is answered
# at once, without a poll round trip; a longer one shows its progress bar and is polled
GRID_FIRST_WAIT_S = 1.0
_SHOW = {"display": "flex"}
_HIDE = {"display": "none"}


def job_outputs(
    job_id: str | None, state: JobState, overrides: dict[str, Any] | None = None
) -> tuple[Any, Any, bool, dict[str, str], int, str]:
    """(grid view, job id, poll disabled, progress box style, progress value, label) for a job's STATE; while it
    runs or waits its turn, the card says so with its place in the queue (never "No edits yet" or a stale answer)."""
    if state.state == "running":
        view = grid_waiting_view(state, overrides) if overrides else no_update
        return view, job_id, False, _SHOW, state.percent, state.label
    if state.state == "done":
        return grid_result_view(state.result, overrides or {}), None, True, _HIDE, 100, ""
    if state.state == "cancelled":
        note = html.Div("Whole-grid run cancelled: edit a value to start it again.", className="small text-muted")
        return note, None, True, _HIDE, 0, ""
    return failure_alert("Whole-grid what-if", state.error or state.state), None, True, _HIDE, 0, ""


@callback(
    Output(ids.TUNE_GRID_VIEW, "children"),
    Output(ids.TUNE_GRID_JOB, "data"),
    Output(ids.TUNE_GRID_POLL, "disabled"),
    Output("tune-grid-progress-box", "style"),
    Output(ids.TUNE_GRID_PROGRESS, "value"),
    Output(ids.TUNE_GRID_PROGRESS, "label"),
    Input(ids.TUNE_GRID_TRIGGER, "data"),
    Input(ids.TUNE_GRID_POLL, "n_intervals"),
    Input(ids.TUNE_GRID_CANCEL, "n_clicks"),
    State(ids.TUNE_GRID_JOB, "data"),
)
def drive_grid_job(
    raw: dict[str, Any] | None, _tick: int | None, _cancel: int | None, job_id: str | None
) -> tuple[Any, Any, bool, dict[str, str], int, str]:
    """The whole-grid impact as a job on the Dask cluster: started by new edits, polled while it runs (on any
    server process: its state lives on the scheduler), cancellable; it waits its turn among the long jobs."""
    overrides = edits_of(raw).overrides
    controls = JobControls(ids.TUNE_GRID_POLL, ids.TUNE_GRID_CANCEL, services.jobs.poll, services.jobs.cancel)
    return drive_job(  # type: ignore[return-value]
        fired(), job_id, controls,
        show=lambda jid, state: job_outputs(jid, state, overrides),
        start=lambda: start_grid_job(overrides),
        named=lambda: services.whatif.grid_job_id(overrides) if overrides else None,
    )  # fmt: skip


def start_grid_job(overrides: dict[str, Any]) -> tuple[Any, Any, bool, dict[str, str], int, str]:
    """Start (or join) the whole-grid job of OVERRIDES and wait a moment for it (placeholder when nothing is edited);
    a full queue or a failure is said in the card."""
    try:
        if not overrides:
            return grid_placeholder(), None, True, _HIDE, 0, ""
        job_id, state = services.whatif.start_grid(overrides, client_address())
        if state.state == "running":
            state = services.jobs.wait(job_id, GRID_FIRST_WAIT_S)
    except JobsBusy as exc:
        return html.Div(str(exc), className="text-danger small"), None, True, _HIDE, 0, ""
    except Exception as exc:
        log.exception("grid what-if failed to start")
        return error_alert("Whole-grid what-if", exc), None, True, _HIDE, 0, ""
    return job_outputs(job_id, state, overrides)


# ---------------------------------------------------------------- save, history, restore


_ALERT = {
    "success": "alert alert-success py-1 small mb-0",
    "refused": "alert alert-danger py-1 small mb-0",
    "warning": "alert alert-warning py-1 small mb-0",
    "note": "small text-muted",
}


def outcome_view(outcome: Outcome) -> tuple[Any, str | None]:
    """A save or restore outcome as (message, redirect or None)."""
    extra = {"id": "tune-save-refused"} if outcome.role_refused else {}
    return html.Div(outcome.message, className=_ALERT[outcome.level], **extra), outcome.redirect


def save_edits(
    overrides: dict[str, Any], user: str | None, secret: str | None, comment: str | None, base: int | None
) -> tuple[Any, str | None]:
    """Store OVERRIDES as a new version if USER holds the operator role; return (message, redirect or None)."""
    try:
        return outcome_view(services.admin.save(overrides, user, secret, comment, base))
    except NoDatabaseError as exc:
        return error_alert("Save", exc), None


def save_raw(
    raw: dict[str, Any], user: str | None, secret: str | None, comment: str | None, base: int | None
) -> tuple[Any, str | None]:
    """Save the editor's raw edits, refusing the whole set while any edit is invalid."""
    try:
        return outcome_view(services.admin.save_raw(raw, user, secret, comment, base))
    except NoDatabaseError as exc:
        return error_alert("Save", exc), None


def restore(version: int | None, user: str | None, secret: str | None, comment: str = "") -> tuple[Any, str | None]:
    """Make VERSION's values current again (operator role required); return (message, redirect or None)."""
    if not services.admin.can_save() or version is None:
        raise PreventUpdate
    return outcome_view(services.admin.restore(int(version), user, secret, comment))


def keep_task(redirect: str | None, task: Any) -> str | None:
    """REDIRECT with the page's task kept, so a save or restore comes back to the task the operator was on."""
    tid = qvm.parse_task(task)
    if not redirect or tid is None:
        return redirect
    return f"{redirect}{'&' if '?' in redirect else '?'}task={tid}"


@callback(
    Output(ids.TUNE_RESTORE_BOX, "style"),
    Output(ids.TUNE_RESTORE_PROMPT, "children"),
    Input(ids.TUNE_RESTORE, "n_clicks"),
    Input(ids.TUNE_RESTORE_BACK, "n_clicks"),
    State(ids.TUNE_DIFF_A, "value"),
    prevent_initial_call=True,
)
def on_restore_ask(_ask: int | None, _back: int | None, version: int | None) -> tuple[dict[str, str], str]:
    """A restore first asks for confirmation and a comment; Cancel closes the question."""
    if ctx.triggered_id == ids.TUNE_RESTORE_BACK or version is None:
        return {"display": "none"}, ""
    return {"display": "block"}, f"Restore version {version}'s values as a new version?"


@callback(Output(ids.TUNE_RESTORE_CONFIRM, "disabled"), Input(ids.TUNE_RESTORE_COMMENT, "value"))
def on_restore_comment(comment: str | None) -> bool:
    """The restore is confirmed only with a comment saying why."""
    return not (comment or "").strip()


@callback(
    Output(ids.TUNE_SAVE_RESULT, "children"),
    Output(ids.TUNE_REDIRECT, "href"),
    Input(ids.TUNE_SAVE, "n_clicks"),
    Input(ids.TUNE_RESTORE_CONFIRM, "n_clicks"),
    State(ids.TUNE_RAW, "data"),
    State(ids.TUNE_SAVE_USER, "value"),
    State(ids.TUNE_SAVE_SECRET, "value"),
    State(ids.TUNE_SAVE_COMMENT, "value"),
    State(ids.TUNE_BASE_VERSION, "data"),
    State(ids.TUNE_DIFF_A, "value"),
    State(ids.TUNE_RESTORE_COMMENT, "value"),
    State(ids.TUNE_TASK, "value"),
    prevent_initial_call=True,
)
def on_save_or_restore(
    save_clicks: int | None,
    restore_clicks: int | None,
    raw: dict[str, Any] | None,
    user: str | None,
    secret: str | None,
    comment: str | None,
    base: int | None,
    version_a: int | None,
    restore_comment: str | None = None,
    task: Any = None,
) -> tuple[Any, Any]:
    """Save the edits or restore version A (confirmed, with a comment), each only for operators; the task stays."""
    try:
        if ctx.triggered_id == ids.TUNE_RESTORE_CONFIRM:
            if not (restore_comment or "").strip():
                raise PreventUpdate
            msg, to = restore(version_a, user, secret, restore_comment or "")
        else:
            msg, to = save_raw(raw or {}, user, secret, comment, base)
    except PreventUpdate:
        raise
    except Exception as exc:
        log.exception("saving gdpconfig failed")
        return error_alert("Save", exc), no_update
    return msg, keep_task(to, task) or no_update


@callback(Output(ids.TUNE_DIFF_VIEW, "children"), Input(ids.TUNE_DIFF_A, "value"), Input(ids.TUNE_DIFF_B, "value"))
def update_version_diff(a: int | None, b: int | None) -> Any:
    """Keys that differ between the two picked versions."""
    if not services.admin.can_save() or a is None or b is None:
        raise PreventUpdate
    try:
        return diff_table(services.admin.diff_rows(a, b))
    except Exception as exc:
        return error_alert("Version diff", exc)
