"""What-if analysis: one task's before/after diff, grid runs, reuse of unaffected brokers and the grid impact."""

from __future__ import annotations

import pandas as pd
import pytest

from brokerage.brokers.batch import GridRun, Outcome
from brokerage.brokers.batch import run_grid_serial as run_grid
from brokerage.model.explain import Candidate, Decision, FunnelStep, Skip
from brokerage.model.gdpconfig import PARAMS, Config
from brokerage.whatif.compare import affected_brokers, compare, shares
from brokerage.whatif.impact import impact, rerun_grid, summary
from tests.builders import anal_queue, anal_task, grid, queue, task
from tests.core.checks.helpers import net, sites


def decision(
    cands: list[tuple[str, float, dict[str, float]]], skips: list[tuple[str, str]], status: str = "ok"
) -> Decision:
    """A production decision for task 7 with ranked CANDS (name, weight, factors) and SKIPS (name, criteria)."""
    return Decision(
        "production",
        7,
        status,
        [Candidate(n, i, w, f) for i, (n, w, f) in enumerate(cands, start=1)],
        [Skip(n, c, f"removed by {c}", c.lstrip("-")) for n, c in skips],
        [FunnelStep("status", 5, 4)],
        {},
    )


def test_affected_brokers_follow_used_by_families() -> None:
    """A key's used_by family names the brokers that read it; production keys also reach the nucleus -job check."""
    assert affected_brokers(["NQUEUED_SAT_CAP"]) == {"production", "task"}
    assert affected_brokers(["DISK_THRESHOLD"]) == {"task"}
    assert affected_brokers(["ANAL_BASIC_WEIGHT"]) == {"analysis"}
    assert affected_brokers(["MAX_DISKIO_DEFAULT"]) == {"production", "task", "analysis"}
    assert affected_brokers([]) == frozenset()


def test_shares_are_weights_over_their_sum_or_nucleus_probabilities() -> None:
    """Jobs spread over the final candidates in proportion to weight; a nucleus decision gives probabilities."""
    d = decision([("A", 3.0, {}), ("B", 1.0, {})], [])
    assert shares(d) == {"A": 0.75, "B": 0.25}
    d.candidates[0].details["probability"] = 0.9
    d.candidates[1].details["probability"] = 0.1
    assert shares(d) == {"A": 0.9, "B": 0.1}
    assert shares(decision([], [], "pending")) == {}


def test_compare_reports_rank_moves_filter_verdicts_and_factors() -> None:
    """B overtakes A, C newly passes, D newly fails (-link_unusable), and A's queue factor change is listed."""
    before = decision(
        [("A", 4.0, {"queue": 0.5, "network": 1.0}), ("B", 2.0, {"queue": 0.25, "network": 1.0}), ("D", 1.0, {})],
        [("C", "-status"), ("E", "-cpucore")],
    )
    after = decision(
        [("B", 2.0, {"queue": 0.25, "network": 1.0}), ("A", 1.0, {"queue": 0.125, "network": 1.0}), ("C", 1.0, {})],
        [("D", "-link_unusable"), ("E", "-cpucore")],
    )
    diff = compare(before, after)
    moves = {m.name: m for m in diff.moves}
    assert (moves["A"].before, moves["A"].after, moves["A"].arrow) == (1, 2, "▼1")
    assert (moves["B"].before, moves["B"].after, moves["B"].arrow) == (2, 1, "▲1")
    assert (moves["C"].before, moves["C"].after, moves["C"].arrow) == (None, 3, "new")
    assert (moves["D"].before, moves["D"].after, moves["D"].arrow) == (3, None, "out")
    # shares: before A 4/7, after A 1/4
    assert moves["A"].share_before == pytest.approx(4 / 7)
    assert moves["A"].share_after == pytest.approx(0.25)
    changes = {c.name: (c.change, c.criteria_before, c.criteria_after) for c in diff.filter_changes}
    assert changes == {"C": ("newly passes", "-status", ""), "D": ("newly fails", "", "-link_unusable")}
    assert [(f.name, f.factor, f.before, f.after) for f in diff.factor_changes] == [("A", "queue", 0.5, 0.125)]
    assert (diff.top_before, diff.top_after, diff.changed) == ("A", "B", True)


def test_compare_of_identical_decisions_shows_no_change() -> None:
    """The same decision twice has no moves, no filter changes and no factor changes."""
    d = decision([("A", 2.0, {"queue": 1.0})], [("B", "-status")])
    diff = compare(d, d)
    assert not diff.changed
    assert [m.arrow for m in diff.moves] == ["="]


def test_compare_refuses_different_tasks() -> None:
    """Decisions of two different tasks cannot be compared."""
    a = decision([], [])
    b = decision([], [])
    b.task = 8
    with pytest.raises(ValueError, match="task 7"):
        compare(a, b)


def outcome(tid: int, top: tuple[str, ...], shares_: dict[str, float], work: float = 10, status: str = "ok") -> Outcome:
    """A production outcome of task TID."""
    return Outcome(tid, "production", status, top, shares_, work, {"-status": 1})


def test_impact_counts_moves_pending_and_load_shift() -> None:
    """Hand-computed: task 1 swaps its top (A→B), task 2 loses C from its top set and becomes pending, task 3 un-pends."""
    before = GridRun(
        {
            ("production", 1): outcome(1, ("A", "B"), {"A": 0.75, "B": 0.25}),
            ("production", 2): outcome(2, ("C",), {"C": 1.0}, work=4),
            ("production", 3): outcome(3, (), {}, status="pending"),
        },
        {},
        0.0,
        3,
    )
    after = GridRun(
        {
            ("production", 1): outcome(1, ("B", "A"), {"A": 0.25, "B": 0.75}),
            ("production", 2): outcome(2, (), {}, work=4, status="pending"),
            ("production", 3): outcome(3, ("A",), {"A": 1.0}, work=2),
        },
        {},
        0.0,
        3,
    )
    im = impact(before, after)
    assert im.top_changed == [("production", 1), ("production", 2), ("production", 3)]
    assert im.top10_changed == [("production", 2), ("production", 3)]
    assert im.newly_pending == [("production", 2)]
    assert im.unpending == [("production", 3)]
    load = im.queue_load.set_index("queue")
    # A: 7.5 → 2.5 + 2 = 4.5; B: 2.5 → 7.5; C: 4 → 0
    assert load.loc["A", "before"] == pytest.approx(7.5) and load.loc["A", "after"] == pytest.approx(4.5)
    assert load.loc["B", "delta"] == pytest.approx(5.0)
    assert load.loc["C", "delta"] == pytest.approx(-4.0)
    assert im.queue_load["queue"].iloc[0] == "B"  # largest shift first
    assert summary(im)["queues_shifted"] == 3


def test_impact_ignores_rounding_noise_in_loads() -> None:
    """Sums of shares that differ only by float rounding count as no shift."""
    a = GridRun({("production", 1): outcome(1, ("A",), {"A": 0.1 + 0.2})}, {}, 0.0, 1)
    b = GridRun({("production", 1): outcome(1, ("A",), {"A": 0.3})}, {}, 0.0, 1)
    assert summary(impact(a, b))["queues_shifted"] == 0
    assert isinstance(impact(a, b).nucleus_load, pd.DataFrame)


def _link_grid() -> object:
    """Task 1 (production at nucleus N) can run at QN, Q1 (link with 151 files queued) and Q2; task 2 is analysis."""
    qs = [queue("QN", "N"), queue("Q1", "S1"), queue("Q2", "S2"), anal_queue("AQ", "S2")]
    network = net("S1", "N", queued=151) + net("S2", "N", queued=10)
    t1 = task(1, nucleus="N", chunk_njobs=6)
    t2 = anal_task(2)
    return grid(qs, [t1, t2], sites=sites("N", "S1", "S2"), network=network)


def test_run_grid_and_rerun_reuse_brokers_that_read_no_edited_key() -> None:
    """Raising NQUEUED_SAT_CAP to 151 lets Q1 pass for the production task; the analysis task is reused, not rerun."""
    snap = _link_grid()
    base = Config()
    before = run_grid(snap, base)
    assert set(before.outcomes) == {("production", 1), ("analysis", 2)}
    assert before.outcomes[("production", 1)].criteria == {"-link_unusable": 1}
    assert "Q1" not in before.outcomes[("production", 1)].shares
    cfg = base.with_overrides({"NQUEUED_SAT_CAP": 151})
    after = rerun_grid(snap, before, base, cfg)
    assert (after.recomputed, after.reused) == (1, 1)
    assert after.outcomes[("analysis", 2)] is before.outcomes[("analysis", 2)]
    assert "Q1" in after.outcomes[("production", 1)].shares
    im = impact(before, after)
    assert ("production", 1) in im.top10_changed
    shift = im.queue_load.set_index("queue")["delta"]
    assert shift["Q1"] > 0 and shift.sum() == pytest.approx(0.0, abs=1e-9)  # 6 jobs re-spread, none lost


def test_rerun_with_no_change_recomputes_nothing() -> None:
    """A config equal to the base one reuses every outcome."""
    snap = _link_grid()
    before = run_grid(snap, Config())
    after = rerun_grid(snap, before, Config(), Config().with_overrides({"NQUEUED_SAT_CAP": 150}))
    assert (after.recomputed, after.reused) == (0, 2)


def _perturbed(p: object) -> object:
    """A valid value of parameter P different from its default."""
    if p.type == "bool":
        return not p.default
    if p.choices:
        return next(c for c in p.choices if c != p.default)
    if p.type in ("int", "float"):
        d = p.default if p.default is not None else 1
        v = d * 3 + 1 if d >= 0 else d / 3
        if p.maximum is not None and v > p.maximum:
            v = p.minimum if p.minimum is not None and p.minimum != d else p.maximum / 2
        return int(v) if p.type == "int" else float(v)
    return None


@pytest.fixture(scope="module")
def small_demo() -> tuple[object, GridRun]:
    """A small demo grid and its grid run under the defaults."""
    from brokerage.synth.demo import demo_snapshot

    snap = demo_snapshot(seed=5, queues=120, tasks=160)
    return snap, run_grid(snap, Config())


@pytest.mark.parametrize(
    "param", [p for p in PARAMS if p.type in ("int", "float", "bool") or p.choices], ids=lambda p: p.key
)
def test_unaffected_brokers_really_ignore_the_key(param: object, small_demo: tuple[object, GridRun]) -> None:
    """Changing a key leaves the decisions of brokers outside its used_by families exactly as they were."""
    snap, base = small_demo
    value = _perturbed(param)
    if value is None or value == param.default:
        pytest.skip("no other valid value")
    untouched = {"production", "analysis", "task"} - affected_brokers([param.key])
    if not untouched:
        pytest.skip("every broker reads it")
    fresh = run_grid(snap, Config().with_overrides({param.key: value}), brokers=untouched)
    for key, o in fresh.outcomes.items():
        b = base.outcomes[key]
        assert (o.status, o.top, dict(o.shares)) == (b.status, b.top, dict(b.shares)), key
