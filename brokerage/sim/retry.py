"""The retry module and the memory increase on retry (jedi-lifecycle.md §4.3-§4.4): what a failed job's error does."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

RAM_LADDER_MB = (1000, 2000, 3000, 4000, 6000, 8000)  # increaseRamLimitJobJEDI's steps (MB, per core for MBPerCore)
RAM_LIMIT_MB = RAM_LADDER_MB[-1]
MEMORY_COMPENSATION = 0.9  # minRamCount = int(ram x 0.9); decompensate divides by it
WHOLE_TASK_FRACTION = 0.3  # more than 30 % of the inputs above the task's ramCount: the task's ramCount goes up
INCREASE_ACTIONS = ("increase_memory", "increase_memory_xtimes", "increase_cputime", "reduce_input_per_job")
LIMIT_ACTIONS = ("limit_retry", "no_retry")
SOURCES = ("pilot", "exe", "ddm", "jobdispatcher", "taskbuffer", "sup")
SOURCE_CODE = {name: i + 1 for i, name in enumerate(SOURCES)}  # errorSource codes of the job table (0: no error)
# pilot error codes the simulator's failure model produces (pilot3 ErrorCodes)
PAYLOADEXCEEDMAXMEM, STAGEINFAILED, TRANSFORM_FAILED, REACHEDMAXTIME = 1235, 1099, 65, 1213
CPUTIME_MARGIN, CPUTIME_SAFETY = 1.5, 1.1  # initialize_cpu_time_task's factors
LOST_HEARTBEAT = 100  # jobDispatcherErrorCode of the Watcher's heartbeat timeout


@dataclass(frozen=True)
class RetryRule:
    """One row of the retrial rules: an (error source, code) with optional filters and the action it triggers."""

    source: str
    code: int
    action: str
    params: dict[str, int] = field(default_factory=dict)
    diag: str | None = None  # regular expression on the error diagnostics
    architecture: str | None = None
    release: str | None = None
    wqid: str | None = None
    active: bool = True

    def matches(self, source: str, code: int, diag: str, architecture: str, release: str, wqid: str) -> bool:
        """Whether the rule applies to this error: source and code equal, every set filter matching."""
        if (self.source, self.code) != (source, code):
            return False
        if self.diag is not None and not re.search(self.diag, diag or ""):
            return False
        filters = ((self.architecture, architecture), (self.release, release), (self.wqid, wqid))
        return all(want is None or want == got for want, got in filters)

    def specificity(self) -> int:
        return sum(x is not None for x in (self.diag, self.architecture, self.release, self.wqid))


@dataclass(frozen=True)
class ErrorClass:
    """One row of ERROR_CLASSIFICATION: errors of class 'system' do not eat the inputs' failure budget."""

    source: str
    code: int
    error_class: str  # "system" or "user"
    diag: str | None = None
    active: bool = True


# The simulator's retrial rules and error classes. PanDA keeps them in database tables each experiment fills; these
# are an example set (memory kills retried with more memory, jobs killed at the queue's maxtime with a longer cpuTime, a
# transformation error retried once more at most, stage-in
# and lost-heartbeat failures classed as system errors), listed on the simulation page with the counts they acted on.
DEFAULT_RULES: tuple[RetryRule, ...] = (
    RetryRule("pilot", PAYLOADEXCEEDMAXMEM, "increase_memory"),
    RetryRule("pilot", REACHEDMAXTIME, "increase_cputime"),
    RetryRule("exe", TRANSFORM_FAILED, "limit_retry", {"maxAttempt": 2}),
)
DEFAULT_CLASSES: tuple[ErrorClass, ...] = (
    ErrorClass("pilot", STAGEINFAILED, "system"),
    ErrorClass("jobdispatcher", LOST_HEARTBEAT, "system"),
)


def preprocess_rules(
    rules: Sequence[RetryRule], source: str, code: int, diag: str = "", architecture: str = "", release: str = "",
    wqid: str = "",
) -> list[RetryRule]:  # fmt: skip
    """The rules acted on for one error: the first matching rule of each increase action, and one limit_retry or
    no_retry (the most specific; a tie goes to the smallest maxAttempt, no_retry counting as 0). Inactive rules
    match but are only reported, as PanDA only logs them.

    Usage: ``preprocess_rules(DEFAULT_RULES, "pilot", 1235)[0].action == "increase_memory"``
    """
    hits = [r for r in rules if r.matches(source, code, diag, architecture, release, wqid)]
    chosen: list[RetryRule] = []
    for action in INCREASE_ACTIONS:
        first = next((r for r in hits if r.action == action), None)
        if first is not None:
            chosen.append(first)
    limits = [r for r in hits if r.action in LIMIT_ACTIONS]
    if limits:
        chosen.append(min(limits, key=lambda r: (-r.specificity(), r.params.get("maxAttempt", 0))))
    return chosen


def error_class(classes: Sequence[ErrorClass], source: str, code: int, diag: str = "") -> str:
    """The class of one error ('system', 'user', or '' when no active row matches).

    Usage: ``error_class(DEFAULT_CLASSES, "pilot", 1099) == "system"``
    """
    for c in classes:
        if c.active and (c.source, c.code) == (source, code) and (c.diag is None or re.search(c.diag, diag or "")):
            return c.error_class
    return ""


def next_step(ram: float) -> int | None:
    """The first ladder value above RAM (MB), None at or above the top.

    Usage: ``next_step(2000) == 3000``
    """
    return next((step for step in RAM_LADDER_MB if step > ram), None)


def job_ram(min_ram_count: float, base_ram: float, cores: int, per_core: bool) -> float:
    """The memory a failed job asked for in the task's unit: decompensate(minRamCount) - baseRamCount, per core for
    MBPerCore tasks.

    Usage: ``job_ram(1800, 0, 1, False) == 2000``
    """
    norm = int(min_ram_count / MEMORY_COMPENSATION) - base_ram
    return norm / max(cores, 1) if per_core else norm


def min_ram_count(ram: float, base_ram: float, cores: int, per_core: bool) -> int:
    """A job's minRamCount from its chunk's ramCount: (ram x cores if per core) + baseRamCount, compensated.

    Usage: ``min_ram_count(2000, 0, 1, False) == 1800``
    """
    return int(((ram * cores if per_core else ram) + base_ram) * MEMORY_COMPENSATION)


@dataclass(frozen=True)
class RamIncrease:
    """What increaseRamLimitJobJEDI decided: the task's new ramCount (whole-task rule), or the job's inputs' new
    ramCount, or nothing, with the sentence of why."""

    task_ram: float | None
    file_ram: float | None
    why: str


def increase_ram(norm: float, task_ram: float, file_rams: np.ndarray, n_files: int, fixed: bool = False) -> RamIncrease:
    """increaseRamLimitJobJEDI for a job that asked for NORM MB (job_ram) of a task at TASK_RAM: when more than 30 %
    of the task's N_FILES inputs already have a ramCount (FILE_RAMS, of the inputs that have one) above the task's,
    the task's ramCount goes to the first step above max(task, max(norm, max file ramCount - 1)) (not for
    MBPerCoreFixed, not when the task is already above that or at 8000 MB); otherwise the job's inputs go to the
    first step above NORM (not when NORM is at 8000, nor when the task is already above that step).

    Usage: ``increase_ram(2000, 2000, np.array([]), 10).file_ram == 3000``
    """
    above = int(np.count_nonzero(file_rams > task_ram))
    if not fixed and n_files > 0 and above / n_files > WHOLE_TASK_FRACTION:
        minimum = max(norm, float(file_rams.max()) - 1)
        if task_ram > minimum or task_ram >= RAM_LIMIT_MB:
            return RamIncrease(None, None, f"task ramCount {task_ram:g} already above {minimum:g} or at the limit")
        step = next_step(max(task_ram, minimum))
        if step is None:
            return RamIncrease(None, None, f"no ladder step above {max(task_ram, minimum):g} MB")
        return RamIncrease(float(step), None, f"{above} of {n_files} inputs above the task's ramCount "
                           f"{task_ram:g} (> 30 %): task ramCount -> {step}")  # fmt: skip
    if norm >= RAM_LIMIT_MB:
        return RamIncrease(None, None, f"the job already asked for {norm:g} MB >= {RAM_LIMIT_MB}")
    step = next_step(norm)
    assert step is not None
    if task_ram > step:
        return RamIncrease(None, None, f"task ramCount {task_ram:g} already above the next step {step}")
    return RamIncrease(None, float(step), f"the job's inputs' ramCount {norm:g} -> {step} MB")


def increase_ram_seed(
    pss: float, job_ram: float, task_ram: float, memory_failed: int, jobs_made: int
) -> RamIncrease:  # fmt: skip
    """Seed 003's "Memory increase in job retry" for a job out of memory that had used PSS (MB, in the task's unit)
    and was brokered with JOB_RAM: "The new value will be set to the next value in the list
    [1000,2000,3000,4000,6000,8000] above max(maxPSS, current ramCount)", for the job's inputs; "When 30% of the jobs
    in a task have failed because of insufficient memory" (MEMORY_FAILED of JOBS_MADE, this one counted) the task's
    ramCount is raised the same way. None above 8000 MB.

    Usage: ``increase_ram_seed(2300, 2000, 2000, 1, 10).file_ram == 3000``
    """
    current = max(job_ram, task_ram)
    step = next_step(max(pss, current))
    if step is None:
        return RamIncrease(None, None, f"no ladder step above max(maxPSS {pss:g}, ramCount {current:g}) MB")
    if jobs_made > 0 and memory_failed / jobs_made >= WHOLE_TASK_FRACTION:
        return RamIncrease(float(step), None, f"{memory_failed} of {jobs_made} jobs failed for memory (>= 30 %): "
                           f"task ramCount {task_ram:g} -> {step}")  # fmt: skip
    return RamIncrease(None, float(step), f"next step above max(maxPSS {pss:g}, ramCount {current:g}): {step} MB")


@dataclass(frozen=True)
class CpuTimeIncrease:
    """What initialize_cpu_time_task decided: the task's new cpuTime (HS06 s per event, None: unchanged) and why."""

    cpu_time: float | None
    why: str


def increase_cputime(
    has_finished_job: bool, maxtime: float, corepower: float, queue_cores: float, job_cores: int,
    basewalltime: float, cpu_efficiency: float, n_events: int, old_cputime: float,
) -> CpuTimeIncrease:  # fmt: skip
    """initialize_cpu_time_task for a job killed at its queue's maxtime: nothing when the task already has a finished
    job (scouting decides), when the queue lacks maxtime, corepower or corecount or the task its cpuEfficiency or
    baseWalltime, or when the task's cpuTime is already larger; else cpuTime = (maxtime - baseWalltime) x corepower x
    the job's cores x 1.1 / (cpuEfficiency / 100) / the job's events x 1.5, stored as an integer (in mHS06 s per event
    below 10).

    Usage: ``increase_cputime(False, 86400, 10, 8, 8, 600, 90, 1000, 5.0).cpu_time``
    """
    if has_finished_job:
        return CpuTimeIncrease(None, "the task has finished jobs: scouting decides its cpuTime")
    if not maxtime or not corepower or not queue_cores:
        return CpuTimeIncrease(None, "the queue lacks maxtime, corepower or corecount")
    if not cpu_efficiency or not basewalltime:
        return CpuTimeIncrease(None, "the task lacks cpuEfficiency or baseWalltime")
    if n_events <= 0:
        return CpuTimeIncrease(None, "the job's events are not known")
    new = (maxtime - basewalltime) * corepower * max(job_cores, 1) * CPUTIME_SAFETY / (cpu_efficiency / 100.0)
    new = new / n_events * CPUTIME_MARGIN
    stored = int(new * 1000) / 1000 if new < 10 else float(int(new))  # mHS06sPerEvent below 10, both integers
    if old_cputime > stored:
        return CpuTimeIncrease(None, f"the task's cpuTime {old_cputime:g} is above {stored:g} already")
    return CpuTimeIncrease(stored, f"cpuTime {old_cputime:g} -> {stored:g} HS06 s/event from a job killed at "
                           f"maxtime {maxtime:g} s")  # fmt: skip
