"""DIRAC selection: exact RAND()/w probabilities, the seed's CPU-time ordering, the job draw, seeded simulations."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from brokerage.dirac.matcher import match
from brokerage.dirac.selection import choose_job, draw_first, first_probabilities
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from tests.core.dirac.helpers import CERN, job, snapshot
from tests.reference.dirac_reference import first_probability

PILOT = f"Site={CERN},CPUTime=300000"


def test_two_weights_2_to_1_give_three_quarters() -> None:
    """RAND()/w ASC with weights 2:1 takes the first with probability 1 − 1/(2·2) = 0.75, not 2/3."""
    assert first_probabilities(np.array([2.0, 1.0])) == pytest.approx([0.75, 0.25], abs=1e-14)


def test_worked_example_probabilities() -> None:
    """Reference §5.4: weights 500, 416.67, 83.33, 150, 150 -> 0.436, 0.323, 0.051, 0.095, 0.095."""
    p = first_probabilities(np.array([500, 416.67, 83.33, 150, 150]))
    assert p.round(3).tolist() == [0.435, 0.323, 0.051, 0.095, 0.095]
    assert p.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_quadrature_agrees_with_exact_polynomial_integration(seed: int) -> None:
    """The fast integral equals the reference's exact polynomial integral to 1e-12 (weights spread over 4 decades)."""
    rng = np.random.default_rng(seed)
    w = 10 ** rng.uniform(-1, 3, size=int(rng.integers(2, 25)))
    assert first_probabilities(w) == pytest.approx(first_probability(w.tolist()), abs=1e-12)


def test_counts_and_zero_weights() -> None:
    """Entry i standing for c_i equal rows gives one row's chance; weight 0 never wins unless all are 0."""
    grouped = first_probabilities(np.array([2.0, 1.0]), np.array([2, 1]))
    flat = first_probabilities(np.array([2.0, 2.0, 1.0]))
    assert grouped == pytest.approx([flat[0], flat[2]], abs=1e-13)
    assert first_probabilities(np.array([0.0, 1.0])).tolist() == [0.0, 1.0]
    assert first_probabilities(np.array([0.0, 0.0])).tolist() == [0.5, 0.5]


def test_seeded_draw_frequencies_match_the_probabilities() -> None:
    """20,000 seeded draws over weights 5:3:1:1 land within 0.01 of the exact probabilities."""
    w = np.array([5.0, 3.0, 1.0, 1.0])
    rng = np.random.default_rng(7)
    counts = Counter(draw_first(w, rng) for _ in range(20000))
    freq = np.array([counts[i] / 20000 for i in range(4)])
    assert np.abs(freq - first_probabilities(w)).max() < 0.01


def test_match_simulation_agrees_with_reported_probabilities() -> None:
    """Matching one pilot with seeds 0..1499 picks each task queue about as often as its reported probability."""
    snap = snapshot([job(1, "alice", Priority=1), job(2, "alice", Priority=5, Platforms=["p"]), job(3, "bob")])
    cache = GridCache(snap)
    first = match(snap, PILOT, seed=0, cache=cache)
    probs = dict(zip(first.tqs.tq_id.tolist(), first.probability.tolist(), strict=True))
    tq_id = first.tqs.tq_id
    counts = Counter(int(tq_id[match(snap, PILOT, seed=s, cache=cache).matched_row]) for s in range(1500))
    for tq, p in probs.items():
        assert abs(counts[tq] / 1500 - p) < 0.04, (tq, counts[tq], p)


def test_seed_is_reproducible() -> None:
    """The same seed gives the same task queue and job."""
    snap = snapshot([job(i, owner=f"u{i % 3}") for i in range(1, 40)])
    assert match(snap, PILOT, seed=11).to_dict()["matched"] == match(snap, PILOT, seed=11).to_dict()["matched"]


def test_seed_cpu_ordering_takes_the_highest_bucket_first() -> None:
    """Seed: among matching queues only the highest CPU bucket is drawn from; the code's way draws from all."""
    snap = snapshot([job(1, cpu=100), job(2, owner="bob", cpu=40000)])
    d = match(snap, PILOT).to_dict()
    assert [t["verdict"] for t in d["taskqueues"]] == ["outranked", "matched"]
    assert d["taskqueues"][1]["probability"] == 1.0
    code = match(snap, PILOT, Config().with_overrides({"DIRAC_CPU_ORDER": False})).to_dict()
    assert [t["probability"] for t in code["taskqueues"]] == pytest.approx([0.5, 0.5])


def test_job_drawn_from_the_ten_lowest_job_ids_of_the_winning_priority() -> None:
    """Of 30 equal-priority jobs, the seed draws among the 10 lowest JobIDs; with 50 per try among all 30."""
    ids = np.arange(100, 130)
    prio = np.ones(30, dtype=np.int64)
    seen = {choose_job(ids, prio, prio.astype(float), 10, np.random.default_rng(s)).job for s in range(300)}
    assert seen == set(range(100, 110))
    seen50 = {choose_job(ids, prio, prio.astype(float), 50, np.random.default_rng(s)).job for s in range(600)}
    assert seen50 == set(range(100, 130))


def test_user_priority_draw_by_rows() -> None:
    """Weights 2 (one job) and 1 (two jobs): P(priority 2) = ∫_0^½ 2(1 − t)² dt = 7/12; RealPriority 10 wins ~always."""
    ids = np.array([1, 2, 3])
    prio = np.array([2, 1, 1])
    c = choose_job(ids, prio, prio.astype(float), 10, np.random.default_rng(0))
    got = {p["priority"]: p["probability"] for p in c.priorities}
    assert got[2] == pytest.approx(7 / 12, abs=1e-12) and got[1] == pytest.approx(5 / 12, abs=1e-12)
    top = choose_job(ids, np.array([10, 1, 1]), np.array([1e6, 1.0, 1.0]), 10, np.random.default_rng(0))
    assert {p["priority"]: p["probability"] for p in top.priorities}[10] > 0.999998


def test_match_reports_the_job_and_its_chance() -> None:
    """The matched job comes from the matched queue; its chance is P(priority) / number of candidates."""
    snap = snapshot([job(i, Priority=1 + (i % 2)) for i in range(1, 7)])
    m = match(snap, PILOT, Config().with_overrides({"DIRAC_JOB_WEIGHT": "RealPriority"}), seed=2).to_dict()["matched"]
    assert m["taskqueue"] == 1 and m["job"] in range(1, 7)
    cands = m["candidates"][str(m["job_priority"])]
    p = {x["priority"]: x["probability"] for x in m["priorities"]}[m["job_priority"]]
    assert m["job_probability"] == pytest.approx(p / len(cands))
