"""Task commands on a simulated grid (seed 003, reference §4.6, §6): kill, finish, retry, incexec, pause, resume, reassign."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from brokerage.model.errors import SimulationError
from brokerage.sim.jobs import FINAL, UNDISPATCHED, S
from brokerage.sim.propagate import end_jobs
from brokerage.sim.state import TICK_S, SimState
from brokerage.sim.task_states import (
    FINISHABLE,
    INCEXEC_FROM,
    KILLABLE,
    PAUSABLE,
    REASSIGNABLE,
    RETRY_FROM_CODE,
    is_allowed,
    retry_from,
)  # fmt: skip
from brokerage.sim.watchdog import throttle_paused

# retry and incexec: the task machine's lists (brokerage.sim.task_states, one place); retry's depends on the profile
RETRYABLE = RETRY_FROM_CODE
INCEXECABLE = INCEXEC_FROM
RETRY_EXTRA_ATTEMPTS = 5  # a retry gives files at their limit 5 more attempts (and failures)
ALLOWED: dict[str, frozenset[str]] = {
    "kill": KILLABLE, "finish": FINISHABLE, "pause": PAUSABLE, "resume": frozenset({"paused"}),
    "retry": RETRYABLE, "incexec": INCEXECABLE, "reassign": REASSIGNABLE,
}  # fmt: skip
COMMANDS = tuple(ALLOWED)
_SPEC = re.compile(r"^(?P<h>\d+(\.\d+)?)h:(?P<tid>\d+):(?P<cmd>[a-z]+)$")


class CommandRefused(SimulationError, ValueError):
    """A task command the task's status does not allow, or a malformed command; the message names the rule."""


@dataclass(frozen=True)
class TaskCommand:
    """A command for one task at a simulated time (seconds from the run's start)."""

    at_s: float
    task: int
    command: str


def parse_command(spec: str) -> TaskCommand:
    """``<hours>h:<jediTaskID>:<command>`` as given to ``brokerage simulate --task-command``.

    Usage: ``parse_command("2h:1234:pause")``
    """
    m = _SPEC.match(spec.strip())
    if m is None:
        raise CommandRefused(f"--task-command: {spec!r} is not HOURSh:TASK:COMMAND, e.g. 2h:1234:pause")
    if m["cmd"] not in ALLOWED:
        raise CommandRefused(
            f"--task-command: {m['cmd']!r} is not a task command; expected one of {', '.join(COMMANDS)}"
        )
    return TaskCommand(float(m["h"]) * 3600.0, int(m["tid"]), m["cmd"])


def parse_commands(
    specs: Sequence[str], hours: float, tasks: Collection[int] | None = None, field: str = "--task-command"
) -> list[TaskCommand]:
    """SPECS parsed, each within the run's HOURS and, when TASKS is given, naming one of them; CommandRefused names
    FIELD and the first bad one.

    Usage: ``parse_commands(["2h:1234:pause"], 6, set(snap.tables["tasks"]["jeditaskid"]))``
    """
    out = []
    for spec in specs:
        try:
            cmd = parse_command(spec)
        except CommandRefused as exc:
            raise CommandRefused(str(exc).replace("--task-command", field)) from exc
        if cmd.at_s >= hours * 3600:
            raise CommandRefused(f"{field}: {cmd.at_s / 3600:g}h is not within the {hours:g} simulated hours")
        if tasks is not None and cmd.task not in tasks:
            raise CommandRefused(f"{field}: task {cmd.task} is not a task of the grid")
        out.append(cmd)
    return out


def tick(state: SimState, now: float) -> None:
    """TaskCommando: the commands due in this tick (``state.todo_commands``, by time) are applied; each outcome is
    kept (time, task, command, applied or refused, the sentence of its cause or its rule).

    Usage: ``commands.tick(state, state.now)``
    """
    todo = state.todo_commands
    while todo and todo[0].at_s < now + TICK_S:
        cmd = todo.pop(0)
        try:
            why = apply(state, cmd)
        except CommandRefused as exc:
            state.commands.append((now, cmd.task, cmd.command, "refused", str(exc)))
            continue
        state.commands.append((now, cmd.task, cmd.command, "applied", why))


def apply(sim: SimState, cmd: TaskCommand) -> str:
    """Carry out CMD on SIM now; the sentence logged as its cause. CommandRefused when the task is unknown or its
    status does not allow the command (the rule of ``brokerage.sim.task_states``).

    Usage: ``apply(sim, TaskCommand(0.0, 1234, "pause"))``
    """
    t = sim.tasks
    if cmd.task not in t.index:
        raise CommandRefused(f"task {cmd.task}: not a task of the simulated grid")
    status = str(t.at[cmd.task, "status"])
    allowed_from = retry_from(sim.config) if cmd.command == "retry" else ALLOWED[cmd.command]
    if status not in allowed_from:
        allowed = ", ".join(sorted(allowed_from))
        raise CommandRefused(
            f"task {cmd.task}: {cmd.command} is not allowed in status {status} (allowed from: {allowed})"
        )
    return _DO[cmd.command](sim, cmd.task, status)


def _move(sim: SimState, tid: int, *steps: str, why: str) -> None:
    for new in steps:
        sim.move_tasks(pd.Index([tid]), new, why)


def _task_jobs(sim: SimState, tid: int, statuses: list[int] | np.ndarray) -> np.ndarray:
    rows = sim.live[sim.jobs["jediTaskID"][sim.live] == tid]
    return rows[np.isin(sim.jobs["jobStatus"][rows], statuses)]


def _kill(sim: SimState, tid: int, status: str) -> str:
    rows = _task_jobs(sim, tid, [s for s in range(len(S)) if s not in FINAL])
    sim.jobs.cols["errorCode"][rows] = 9  # killed by the task's command
    sim.log.add(sim.now, sim.jobs["PandaID"][rows], "-", "cancelled", "command", np.full(len(rows), 9.0))
    end_jobs(sim, rows, "cancelled")
    why = f"command kill: {len(rows)} jobs cancelled"
    _move(sim, tid, "aborting", "aborted", why=why)
    return why


def _finish(sim: SimState, tid: int, status: str) -> str:
    why = "command finish: no new jobs, queued ones killed (code 52); running ones end, then the final status"
    _move(sim, tid, "finishing", why=why)
    return why


def _pause(sim: SimState, tid: int, status: str) -> str:
    why = f"command pause in {status}: no new jobs, activated ones throttled"
    _move(sim, tid, "paused", why=why)  # the task keeps its old status to resume to
    throttle_paused(sim, sim.now)
    return why


def _resume(sim: SimState, tid: int, status: str) -> str:
    back = str(sim.tasks.at[tid, "oldStatus"])
    if not is_allowed(status, back):  # paused in the snapshot: the status it was paused in is not known
        raise CommandRefused(f"task {tid}: resume needs the status the task was paused in, which the snapshot "
                             f"does not hold (oldStatus {back})")  # fmt: skip
    rows = _task_jobs(sim, tid, [S["throttled"]])
    sim.log.add(sim.now, sim.jobs["PandaID"][rows], "throttled", "activated", "command", np.zeros(len(rows)))
    sim.move_jobs(rows, "activated")
    why = f"command resume: back to {back}, {len(rows)} throttled jobs activated"
    _move(sim, tid, back, why=why)
    return why


def _retry(sim: SimState, tid: int, status: str) -> str:
    t = sim.tasks
    if status == "exhausted" and t.at[tid, "oldStatus"] in ("running", "scouting"):
        old = str(t.at[tid, "oldStatus"])
        back = "running" if old == "scouting" and tid in sim.scouted else old  # scouts already assessed: running
        why = f"command retry of an exhausted task: back to {back}"
        _move(sim, tid, back, why=why)
        t.at[tid, "frozenTime"] = np.nan
        return why
    revived = _revive_failed(sim, tid)
    why = f"command retry: {revived} failed inputs get {RETRY_EXTRA_ATTEMPTS} more attempts"
    _move(sim, tid, "toretry", "ready", why=why)
    t.at[tid, "currentPriority"] = t.at[tid, "taskPriority"]
    return why


def _incexec(sim: SimState, tid: int, status: str) -> str:
    revived = _revive_failed(sim, tid)
    why = f"command incexec: re-refined, {revived} failed inputs to run again"
    _move(sim, tid, "toincexec", "rerefine", "defined", why=why)
    return why


def _revive_failed(sim: SimState, tid: int) -> int:
    """Files of TID at their attempt or failure limit get RETRY_EXTRA_ATTEMPTS more and go back to ready."""
    f = sim.files
    dead = np.flatnonzero((f.task == tid) & (f.status == f.FAILED))
    f.maxAttempt[dead] += RETRY_EXTRA_ATTEMPTS
    f.maxFailure[dead] += RETRY_EXTRA_ATTEMPTS
    f.status[dead] = f.READY
    sim.retry_pool.setdefault(tid, []).extend(dead.tolist())
    sim.tasks.at[tid, "nFilesFailed"] = int(sim.tasks.at[tid, "nFilesFailed"]) - len(dead)
    return len(dead)


def _reassign(sim: SimState, tid: int, status: str) -> str:
    rows = _task_jobs(sim, tid, UNDISPATCHED)
    sim.jobs.cols["errorCode"][rows] = 51
    sim.log.add(sim.now, sim.jobs["PandaID"][rows], "-", "closed", "command", np.full(len(rows), 51.0))
    end_jobs(sim, rows, "closed")
    sim.forget_brokerage(tid)
    why = f"command reassign: {len(rows)} queued jobs closed (code 51) to be brokered again"
    _move(sim, tid, "toreassign", "reassigning", status, why=why)
    return why


_DO = {"kill": _kill, "finish": _finish, "pause": _pause, "resume": _resume, "retry": _retry, "incexec": _incexec,
       "reassign": _reassign}  # fmt: skip
