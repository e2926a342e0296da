"""The job and task state machines as data, and the checks every simulated move goes through.

The job machine is PanDA's (jedi-lifecycle.md §2, seed 003's job statuses); the task machine is JEDI's chart with the
command paths (``brokerage.sim.task_states``). The simulator moves jobs and tasks only through ``SimState.move_jobs``
and ``SimState.move_tasks`` (and the WatchDog's task rules through ``check_task_moves``): a move the tables do not
allow raises IllegalMove naming the entity, its id and both statuses.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise

import numpy as np

from brokerage.model.errors import SimulationError
from brokerage.sim.jobs import STATUSES
from brokerage.sim.task_states import is_allowed

# the simulator's job statuses (their codes are the job table's), then the one it does not simulate
JOB_STATUSES: tuple[str, ...] = (*STATUSES, "waiting")
JOB_CODE = {name: i for i, name in enumerate(JOB_STATUSES)}
FINAL_JOB = frozenset({"finished", "failed", "cancelled", "closed"})
# jobsActive4: a Watcher, Adder or transfer timeout may fail any of them (§2 "any active -> failed")
ACTIVE_JOB = frozenset({"activated", "throttled", "sent", "starting", "running", "holding", "transferring", "merging"})
JOB_BIRTHS = frozenset({"pending", "waiting"})  # insertNewJob: pending, a fake co-jumbo job waiting

# §2's table, one line per row: status -> the statuses its own triggers move it to
_JOB_CHART: dict[str, set[str]] = {
    "pending": {"defined"},  # JobGenerator's reassign_jobs -> resetDefinedJob
    "defined": {"activated", "assigned"},  # Setupper: no input to move / input to transfer
    "assigned": {"activated"},  # DDM callback on the _dis dataset, or datasetManager's activator
    "activated": {"sent", "throttled"},  # pilot getJob; user cap, task pause, paused-task WatchDog
    "throttled": {"activated"},  # unThrottleUserJobs, task resume
    "sent": {"starting", "running"},  # pilot updateJob
    "starting": {"running"},
    "running": {"holding"},  # the pilot reports its end
    "holding": {"finished", "failed", "transferring", "merging"},  # Adder
    "transferring": {"finished", "failed"},  # datasetManager finisher
    "merging": {"finished", "failed"},  # merge / event service jobs
}


def _build_jobs() -> dict[str, frozenset[str]]:
    table = {s: set(_JOB_CHART.get(s, ())) for s in JOB_STATUSES}
    for s in JOB_STATUSES:
        if s not in FINAL_JOB:
            table[s] |= {"closed", "cancelled"}  # killJob: any non-final job (codes §2.1)
        if s in ACTIVE_JOB:
            table[s].add("failed")
    return {s: frozenset(nxt) for s, nxt in table.items()}


JOB_TRANSITIONS: dict[str, frozenset[str]] = _build_jobs()
"""Job status -> the statuses it may change to (jedi-lifecycle.md §2); final statuses change no more."""

JOB_PAIRS: frozenset[tuple[str | None, str]] = frozenset(
    {(None, b) for b in JOB_BIRTHS} | {(a, b) for a, nxt in JOB_TRANSITIONS.items() for b in nxt}
)
_ALLOWED = np.zeros((len(JOB_STATUSES), len(JOB_STATUSES)), dtype=bool)
for _a, _b in JOB_PAIRS:
    if _a is not None:
        _ALLOWED[JOB_CODE[_a], JOB_CODE[_b]] = True

# Steps the simulator takes within one tick and records as one event, each hop an allowed pair: JobGenerator inserts
# pending, resets it to defined and the Setupper activates it (no input to move) in one cycle (§11.7); a pilot's
# getJob (sent) and its first updateJob (running) fall in one simulated minute.
GENERATED_VIA: tuple[str, ...] = ("pending", "defined")  # (new) -> activated
DISPATCHED_VIA: tuple[str, ...] = ("sent",)  # activated -> running


class IllegalMove(SimulationError, RuntimeError):
    """The simulator tried a move its state machines do not allow (a bug in an agent, never bad input)."""

    def __init__(self, entity: str, ids: Sequence[int], old: str | None, new: str, why: str = "") -> None:
        shown = ", ".join(str(i) for i in list(ids)[:5]) + (", …" if len(ids) > 5 else "")
        text = f"{entity} {shown}: {old or '(new)'} -> {new} is not an allowed {entity} transition"
        super().__init__(text + (f" ({why})" if why else ""))
        self.entity, self.ids, self.old, self.new = entity, list(ids), old, new


def job_path_allowed(path: Sequence[str | None]) -> bool:
    """Whether every hop of PATH (None first: a new job) is an allowed job transition.

    Usage: ``job_path_allowed([None, "pending", "defined", "activated"])``
    """
    return all((a, b) in JOB_PAIRS for a, b in pairwise(path))


def check_job_moves(old: np.ndarray, new: str, ids: np.ndarray, via: Sequence[str] = ()) -> None:
    """Raise IllegalMove unless every job of IDS may go from its status code in OLD to NEW through VIA.

    Usage: ``check_job_moves(jobs["jobStatus"][rows], "holding", jobs["PandaID"][rows])``
    """
    first = via[0] if via else new
    bad = ~_ALLOWED[old, JOB_CODE[first]] if len(old) else np.zeros(0, bool)
    if bad.any():
        code = int(old[bad][0])
        raise IllegalMove("job", ids[bad][old[bad] == code].tolist(), JOB_STATUSES[code], new,
                              f"via {', '.join(via)}" if via else "")  # fmt: skip
    if via and not job_path_allowed([*via, new]):
        raise IllegalMove("job", ids.tolist(), via[-1], new, f"via {', '.join(via)}")


def check_job_births(ids: np.ndarray, status: str, via: Sequence[str]) -> None:
    """Raise IllegalMove unless a new job may reach STATUS through VIA.

    Usage: ``check_job_births(pids, "activated", GENERATED_VIA)``
    """
    if len(ids) and not job_path_allowed([None, *via, status]):
        raise IllegalMove("job", ids.tolist(), None, status, f"via {', '.join(via)}")


def check_task_moves(moves: Iterable[tuple[int, str, str]], why: str = "") -> None:
    """Raise IllegalMove at the first (jediTaskID, from, to) of MOVES the task machine does not allow.

    Usage: ``check_task_moves([(42, "running", "prepared")])``
    """
    for tid, old, new in moves:
        if not is_allowed(old, new):
            raise IllegalMove("task", [int(tid)], old, new, why)
