"""Broker a set of tasks over one snapshot and config: the one loop behind whole-grid what-ifs and reports."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from brokerage.brokers.router import NUCLEUS, ROUTES, needs_nucleus, route, run_nucleus_brokerage
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.waiting import waiting_task_ids

Key = tuple[str, int]  # (broker name, task id)
Progress = Callable[[int, int], None]
ALL_BROKERS = frozenset(ROUTES)
NUCLEUS_NAME = NUCLEUS.name
PROGRESS_STEPS = 50  # progress callbacks per run at most
TOP_N = 10  # the "top 10" operators compare, as JEDI's MAX_SITE_CANDIDATES default


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
    rows = [(int(t), views.task_row(cache, int(t))) for t in dict.fromkeys(int(t) for t in task_ids)]
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


def shares(decision: Decision) -> dict[str, float]:
    """Share of the task's work each candidate is expected to get: the nucleus selection probability, or the
    candidate's weight over the sum of weights (jobs are spread over the final candidates in proportion to weight).

    Usage: ``shares(decision)["CERN-PROD"]``
    """
    cands = decision.candidates
    if not cands:
        return {}
    if all("probability" in c.details for c in cands):
        return {c.name: float(c.details["probability"]) for c in cands}
    total = sum(max(c.weight, 0.0) for c in cands)
    if total <= 0:
        return {c.name: 1.0 / len(cands) for c in cands}
    return {c.name: max(c.weight, 0.0) / total for c in cands}


@dataclass(frozen=True)
class Outcome:
    """What the grid view keeps of one decision: status, top candidates, expected shares and skip counts."""

    task: int
    broker: str
    status: str
    top: tuple[str, ...]
    shares: Mapping[str, float]
    work: float  # jobs (job brokerage) or 1 task (nucleus brokerage) to spread over the candidates
    criteria: Mapping[str, int]

    @classmethod
    def of(cls, decision: Decision, work: float, top: int = TOP_N) -> Outcome:
        """Summarise DECISION."""
        return cls(
            decision.task,
            decision.broker,
            decision.status,
            tuple(decision.ranked_names[:top]),
            shares(decision),
            work,
            decision.criteria_counts(),
        )


@dataclass
class GridRun:
    """Outcomes of every waiting task's brokerage under one config."""

    outcomes: dict[Key, Outcome]
    errors: dict[Key, str]
    seconds: float
    recomputed: int
    reused: int = 0


def _work(cache: GridCache, key: Key) -> float:
    """Jobs of this cycle (job brokerage: chunk_njobs, 1 when unknown) or 1 task (nucleus brokerage)."""
    if key[0] == NUCLEUS_NAME:
        return 1.0
    n = views.task_row(cache, key[1]).get("chunk_njobs")
    return float(n) if n is not None and n == n else 1.0


def plan_grid(
    cache: GridCache, task_ids: Sequence[int], brokers: Iterable[str] = ALL_BROKERS
) -> tuple[list[Key], dict[Key, str]]:
    """The brokerages a grid run makes for TASK_IDS (the runner's order) and the ids the snapshot lacks, as errors.

    Usage: ``keys, errors = plan_grid(cache, waiting_task_ids(snap))``
    """
    errors: dict[Key, str] = {}
    known = []
    for t in task_ids:
        try:
            views.task_row(cache, t)
            known.append(t)
        except KeyError as exc:  # an unknown id is reported with the others, not fatal for the grid
            errors[("production", t)] = f"KeyError: {exc.args[0] if exc.args else t}"
    return plan(cache, known, frozenset(brokers)), errors


def outcomes_of(
    snap: GridSnapshot, cache: GridCache, config: Config, keys: Sequence[Key], progress: Progress | None = None
) -> dict[Key, Outcome]:
    """The Outcome of every brokerage in KEYS under CONFIG, in KEYS' order (a brokerage that raises stops it).

    Usage: ``outcomes_of(snap, cache, config, [("production", 4242)])``
    """
    return {
        key: Outcome.of(d, _work(cache, key))
        for key, d in run(snap, config, keys, cache=cache, progress=progress)
        if isinstance(d, Decision)
    }


def run_grid_serial(
    snap: GridSnapshot,
    config: Config,
    *,
    brokers: Iterable[str] = ALL_BROKERS,
    task_ids: Sequence[int] | None = None,
    progress: Progress | None = None,
    cache: GridCache | None = None,
) -> GridRun:
    """Broker every waiting task (job brokerage) and every task needing a nucleus (task brokerage) under CONFIG.

    Unknown task ids are listed in ``errors``; a brokerage that raises stops the run. This is the serial run, the
    reference ``brokerage.runs.run_grid`` equals (it spreads the same work over a cluster when the grid is big).
    Usage: ``run = run_grid_serial(snap, config, cache=cache); run.outcomes[("production", 4242)].top``
    """
    t0 = time.perf_counter()
    cache = cache_for(snap, cache)
    ids = waiting_task_ids(snap) if task_ids is None else [int(t) for t in task_ids]
    keys, errors = plan_grid(cache, ids, brokers)
    outcomes = outcomes_of(snap, cache, config, keys, progress)
    return GridRun(outcomes, errors, time.perf_counter() - t0, len(keys))


Runner = Callable[..., GridRun]  # run_grid_serial's signature; brokerage.runs.run_grid takes the same arguments
