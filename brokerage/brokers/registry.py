"""Plugin registry: which broker handles a task, chosen from its prodSourceLabel as JEDI's factory does."""

from __future__ import annotations

from collections.abc import Callable

from brokerage import grid
from brokerage.explain import Decision
from brokerage.gdpconfig import Config
from brokerage.snapshot import GridSnapshot

JobBroker = Callable[[GridSnapshot, int, Config], Decision]

_JOB_BROKERS: dict[str, JobBroker] = {}


def register_job_broker(label: str, fn: JobBroker) -> None:
    """Register FN as the job broker for prodSourceLabel LABEL ('any' is the fallback)."""
    _JOB_BROKERS[label] = fn


def job_broker_for(label: str) -> JobBroker:
    """The job broker for a prodSourceLabel: the label's own plugin wins over 'any'.

    Usage: ``job_broker_for("user")``
    """
    _load_builtin()
    fn = _JOB_BROKERS.get(label) or _JOB_BROKERS.get("any")
    if fn is None:
        raise KeyError(f"no job broker for prodsourcelabel={label!r}")
    return fn


def run_job_brokerage(snap: GridSnapshot, jeditaskid: int, config: Config | None = None) -> Decision:
    """Run the job brokerage that fits the task (production for managed/test, analysis for user).

    Usage: ``run_job_brokerage(snap, 4242).status``
    """
    task = grid.task_row(snap, jeditaskid)
    return job_broker_for(str(task.get("prodsourcelabel") or "managed"))(snap, jeditaskid, config or Config())


def _load_builtin() -> None:
    if _JOB_BROKERS:
        return
    from brokerage.brokers import production

    register_job_broker("any", production.broker)
    try:
        from brokerage.brokers import analysis
    except ImportError:  # the analysis broker is optional until it exists
        return
    register_job_broker("user", analysis.broker)
