"""Broker framework: filters as declared records, run in order over a candidate table, then rank and cut."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from brokerage.model.cache import GridCache
from brokerage.model.explain import FunnelStep, LazyTexts, SkipList
from brokerage.model.gdpconfig import Config

ReasonFn = Callable[[np.ndarray], list[str]]
T = TypeVar("T")


class Context(Protocol):
    """What every broker's per-task context offers the framework (and the checks in ``brokerage/checks``).

    Every memo key includes ``view``: verdicts over different candidate tables are never shared.

    ``DEPENDS`` maps each per-task attribute derived from the task (arrays such as ``counts``) to what it is
    derived from, so a verdict that reads it is memoised under those inputs.
    """

    DEPENDS: dict[str, Reads]
    view: Hashable  # which view of the candidate table the filters see (e.g. a pseudo-queue resource type)
    cache: GridCache
    task: dict[str, Any]
    config: Config
    alive: np.ndarray


@dataclass
class Verdict:
    """What a filter says about every row: which pass, and for the others the code and sentence.

    ``criteria`` is one code for all failing rows or an array of codes per row; ``reasons`` builds the
    sentences only for the rows that are actually removed (indices into the table), so explanation
    costs nothing for rows that pass.
    """

    passed: np.ndarray
    criteria: str | np.ndarray
    reasons: ReasonFn | str
    temporary: bool = False
    # the sentences built so far, by row (None: not yet): a memoised verdict is read by many tasks, each
    # over nearly the same removed rows, so each row's sentence is formatted once for all of them
    _table: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

    def codes(self, idx: np.ndarray) -> list[str]:
        """Criteria codes of rows IDX."""
        if isinstance(self.criteria, str):
            return [self.criteria] * len(idx)
        return [str(c) for c in self.criteria[idx].tolist()]

    def texts(self, idx: np.ndarray) -> list[str]:
        """Reason sentences of rows IDX."""
        if isinstance(self.reasons, str):
            return [self.reasons] * len(idx)
        return self.reasons(idx)

    def shared_texts(self, idx: np.ndarray) -> list[str]:
        """Reason sentences of failing rows IDX, each built once for the life of this verdict.

        Usage: ``LazyTexts(verdict.shared_texts, idx)`` for a verdict that many tasks share.
        """
        table = self._table
        if table is None:
            table = self._table = np.full(len(self.passed), None, dtype=object)
        missing = idx[np.equal(table[idx], None)]
        if len(missing):
            table[missing] = self.texts(missing)
        return table[idx].tolist()


@dataclass(frozen=True)
class Reads:
    """What a memoised verdict or value depends on besides the snapshot: gdpconfig keys, task fields, and
    attributes of the context (scalars such as ``nucleus``, or derived attributes listed in ``DEPENDS``).

    The memo key is made of the current values of exactly these, so a declaration is the whole contract:
    ``tests/core/test_framework.py`` records what every memoised function really reads and checks it is declared.
    """

    config: tuple[str, ...] = ()
    task: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()

    def __add__(self, other: Reads) -> Reads:
        return Reads(
            tuple(dict.fromkeys(self.config + other.config)),
            tuple(dict.fromkeys(self.task + other.task)),
            tuple(dict.fromkeys(self.facts + other.facts)),
        )


def expand(reads: Reads, depends: Mapping[str, Reads]) -> Reads:
    """READS with every derived attribute replaced by what it is derived from (recursively).

    Usage: ``expand(Reads(facts=("counts",)), ProdContext.DEPENDS) == Reads(task=("gshare",))``
    """
    out = Reads(reads.config, reads.task, ())
    for fact in reads.facts:
        below = depends.get(fact)
        out = out + (expand(below, depends) if below is not None else Reads(facts=(fact,)))
    return out


KeyFn = Callable[[Any], tuple[Any, ...]]
_KEY_FNS: dict[tuple[str, type], KeyFn] = {}  # (memo name, context class) -> its key builder; fixed by declarations


def _hashable(v: Any) -> Any:
    t = type(v)
    if t is str or t is int or t is bool or v is None:
        return v
    if t is float:
        return "nan" if v != v else v  # NaN != NaN would make every key unique
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    if isinstance(v, float) and v != v:
        return "nan"  # NaN != NaN would make every key unique
    return v


def _key_fn(name: str, reads: Reads, ctx_type: type) -> KeyFn:
    """A function building NAME's memo key from a context: one getter per kind of input, made once."""
    flat = expand(reads, ctx_type.DEPENDS)
    keys, fields, facts = flat.config, flat.task, flat.facts

    def key(ctx: Any) -> tuple[Any, ...]:
        task = ctx.task
        return (
            name,
            ctx.view,
            ctx.config.values(keys),
            tuple([task.get(f) for f in fields]),
            tuple([getattr(ctx, f) for f in facts]),
        )

    return key


def memo_key(name: str, reads: Reads, ctx: Context) -> tuple[Any, ...]:
    """The memo key of NAME: its name, the context's view and the values of everything it declares it reads."""
    fn = _KEY_FNS.get((name, type(ctx)))
    if fn is None:
        fn = _KEY_FNS[(name, type(ctx))] = _key_fn(name, reads, type(ctx))
    key = fn(ctx)
    try:
        hash(key)
    except TypeError:  # a list-valued task field: compare by contents
        return _hashable(key)
    return key


def _memoised(name: str, reads: Reads, fn: Callable[[Any], T], ctx: Context) -> T:
    """FN(CTX) shared through the context's cache under NAME's memo key."""
    cache = ctx.cache
    if not cache.memoise:
        return fn(ctx)
    return cache.memo(memo_key(name, reads, ctx), fn, ctx)


@dataclass(frozen=True)
class Derived(Generic[T]):
    """A value many tasks share (an array over queues, a tuple of weight terms), memoised under what it reads.

    Usage: ``JOB_CORES = Derived("job_cores", Reads(task=("corecount",)), _job_cores); JOB_CORES(ctx)``
    """

    name: str
    reads: Reads
    fn: Callable[[Any], T]

    def __call__(self, ctx: Context) -> T:
        return _memoised(self.name, self.reads, self.fn, ctx)


@dataclass(frozen=True)
class Filter:
    """One named, ordered check of a broker.

    ``codes`` are the criteria codes it can give, ``rule`` the seed's rule it implements, ``fn`` returns a
    Verdict over all rows or None when the check does not apply to the task. With ``reads`` the verdict is
    memoised per snapshot under the declared inputs (a task-independent check is built once for every task);
    without, it is computed per task.

    ``uses`` declares what else it depends on: every gdpconfig key an unmemoised filter reads, and for either kind
    the keys behind a scalar fact of the context it reads (``express`` is made from EXPRESS_PRIORITY: the fact's
    value is in the memo key, the key is not). ``declared`` is the whole declaration, the one source of which rule
    reads which gdpconfig key (``brokerage/brokers/uses.py`` collects them; tests check them against real reads).
    """

    name: str
    codes: tuple[str, ...]
    rule: str
    fn: Callable[[Any], Verdict | None]
    temporary: bool = False
    reads: Reads | None = None
    uses: Reads = Reads()

    @property
    def declared(self) -> Reads:
        """Everything the filter declares it reads: its memo ``reads`` and its ``uses``."""
        return self.uses if self.reads is None else self.reads + self.uses

    def run(self, ctx: Context) -> Verdict | None:
        """The verdict of this filter for CTX (memoised when declared)."""
        if self.reads is None:
            return self.fn(ctx)
        return _memoised(self.name, self.reads, self.fn, ctx)


@dataclass(frozen=True)
class Step:
    """A part of a broker (or of the DIRAC matcher) that reads gdpconfig but is not a filter record: a weight
    factor (``kind="weight"``, named as the decision's factors are), a cap, the cut to the best candidates, the
    pending time, ... ``uses`` declares the gdpconfig keys it reads and the derived attributes it reads them through.

    Usage: ``Step("t1", Reads(config=("WORLD_NUCLEUS_WEIGHT",)), kind="weight")``
    """

    name: str
    uses: Reads = Reads()
    kind: str = "stage"  # "stage" | "weight"

    @property
    def declared(self) -> Reads:
        """Everything the step declares it reads."""
        return self.uses


def declared_keys(item: Filter | Step, context: type | None = None) -> tuple[str, ...]:
    """Every gdpconfig key ITEM declares: its own, and those behind the facts it reads of CONTEXT (a context class:
    its ``DEPENDS`` and its ``MADE_FROM``, what its scalar facts are computed from).

    Usage: ``declared_keys(links.LINK_QUEUED, ProdContext)  # NQUEUED_SAT_CAP and the network weight's keys``
    """
    sources = {**getattr(context, "MADE_FROM", {}), **getattr(context, "DEPENDS", {})}
    return expand(item.declared, sources).config


def keys_of(items: Iterable[Filter | Step], context: type | None = None) -> tuple[str, ...]:
    """Every gdpconfig key ITEMS declare (``declared_keys`` of each), in order, once.

    Usage: ``keys_of(production_queues.FILTERS, ProdContext)``
    """
    return tuple(dict.fromkeys(k for item in items for k in declared_keys(item, context)))


def all_pass(n: int) -> np.ndarray:
    """A mask where every row passes."""
    return np.ones(n, dtype=bool)


def apply_filters(
    names: np.ndarray,
    alive: np.ndarray,
    filters: Sequence[Filter],
    ctx: Any,
    skips: SkipList | None = None,
    funnel: list[FunnelStep] | None = None,
    defer_temporary: bool = False,
) -> tuple[np.ndarray, SkipList, list[FunnelStep]]:
    """Run FILTERS in order over the rows still ALIVE; return the survivors, the skips and the funnel.

    Each filter sees the rows still alive as ``ctx.alive``. Its removed rows are kept as indices with their
    codes; Skip objects and sentences are built only when the skips are read (see SkipList). With DEFER_TEMPORARY
    (rule switch ``temporary_deferred``) a temporary verdict only marks its rows; they stay for the later filters and
    are removed at the end by a "temporary problem check" step with their last temporary skip, as JEDI does.
    Usage: ``alive, skips, funnel = apply_filters(names, alive, FILTERS, ctx)``
    """
    skips = SkipList() if skips is None else skips
    funnel = [] if funnel is None else funnel
    alive = alive.copy()
    left = int(np.count_nonzero(alive))
    deferred = _Deferred(len(alive)) if defer_temporary else None
    for f in filters:
        before = left
        if before == 0:
            funnel.append(FunnelStep(f.name, 0, 0))
            continue
        ctx.alive = alive
        verdict = f.run(ctx)
        if verdict is not None:
            idx = (alive > verdict.passed).nonzero()[0]  # alive and not passed
            if len(idx):
                crit = verdict.criteria
                codes = crit if isinstance(crit, str) else crit[idx]
                reasons = verdict.reasons
                build = reasons if isinstance(reasons, str) or f.reads is None else verdict.shared_texts
                if deferred is not None and (verdict.temporary or f.temporary):
                    deferred.mark(idx, crit, build, f.name)
                    funnel.append(FunnelStep(f.name, before, left))
                    continue
                texts: str | LazyTexts = build if isinstance(build, str) else LazyTexts(build, idx)
                skips.add(names, idx, codes, texts, f.name, verdict.temporary or f.temporary)
                alive[idx] = False
                left -= len(idx)
        funnel.append(FunnelStep(f.name, before, left))
    if deferred is not None:
        left = deferred.apply(names, alive, skips, funnel, left)
    return alive, skips, funnel


TEMPORARY_CHECK = "temporary problem check"


class _Deferred:
    """Temporary skips waiting for JEDI's final temporary problem check: each row's last one (as JEDI keeps it)."""

    def __init__(self, n: int) -> None:
        self.last = np.full(n, -1, dtype=np.int64)
        self.entries: list[tuple[str | np.ndarray, ReasonFn | str, str]] = []

    def mark(self, idx: np.ndarray, crit: str | np.ndarray, build: ReasonFn | str, stage: str) -> None:
        self.last[idx] = len(self.entries)
        self.entries.append((crit, build, stage))

    def apply(self, names: np.ndarray, alive: np.ndarray, skips: SkipList, funnel: list[FunnelStep], left: int) -> int:
        rows = np.flatnonzero(alive & (self.last >= 0))
        for e, (crit, build, _stage) in enumerate(self.entries):
            idx = rows[self.last[rows] == e]
            if len(idx):
                codes = crit if isinstance(crit, str) else crit[idx]
                texts: str | LazyTexts = build if isinstance(build, str) else LazyTexts(build, idx)
                skips.add(names, idx, codes, texts, TEMPORARY_CHECK, True)
        alive[rows] = False
        funnel.append(FunnelStep(TEMPORARY_CHECK, left, left - len(rows)))
        return left - len(rows)


LOW_WEIGHT = "-low_weight"
BEST_CANDIDATES = "best candidates"


def rank_and_cut(
    names: np.ndarray, idx: np.ndarray, weight: np.ndarray, top: int, skips: SkipList, funnel: list[FunnelStep],
    slots: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Order the survivors IDX by WEIGHT (aligned with IDX; ties by name), keep the best TOP.

    SLOTS (aligned with IDX, default 1 each) are the places of the TOP each survivor takes: a survivor is kept when
    the places of the better ones leave one free. The others are recorded as ``-low_weight`` skips with the cut and a
    ``best candidates`` funnel step. Returns (positions into IDX of the kept candidates best first, their weights).
    Usage: ``keep, w = rank_and_cut(qa.name, idx, weight[idx], 10, skips, funnel)``
    """
    order = np.lexsort((names[idx], -weight))
    cut = top if slots is None else int(np.sum(np.cumsum(slots[order]) - slots[order] < top))
    chosen, rest = order[:cut], order[cut:]
    if len(rest):
        cutoff = float(weight[chosen[-1]])

        def low_weight(rows: np.ndarray) -> list[str]:
            return [f"weight={x:.4g} below the best {top} (cut at {cutoff:.4g})" for x in weight[rows].tolist()]

        skips.add(names, idx[rest], LOW_WEIGHT, LazyTexts(low_weight, rest), BEST_CANDIDATES)
        funnel.append(FunnelStep(BEST_CANDIDATES, len(order), len(chosen)))
    return chosen, weight[chosen]
