"""What-if analysis: how a gdpconfig edit changes one task's brokerage and the whole grid's."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from brokerage import grid, runner
from brokerage.cache import GridCache, cache_for
from brokerage.explain import Decision, Skip, SkipList
from brokerage.gdpconfig import Config, ConfigError, lookup_param
from brokerage.lifecycle.waiting import waiting_task_ids
from brokerage.snapshot import GridSnapshot

TOP_N = 10  # the "top 10" operators compare, as JEDI's MAX_SITE_CANDIDATES default
FACTOR_TOLERANCE = 1e-9  # relative change below which a weight factor counts as unchanged
LOAD_TOLERANCE = 1e-9  # relative change below which an expected load counts as unchanged

# Which brokers read a parameter, from the family of its `used_by` tags. The nucleus (task) broker runs the
# production job filters as its -job check and uses network weights, so production keys reach it too.
FAMILY_BROKERS: dict[str, frozenset[str]] = {
    "prod": frozenset({"production", "task"}),
    "network": frozenset({"production", "task"}),
    "task": frozenset({"task"}),
    "anal": frozenset({"analysis"}),
    "dirac": frozenset(),  # read by the DIRAC matcher only, never by a PanDA broker
    "sim": frozenset(),  # read by the lifecycle simulator only
}
ALL_BROKERS = runner.ALL_BROKERS

Progress = Callable[[int, int], None]


def affected_brokers(keys: Iterable[str]) -> frozenset[str]:
    """Brokers whose decisions may change when KEYS change (every broker for a key with no known family).

    Usage: ``affected_brokers(["NQUEUED_SAT_CAP"]) == {"production", "task"}``
    """
    out: set[str] = set()
    for key in keys:
        try:
            param = lookup_param(key)
        except ConfigError:
            return ALL_BROKERS
        for tag in param.used_by or ("?",):
            fam = FAMILY_BROKERS.get(tag.split(":", 1)[0])
            if fam is None:
                return ALL_BROKERS
            out |= fam
    return frozenset(out)


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


# ---------------------------------------------------------------- one task


@dataclass(frozen=True)
class RankMove:
    """A candidate's place before and after (None = not a candidate), with its weight and share."""

    name: str
    before: int | None
    after: int | None
    weight_before: float | None
    weight_after: float | None
    share_before: float
    share_after: float

    @property
    def move(self) -> int | None:
        """Places gained (positive = up), None when it entered or left the candidates."""
        if self.before is None or self.after is None:
            return None
        return self.before - self.after

    @property
    def arrow(self) -> str:
        """▲ up, ▼ down, = same, new, out."""
        if self.before is None:
            return "new"
        if self.after is None:
            return "out"
        m = self.before - self.after
        return f"▲{m}" if m > 0 else f"▼{-m}" if m < 0 else "="


@dataclass(frozen=True)
class FilterChange:
    """A candidate that newly passes (was skipped before) or newly fails (skipped after), with the criteria."""

    name: str
    change: str  # "newly passes" | "newly fails" | "other filter"
    criteria_before: str
    reason_before: str
    criteria_after: str
    reason_after: str


@dataclass(frozen=True)
class FactorChange:
    """One weight factor of one candidate that changed."""

    name: str
    factor: str
    before: float
    after: float


@dataclass
class TaskDiff:
    """Before/after of one task's brokerage under two configs."""

    task: int
    broker: str
    label: str
    status_before: str
    status_after: str
    moves: list[RankMove]
    filter_changes: list[FilterChange]
    factor_changes: list[FactorChange]
    top_before: str | None
    top_after: str | None
    funnel: list[tuple[str, int, int, int, int]] = field(default_factory=list)  # filter, before/after × 2

    @property
    def changed(self) -> bool:
        """Whether anything an operator would see differs."""
        return bool(
            self.status_before != self.status_after
            or self.filter_changes
            or self.factor_changes
            or any(m.move != 0 for m in self.moves)
        )


def _close(a: float, b: float) -> bool:
    if math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(a, b, rel_tol=FACTOR_TOLERANCE, abs_tol=1e-12)


def _skip_codes(decision: Decision) -> dict[str, str]:
    skipped = decision.skipped
    if isinstance(skipped, SkipList):
        return skipped.criteria_by_candidate()
    return {s.candidate: s.criteria for s in skipped}


def _skips_of(decision: Decision, names: Sequence[str]) -> dict[str, Skip]:
    skipped = decision.skipped
    if isinstance(skipped, SkipList):
        return skipped.of(names)
    wanted = set(names)
    return {s.candidate: s for s in skipped if s.candidate in wanted}


def compare(before: Decision, after: Decision, top: int = TOP_N) -> TaskDiff:
    """Compare two decisions of the same task: rank moves of the top candidates, filter and factor changes.

    Usage: ``diff = compare(broker(snap, t, cfg), broker(snap, t, cfg.with_overrides({...})))``
    """
    if before.task != after.task or before.broker != after.broker:
        raise ValueError(f"cannot compare task {before.task} ({before.broker}) with {after.task} ({after.broker})")
    rb = {c.name: c for c in before.candidates}
    ra = {c.name: c for c in after.candidates}
    sb, sa = shares(before), shares(after)
    shown = list(dict.fromkeys([*(c.name for c in after.candidates[:top]), *(c.name for c in before.candidates[:top])]))
    moves = []
    for name in shown:
        b, a = rb.get(name), ra.get(name)
        moves.append(
            RankMove(
                name,
                b.rank if b else None,
                a.rank if a else None,
                b.weight if b else None,
                a.weight if a else None,
                sb.get(name, 0.0),
                sa.get(name, 0.0),
            )
        )
    codes_b, codes_a = _skip_codes(before), _skip_codes(after)
    moved = [n for n in sorted(codes_b.keys() | codes_a.keys()) if codes_b.get(n) != codes_a.get(n)]
    # Skip objects (and their sentences) only for the candidates whose fate changed
    skips_b, skips_a = _skips_of(before, moved), _skips_of(after, moved)
    changes = []
    for name in moved:
        b, a = skips_b.get(name), skips_a.get(name)
        kind = "other filter" if b and a else "newly passes" if b else "newly fails"
        changes.append(
            FilterChange(
                name,
                kind,
                b.criteria if b else "",
                b.reason if b else "",
                a.criteria if a else "",
                a.reason if a else "",
            )
        )
    factors = []
    for name in shown:
        b, a = rb.get(name), ra.get(name)
        if not (b and a):
            continue
        for key in dict.fromkeys([*b.factors, *a.factors]):
            fb, fa = float(b.factors.get(key, math.nan)), float(a.factors.get(key, math.nan))
            if not _close(fb, fa):
                factors.append(FactorChange(name, key, fb, fa))
    fa_by = {f.filter: f for f in after.funnel}
    funnel = [
        (f.filter, f.before, f.after, fa_by[f.filter].before, fa_by[f.filter].after)
        for f in before.funnel
        if f.filter in fa_by
    ]
    return TaskDiff(
        before.task,
        before.broker,
        before.label,
        before.status,
        after.status,
        moves,
        changes,
        factors,
        before.candidates[0].name if before.candidates else None,
        after.candidates[0].name if after.candidates else None,
        funnel,
    )


# ---------------------------------------------------------------- the whole grid


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


Key = tuple[str, int]  # (broker, task)


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
    if key[0] == runner.NUCLEUS_NAME:
        return 1.0
    n = grid.task_row(cache, key[1]).get("chunk_njobs")
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
            grid.task_row(cache, t)
            known.append(t)
        except KeyError as exc:  # an unknown id is reported with the others, not fatal for the grid
            errors[("production", t)] = f"KeyError: {exc.args[0] if exc.args else t}"
    return runner.plan(cache, known, frozenset(brokers)), errors


def outcomes_of(
    snap: GridSnapshot, cache: GridCache, config: Config, keys: Sequence[Key], progress: Progress | None = None
) -> dict[Key, Outcome]:
    """The Outcome of every brokerage in KEYS under CONFIG, in KEYS' order (a brokerage that raises stops it).

    Usage: ``outcomes_of(snap, cache, config, [("production", 4242)])``
    """
    return {
        key: Outcome.of(d, _work(cache, key))
        for key, d in runner.run(snap, config, keys, cache=cache, progress=progress)
        if isinstance(d, Decision)
    }


def run_grid(
    snap: GridSnapshot,
    config: Config,
    *,
    brokers: Iterable[str] = ALL_BROKERS,
    task_ids: Sequence[int] | None = None,
    progress: Progress | None = None,
    cache: GridCache | None = None,
) -> GridRun:
    """Broker every waiting task (job brokerage) and every task needing a nucleus (task brokerage) under CONFIG.

    Unknown task ids are listed in ``errors``; a brokerage that raises stops the run. This is the serial run;
    ``brokerage.runs.run_grid`` spreads the same work over a cluster.
    Usage: ``run = run_grid(snap, config, cache=cache); run.outcomes[("production", 4242)].top``
    """
    t0 = time.perf_counter()
    cache = cache_for(snap, cache)
    ids = waiting_task_ids(snap) if task_ids is None else [int(t) for t in task_ids]
    keys, errors = plan_grid(cache, ids, brokers)
    outcomes = outcomes_of(snap, cache, config, keys, progress)
    return GridRun(outcomes, errors, time.perf_counter() - t0, len(keys))


Runner = Callable[..., GridRun]  # run_grid's signature; brokerage.runs.run_grid is the cluster one


def rerun_grid(
    snap: GridSnapshot,
    base: GridRun,
    base_config: Config,
    config: Config,
    progress: Progress | None = None,
    run_with: Runner | None = None,
    cache: GridCache | None = None,
) -> GridRun:
    """Re-broker under CONFIG only what its differences from BASE_CONFIG can change; reuse BASE for the rest.

    RUN_WITH replaces run_grid (same arguments), e.g. to spread the tasks over a cluster.
    Usage: ``after = rerun_grid(snap, before, stored, stored.with_overrides({"NQUEUED_SAT_CAP": 300}))``
    """
    t0 = time.perf_counter()
    eb, ea = base_config.effective(), config.effective()
    changed = {k for k in eb.keys() | ea.keys() if eb.get(k) != ea.get(k)}
    touched = affected_brokers(changed) if changed else frozenset()
    ids = sorted({t for (_, t) in [*base.outcomes, *base.errors]})
    run = run_with or run_grid
    fresh = run(snap, config, brokers=touched, task_ids=ids, progress=progress, cache=cache) if touched else None
    outcomes = {k: v for k, v in base.outcomes.items() if k[0] not in touched}
    errors = {k: v for k, v in base.errors.items() if k[0] not in touched}
    if fresh is not None:
        outcomes.update(fresh.outcomes)
        errors.update(fresh.errors)
    return GridRun(
        outcomes,
        errors,
        time.perf_counter() - t0,
        fresh.recomputed if fresh else 0,
        sum(1 for k in base.outcomes if k[0] not in touched),
    )


def top_changed_count(
    snap: GridSnapshot,
    base: GridRun,
    base_config: Config,
    config: Config,
    *,
    exclude: int | None = None,
    run_with: Runner | None = None,
    cache: GridCache | None = None,
) -> int:
    """How many tasks' top candidate CONFIG changes against BASE (a run under BASE_CONFIG), EXCLUDE aside.

    Usage: ``top_changed_count(snap, run_grid(snap, cfg), cfg, cfg.with_overrides({"NQUEUED_SAT_CAP": 300}))``
    """
    after = rerun_grid(snap, base, base_config, config, run_with=run_with, cache=cache)
    return len({tid for (_, tid) in impact(base, after).top_changed if tid != exclude})


@dataclass
class GridImpact:
    """How the whole grid's brokerage moves between two runs."""

    compared: dict[str, int]  # broker -> tasks present in both runs
    top_changed: list[Key]
    top10_changed: list[Key]
    newly_pending: list[Key]
    unpending: list[Key]
    queue_load: pd.DataFrame  # queue, before, after, delta (expected jobs)
    nucleus_load: pd.DataFrame  # nucleus, before, after, delta (expected tasks)
    criteria: pd.DataFrame  # criteria, before, after, delta (skips summed over tasks)


def _load(run: GridRun, brokers: set[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for (b, _), o in run.outcomes.items():
        if b in brokers:
            for name, s in o.shares.items():
                out[name] = out.get(name, 0.0) + s * o.work
    return out


def _table(before: Mapping[str, float], after: Mapping[str, float], label: str) -> pd.DataFrame:
    names = sorted(before.keys() | after.keys())
    df = pd.DataFrame(
        {
            label: names,
            "before": [float(before.get(n, 0.0)) for n in names],
            "after": [float(after.get(n, 0.0)) for n in names],
        }
    )
    delta = df["after"] - df["before"]
    # sums of shares differ by rounding alone when nothing moved
    df["delta"] = delta.where(delta.abs() > LOAD_TOLERANCE * (1.0 + df["before"].abs()), 0.0)
    order = df["delta"].abs().sort_values(ascending=False, kind="stable").index
    return df.loc[order].reset_index(drop=True)


def impact(before: GridRun, after: GridRun) -> GridImpact:
    """Compare two grid runs: tasks whose top candidate or top-10 set changed, (un)pending tasks, load shifts.

    Usage: ``impact(run_grid(snap, cfg), run_grid(snap, cfg2)).top_changed``
    """
    common = sorted(before.outcomes.keys() & after.outcomes.keys())
    compared: dict[str, int] = {}
    top_changed, top10_changed, newly_pending, unpending = [], [], [], []
    crit_b: dict[str, float] = {}
    crit_a: dict[str, float] = {}
    for key in common:
        b, a = before.outcomes[key], after.outcomes[key]
        compared[key[0]] = compared.get(key[0], 0) + 1
        if (b.top[:1] or (None,))[0] != (a.top[:1] or (None,))[0]:
            top_changed.append(key)
        if set(b.top) != set(a.top):
            top10_changed.append(key)
        if b.status != "pending" and a.status == "pending":
            newly_pending.append(key)
        elif b.status == "pending" and a.status != "pending":
            unpending.append(key)
        for code, n in b.criteria.items():
            crit_b[code] = crit_b.get(code, 0) + n
        for code, n in a.criteria.items():
            crit_a[code] = crit_a.get(code, 0) + n
    return GridImpact(
        compared,
        top_changed,
        top10_changed,
        newly_pending,
        unpending,
        _table(_load(before, {"production", "analysis"}), _load(after, {"production", "analysis"}), "queue"),
        _table(_load(before, {"task"}), _load(after, {"task"}), "nucleus"),
        _table(crit_b, crit_a, "criteria"),
    )


def summary(im: GridImpact) -> dict[str, Any]:
    """Headline counts of an impact, for the page and reports."""
    return {
        "compared": dict(im.compared),
        "top_changed": len(im.top_changed),
        "top10_changed": len(im.top10_changed),
        "newly_pending": len(im.newly_pending),
        "unpending": len(im.unpending),
        "queues_shifted": int((im.queue_load["delta"] != 0).sum()),
        "nuclei_shifted": int((im.nucleus_load["delta"] != 0).sum()),
    }
