"""JEDI task statuses and the transitions allowed between them (the chart plus the task commands)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from brokerage.model.errors import SimulationError
from brokerage.model.profiles import rule

# Reference §7.1, in the order of the seed's list; the last five come from commands and the data carousel.
TASK_STATUSES: tuple[str, ...] = (
    "registered", "defined", "assigning", "ready", "pending", "scouting", "scouted", "running", "prepared",
    "done", "failed", "finished", "aborting", "aborted", "finishing", "topreprocess", "preprocessing",
    "tobroken", "broken", "toretry", "toincexec", "rerefine", "paused", "throttled", "exhausted", "passed",
    "toabort", "toreassign", "reassigning", "staging", "staged",
)  # fmt: skip

# One line per status, paraphrasing the seed's "Transition of task status".
DESCRIPTIONS: dict[str, str] = {
    "registered": "the task was written into JEDI_TASKS",
    "defined": "every task parameter has been worked out",
    "assigning": "task brokerage is choosing where the task's output goes (its nucleus)",
    "ready": "jobs can be generated as soon as computing resources free up",
    "pending": "a temporary problem holds the task, e.g. no queue can take its jobs",
    "scouting": "a few scout jobs run first to measure the task's real needs",
    "scouted": "the scout jobs all succeeded",
    "running": "the task's jobs are being generated and run",
    "prepared": "processing is over; the final status is about to be decided",
    "done": "every input was processed successfully",
    "failed": "no input was processed successfully",
    "finished": "part of the input succeeded; the rest failed or was left when the task stopped",
    "aborting": "a kill command is being carried out",
    "aborted": "the task was killed",
    "finishing": "a finish command forces the task to wrap up",
    "topreprocess": "a preprocessing job is waiting to run",
    "preprocessing": "the preprocessing job is running",
    "tobroken": "the task is on its way to broken",
    "broken": "the task cannot run, e.g. its definition is wrong",
    "toretry": "a retry command arrived",
    "toincexec": "an incexec (incremental execution) command arrived",
    "rerefine": "the parameters are being changed for an incremental execution",
    "paused": "nothing happens until the task is resumed",
    "throttled": "job generation waits 120 x int(max attemptNr / 5)^2 minutes because attempts reached a multiple of 5",
    "exhausted": "retries ran out (or scouts looked wrong, or brokerage timed out); waits for an operator "
    "or a 10-day timeout",
    "passed": "after an operator's decision or the timeout, the task is about to get its final status",
    "toabort": "the kill is handed to the post-processor",
    "toreassign": "a reassign command arrived",
    "reassigning": "the task is being moved to another nucleus or queue",
    "staging": "input is being recalled from tape (data carousel)",
    "staged": "the tape recall is complete",
}

# Statuses in which JEDI stops working on the task by itself; only a command (retry, incexec) moves it on.
FINAL_STATUSES: frozenset[str] = frozenset({"done", "finished", "failed", "aborted", "broken"})

# kill/finish are refused in these (server command check, reference §7.3).
_NOT_KILLABLE = frozenset({"finished", "done", "prepared", "broken", "aborted", "toabort", "aborting", "failed"})
_NOT_PAUSABLE = frozenset({"finished", "failed", "done", "aborted", "broken", "paused"})
# Transient hand-over statuses of commands: pausing or finishing one of them would race the command itself.
_COMMAND_STEPS = frozenset(
    {"finishing", "passed", "tobroken", "toretry", "toincexec", "rerefine", "toreassign", "reassigning"}
)
KILLABLE: frozenset[str] = frozenset(TASK_STATUSES) - _NOT_KILLABLE
PAUSABLE: frozenset[str] = frozenset(TASK_STATUSES) - _NOT_PAUSABLE - _NOT_KILLABLE - _COMMAND_STEPS
FINISHABLE: frozenset[str] = KILLABLE - _COMMAND_STEPS
# pending keeps the old status and returns to it (JEDI's setOnHold); the chart draws these as two-way arrows.
PENDABLE: frozenset[str] = frozenset({"registered", "defined", "ready", "scouting", "running", "rerefine"})
REASSIGNABLE: frozenset[str] = frozenset(
    {"defined", "ready", "running", "scouting", "scouted", "pending", "assigning", "exhausted"}
)
# Statuses JEDI may write again while already in them: re-brokerage every 30 min (assigning), a new hold
# reason (pending), the avalanche command (scouting) and the throttle period being renewed (throttled).
REFRESHABLE: frozenset[str] = frozenset({"assigning", "pending", "scouting", "throttled"})
# Leaving paused by kill or finish is a command, not a resume: the task need not return to its old status first.
PAUSE_COMMAND_EXITS: frozenset[str] = frozenset({"aborting", "finishing"})

_CHART: dict[str, set[str]] = {
    "registered": {"topreprocess", "tobroken", "pending", "defined"},
    "topreprocess": {"preprocessing"},
    "preprocessing": {"registered", "tobroken"},
    "defined": {"pending", "ready", "assigning", "tobroken", "staging"},
    "assigning": {"ready", "exhausted"},
    # ready -> prepared: PostProcessor's prepareTasksToBeFinished also takes a ready task whose inputs are all done
    # (e.g. after an incexec brought no new input), reference §5.2 (jedi-lifecycle.md)
    "ready": {"pending", "assigning", "tobroken", "scouting", "running", "prepared"},
    "pending": set(PENDABLE) | {"finishing", "exhausted"},
    "scouting": {"tobroken", "pending", "scouted", "exhausted"},
    "scouted": {"running"},
    "running": {"pending", "throttled", "tobroken", "prepared", "exhausted"},
    "throttled": {"running"},
    "tobroken": {"broken"},
    "prepared": {"done", "finished", "failed", "exhausted"},
    # retry of an exhausted task back to its old status running or scouting, and incexec (the server's command
    # check accepts it from exhausted), reference §7.3
    "exhausted": {"finishing", "toretry", "passed", "running", "scouting", "toincexec"},
    "finishing": {"passed"},
    "passed": {"done", "finished", "failed"},
    "done": set(),
    "finished": set(),
    "failed": set(),
    "aborted": set(),
    "toretry": {"ready", "rerefine", "exhausted", "running", "done", "finished", "failed"},
    "toincexec": {"rerefine"},
    "rerefine": {"defined", "pending"},
    "aborting": {"toabort", "aborted"},
    "toabort": {"aborted"},
    "toreassign": {"reassigning"},
    "reassigning": {"assigning", "ready", "running", "scouting", "scouted", "defined", "pending", "exhausted"},
    "staging": {"staged"},
    "staged": {"assigning", "ready"},
    "paused": set(PAUSABLE),
    "broken": set(),
}


# Task retry, the one place both the task commands (brokerage.sim.commands) and the machine read: seed 003 "Tasks can
# be retried if they are in finished or exhausted state."; PanDA's server also accepts failed (switch
# retry_commands_as_jedi; done is refused, aborted too by the server's command check, reference §7.3). incexec is
# accepted from those and from done and aborted.
RETRY_FROM_SEED: frozenset[str] = frozenset({"finished", "exhausted"})
RETRY_FROM_CODE: frozenset[str] = frozenset({"finished", "failed", "exhausted"})
INCEXEC_FROM: frozenset[str] = RETRY_FROM_CODE | {"done", "aborted"}


def retry_from(config: object) -> frozenset[str]:
    """The statuses a retry command is accepted from under CONFIG's rule profile.

    Usage: ``"failed" in retry_from(Config({"RULES": "panda-1.0.4"}))``
    """
    return RETRY_FROM_CODE if rule(config, "retry_commands_as_jedi") else RETRY_FROM_SEED


def _build() -> dict[str, frozenset[str]]:
    table = {s: set(_CHART.get(s, ())) for s in TASK_STATUSES}
    for s in RETRY_FROM_SEED | RETRY_FROM_CODE:
        table[s].add("toretry")
    for s in INCEXEC_FROM:
        table[s].add("toincexec")
    for s in TASK_STATUSES:
        if s in KILLABLE:
            table[s].add("aborting")
        if s in FINISHABLE:
            table[s].add("finishing")
        if s in PAUSABLE:
            table[s].add("paused")
        if s in REASSIGNABLE:
            table[s].add("toreassign")
        if s in REFRESHABLE:
            table[s].add(s)
    return {s: frozenset(nxt) for s, nxt in table.items()}


TRANSITIONS: dict[str, frozenset[str]] = _build()
"""Status -> statuses it may change to: the official chart (reference §7.2), the code-enforced command paths
(§7.3: kill -> aborting -> [toabort ->] aborted, finish -> finishing -> passed, retry -> toretry -> ready,
incexec -> toincexec -> rerefine -> defined (also from exhausted), reassign -> toreassign -> reassigning,
pause/resume, retry of an exhausted task straight back to running or scouting), the seed's exhausted cases and the
data carousel (staging -> staged). The simulator's moves are checked against it (brokerage.sim.machines)."""

INITIAL_STATUS = "registered"

ALLOWED_PAIRS: frozenset[tuple[str | None, str]] = frozenset(
    {(None, INITIAL_STATUS)} | {(a, b) for a, nxt in TRANSITIONS.items() for b in nxt}
)


class TransitionError(SimulationError, ValueError):
    """A task status change (or a whole status log) breaks the transition rules; ``problems`` lists each one."""

    def __init__(self, message: str, problems: Sequence[str] | None = None) -> None:
        super().__init__(message)
        self.problems: list[str] = list(problems) if problems is not None else [message]


def allowed_next(old: str | None) -> frozenset[str]:
    """Statuses a task in OLD may change to (None: a new task, which must start as registered).

    Usage: ``"defined" in allowed_next("registered")``
    """
    if old is None:
        return frozenset({INITIAL_STATUS})
    return TRANSITIONS.get(old, frozenset())


def is_allowed(old: str | None, new: str) -> bool:
    """True if a task may go from OLD to NEW; None as OLD means the task is being created.

    Unknown statuses are never allowed. Repeating a status is allowed only for REFRESHABLE statuses.
    Usage: ``is_allowed("running", "prepared") and not is_allowed("done", "running")``
    """
    return (old, new) in ALLOWED_PAIRS


def describe_transition_error(old: str | None, new: str) -> str:
    """The sentence check_transition raises for a refused OLD -> NEW change.

    Usage: ``describe_transition_error("done", "running")``
    """
    if new not in DESCRIPTIONS:
        return f"unknown task status {new!r}; known statuses: {', '.join(TASK_STATUSES)}"
    if old is None:
        return f"a new task must start as {INITIAL_STATUS!r}, not {new!r}"
    if old not in DESCRIPTIONS:
        return f"unknown previous task status {old!r}; known statuses: {', '.join(TASK_STATUSES)}"
    nxt = ", ".join(sorted(TRANSITIONS[old])) or "none (it is final)"
    return f"task status {old!r} cannot change to {new!r}; allowed next statuses: {nxt}"


def check_transition(old: str | None, new: str) -> None:
    """Raise TransitionError naming OLD, NEW and the allowed next statuses unless OLD -> NEW is allowed.

    Usage: ``check_transition("ready", "scouting")``
    """
    if not is_allowed(old, new):
        raise TransitionError(describe_transition_error(old, new))


def history_problems(statuses: Iterable[str], label: str = "task") -> list[str]:
    """Every problem in one task's status sequence (oldest first), as sentences; empty if the log is valid.

    Beyond the pairwise rule, a resume must return to the status the task had before it was paused (a kill or
    finish of a paused task is no resume).
    Usage: ``history_problems(["registered", "defined", "paused", "defined"]) == []``
    """
    problems = []
    seq = list(statuses)
    prev: str | None = None
    for i, status in enumerate(seq):
        if not is_allowed(prev, status):
            problems.append(f"{label} entry {i}: {describe_transition_error(prev, status)}")
        elif prev == "paused" and i >= 2 and status != seq[i - 2] and status not in PAUSE_COMMAND_EXITS:
            problems.append(
                f"{label} entry {i}: a resumed task returns to {seq[i - 2]!r}, the status it was paused in, "
                f"not {status!r}"
            )
        prev = status
    return problems


def check_history(statuses: Iterable[str], label: str = "task") -> None:
    """Raise TransitionError listing every problem of a status sequence (see history_problems).

    Usage: ``check_history(["registered", "defined", "ready"])``
    """
    problems = history_problems(statuses, label)
    if problems:
        raise TransitionError(f"{len(problems)} illegal status change(s): {problems[0]}", problems)
