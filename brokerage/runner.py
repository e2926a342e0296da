"""Broker a set of tasks over one snapshot and config: the one loop behind whole-grid what-ifs and reports."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass

from brokerage import grid
from brokerage.brokers.router import NUCLEUS, ROUTES, needs_nucleus, route, run_nucleus_brokerage
from brokerage.cache import GridCache, cache_for
from brokerage.explain import Decision
from brokerage.gdpconfig import Config
from brokerage.snapshot import GridSnapshot

Key = tuple[str, int]  # (broker name, task id)
Progress = Callable[[int, int], None]
ALL_BROKERS = frozenset(ROUTES)
NUCLEUS_NAME = NUCLEUS.name
PROGRESS_STEPS = 50  # progress callbacks per run at most


@dataclass(frozen=True)
class TaskFailure:
    """A brokerage that raised, kept (when the caller asks for it) with the error named."""

    key: Key
    error: str  # "ExceptionType: message"


def plan(cache: GridCache, task_ids: Sequence[int], brokers: Collection[str] = ALL_BROKERS) -> list[Key]:
    """The brokerages to run for TASK_IDS: each task's job broker (when in BROKERS), then task brokerage for the
    tasks that still need a nucleus. Unknown ids raise KeyError naming the id.

    Usage: ``keys = plan(cache, waiting_task_ids(snap))``
    """
    rows = [(int(t), grid.task_row(cache, int(t))) for t in dict.fromkeys(int(t) for t in task_ids)]
    jobs = [(route(row).name, t) for t, row in rows if route(row).name in brokers]
    nuclei = [(NUCLEUS.name, t) for t, row in rows if NUCLEUS.name in brokers and needs_nucleus(row)]
    return jobs + nuclei


def decide(snap: GridSnapshot, config: Config, key: Key, cache: GridCache) -> Decision:
    """The decision of one planned brokerage.

    Usage: ``decide(snap, config, ("production", 4242), cache)``
    """
    name, tid = key
    if name == NUCLEUS.name:
        return run_nucleus_brokerage(snap, tid, config, cache=cache)
    return ROUTES[name].broker(snap, tid, config, cache=cache)


def run(
    snap: GridSnapshot,
    config: Config,
    keys: Sequence[Key],
    *,
    cache: GridCache | None = None,
    progress: Progress | None = None,
    keep_failures: bool = False,
) -> Iterator[tuple[Key, Decision | TaskFailure]]:
    """Decide every brokerage in KEYS in order, sharing CACHE; yield (key, decision) as each completes.

    A brokerage that raises stops the run, unless KEEP_FAILURES: then it is yielded as a TaskFailure and the
    run goes on (a report keeps the task with its error). Nothing is retried. PROGRESS gets (done, total).
    Usage: ``dict(run(snap, config, plan(cache, ids), cache=cache))``
    """
    cache = cache_for(snap, cache)
    total = len(keys)
    step = max(1, total // PROGRESS_STEPS)
    for done, key in enumerate(keys, start=1):
        try:
            outcome: Decision | TaskFailure = decide(snap, config, key, cache)
        except Exception as exc:
            if not keep_failures:
                raise
            outcome = TaskFailure(key, f"{type(exc).__name__}: {exc}")
        yield key, outcome
        if progress and (done % step == 0 or done == total):
            progress(done, total)
