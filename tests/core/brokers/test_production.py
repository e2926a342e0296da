"""Production job brokerage (seed 000): hand-computed preliminary candidates (step 1), weight terms (step 3), caps
(step 4) and the best candidates (step 5), and the job side of the T1 weight.

The step tests check the vectorised broker and the scalar seed reference against numbers worked out by hand. The
step-2 filters are rule families of brokerage/checks, tested in tests/core/checks (one module per family).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from brokerage.brokers import production
from brokerage.checks import production_queues
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests.builders import counts, grid, queue, site, task
from tests.core.checks.helpers import _nucleus_grid, assert_codes, candidate, decide, net, sites, weights_of

# --- step 1 -----------------------------------------------------------------------------------------


def test_preliminary_excludes_test_queues_unless_preassigned() -> None:
    """Queues with 'test' in the name (any case) are not candidates, unless pre-assigned."""
    qs = [queue("A", "S1"), queue("A_Test", "S1"), queue("TESTQ", "S1")]
    d = assert_codes(grid(qs, [task(1)]), {"A": None, "A_Test": "-test", "TESTQ": "-test"})
    assert d.funnel[0].before == 3 and d.funnel[0].after == 1
    d = assert_codes(grid(qs, [task(1, site="A_Test")]), {"A_Test": None})
    assert d.ranked_names == ["A_Test"]


# --- step 3 weight ----------------------------------------------------------------------------------


def _weight_grid(replicas: dict[str, tuple[float, int]], jc: list[dict[str, Any]]) -> GridSnapshot:
    """Queues X, Y, Z, W, V at sites of the same names; task 1 reads 10 GB in 50 files."""
    qs = [queue(q, q) for q in "XYZWV"]
    reps = [
        {"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": f"{s}_DATADISK", "size_gb": gb, "nfiles": n}
        for s, (gb, n) in replicas.items()
    ]
    ds = [{"jeditaskid": 1, "datasetid": 1, "nfiles": 50, "size_gb": 10.0}]
    return grid(qs, [task(1)], job_counts=jc, datasets=ds, dataset_replicas=reps)


def test_many_assigned_data_and_local_input() -> None:
    """manyAssigned = max(1, min(2, assigned/activated)); assigned is ignored where the input is local; the data
    factor is (available + total) / (total x (missing files/100 + 1))."""
    jc = counts("X", running=10, activated=2, assigned=6) + counts("Y", running=10, activated=2, assigned=6)
    jc += counts("Z", running=10, activated=4, assigned=6) + counts("W", running=10)
    jc += counts("V", running=10, assigned=3)
    snap = _weight_grid({"Y": (10.0, 50), "W": (4.0, 20)}, jc)
    w = weights_of(snap)
    # X: many = min(2, 6/2) = 2; (10+1)/((2+6+0+0+10) x 2) = 11/36; data (0+10)/(10 x (50/100+1)) = 2/3
    assert w["X"] == pytest.approx(11 / 36 * 2 / 3)
    # Y holds all input: assigned ignored, many = 1; 11/(2+0+0+0+10) = 11/12; data (10+10)/(10 x 1) = 2
    assert w["Y"] == pytest.approx(11 / 12 * 2)
    # Z: many = 6/4 = 1.5; 11/((4+6+10) x 1.5) = 11/30; data 2/3
    assert w["Z"] == pytest.approx(11 / 30 * 2 / 3)
    # W holds 4 GB, 20 files: base 11/10; data (4+10)/(10 x (30/100+1)) = 14/13
    assert w["W"] == pytest.approx(11 / 10 * 14 / 13)
    # V: no activated jobs but 3 assigned: many = 2; 11/((0+3+10) x 2) = 11/26; data 2/3
    assert w["V"] == pytest.approx(11 / 26 * 2 / 3)
    d, _ = decide(snap)
    assert candidate(d, "X").factors["data"] == pytest.approx(2 / 3)
    assert candidate(d, "Y").details["nAssigned"] == 0
    assert candidate(d, "X").details["manyAssigned"] == 2


def test_network_weight_factor() -> None:
    """The weight is multiplied by networkWeight = 0.5 x (queuedWeight + throughputWeight) towards the nucleus."""
    qs = [queue("QN", "N"), queue("Q1", "S1"), queue("Q2", "S2"), queue("Q3", "S3")]
    network = net("S1", "N", queued=75, mbps_1h=60) + net("S2", "N", closeness=3)
    snap = grid(qs, [task(1, nucleus="N")], sites=sites("N", "S1", "S2", "S3"), network=network)
    w = weights_of(snap)  # base (0+1)/(0+0+0+0+10) = 0.1 everywhere
    assert w["QN"] == pytest.approx(0.1 * 2.5)  # the nucleus itself: 0.5 x (2.5 + 2.5)
    assert w["Q1"] == pytest.approx(0.1 * 0.5 * (1.5 + 1.7))  # 2 - 75/150 = 1.5; 60 MB/s -> 1.7
    assert w["Q2"] == pytest.approx(0.1 * 0.5 * (2.0 + 1 + 8 / 11))  # closeness 3: 1 + (11-3)/11
    assert w["Q3"] == pytest.approx(0.1 * 0.5 * (2.0 + 1 + 3.3 / 11))  # no data: closeness 0.7 x 11 = 7.7
    assert weights_of(snap, NW_ACTIVE=False) == pytest.approx({"QN": 0.1, "Q1": 0.1, "Q2": 0.1, "Q3": 0.1})
    w = weights_of(snap, NW_QUEUE_IMPORTANCE=0.2)
    assert w["Q1"] == pytest.approx(0.1 * (0.2 * 1.5 + 0.8 * 1.7))


def test_t1_weight_factor_for_nucleus_queues() -> None:
    """Seed 003: t1Weight multiplies the nucleus' queues; 0/unset with ioIntensity >= 500 uses the nucleus weight 4."""
    w = weights_of(_nucleus_grid(task(1, nucleus="N", t1weight=3), []))
    # base 0.1; network: nucleus 2.5, satellites without data 0.5 x (2 + 1.3) = 1.65
    assert w == pytest.approx({"QN": 0.1 * 2.5 * 3, "Q1": 0.1 * 1.65, "Q2": 0.1 * 1.65})
    w = weights_of(_nucleus_grid(task(1, nucleus="N", iointensity=600.0), []))
    assert w["QN"] == pytest.approx(0.1 * 2.5 * 4)


# --- step 4 and 5 ------------------------------------------------------------------------------------


def test_step4_caps() -> None:
    """Skip queues with activated + starting > 2 x running or defined + activated + assigned + starting > 2 x running."""
    qs = [queue(q, q) for q in "ABCDE"]
    jc = counts("A", running=10, activated=15, starting=6)  # 15 + 6 = 21 > 20
    jc += counts("B", running=10, defined=10, activated=5, assigned=6)  # 10 + 5 + 6 + 0 = 21 > 20
    jc += counts("C", running=10, defined=10, activated=5, assigned=6)  # input local: 10 + 5 + 0 + 0 = 15
    jc += counts("D", running=10, activated=20)  # 20 is not more than 20
    jc += counts("E", activated=15)  # nRunning = min(nBatchJob 10, 20) = 10: 15 <= 20
    qs[4]["nbatchjob"] = 10
    reps = [{"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": "C_DATADISK", "size_gb": 1.0, "nfiles": 1}]
    ds = [{"jeditaskid": 1, "datasetid": 1, "nfiles": 1, "size_gb": 1.0}]
    snap = grid(qs, [task(1)], job_counts=jc, datasets=ds, dataset_replicas=reps)
    d = assert_codes(snap, {"A": "-cap", "B": "-cap", "C": None, "D": None, "E": None})
    assert d.skip_of("A").temporary
    assert_codes(snap, {"A": None, "B": None}, QUEUED_RUNNING_RATIO_CAP=2.1)


def test_step5_pending_when_all_skipped() -> None:
    """If all queues are skipped the task is pending for 1 hour."""
    d, seed = decide(grid([queue("A", "S1", status="offline")], [task(1)]))
    assert d.status == seed.status == "pending"
    assert d.pending_minutes == seed.pending_minutes == 60
    assert d.candidates == [] and seed.candidates == []


def test_step5_best_ten_by_weight() -> None:
    """The remaining candidates are sorted by weight and the best 10 are taken; the rest are -low_weight."""
    qs = [queue(f"Q{r:02d}", "S1") for r in range(12)]
    jc = [row for r in range(12) for row in counts(f"Q{r:02d}", running=r)]  # weight (r+1)/10
    snap = grid(qs, [task(1)], job_counts=jc)
    d = assert_codes(snap, {"Q00": "-low_weight", "Q01": "-low_weight", "Q02": None})
    assert d.ranked_names == [f"Q{r:02d}" for r in range(11, 1, -1)]
    assert d.candidates[0].weight == pytest.approx(1.2)
    assert (d.funnel[-1].filter, d.funnel[-1].before, d.funnel[-1].after) == ("best candidates", 12, 10)
    d = assert_codes(snap, {"Q08": "-low_weight", "Q09": None}, MAX_SITE_CANDIDATES=3)
    assert d.ranked_names == ["Q11", "Q10", "Q09"]


def test_all_capped_keeps_the_3_best_weights_and_panda_lets_the_task_wait() -> None:
    """Seeds 001 and 003: "If all sites are skipped candidates with the 3 best weights go to the next step."
    (ALL_CAPPED_KEEP_BEST 3); under panda-1.0.4 (switch all_capped_wait) the task waits, "available sites all
    capped"."""
    qs = [queue(q, q) for q in "ABCD"]
    # every queue over the cap: activated + starting > 2 x running; weights (running+1)/(queued+10) differ
    jc = counts("A", running=10, activated=30) + counts("B", running=20, activated=50)
    jc += counts("C", running=5, activated=20) + counts("D", running=1, activated=10)
    snap = grid(qs, [task(1)], job_counts=jc)
    # weights: A 11/40 = 0.275, B 21/60 = 0.35, C 6/30 = 0.2, D 2/20 = 0.1 -> B, A and C are the 3 best
    kept = assert_codes(snap, {"A": None, "B": None, "C": None, "D": "-cap"})
    assert kept.status == "ok" and kept.ranked_names == ["B", "A", "C"]
    assert any(f.filter == "all capped: best weights kept" for f in kept.funnel)
    two = assert_codes(snap, {"A": None, "B": None, "C": "-cap", "D": "-cap"}, ALL_CAPPED_KEEP_BEST=2)
    assert two.status == "ok" and two.ranked_names == ["B", "A"]
    d = assert_codes(snap, {"A": "-cap", "B": "-cap", "C": "-cap", "D": "-cap"}, ALL_CAPPED_KEEP_BEST=0)
    assert d.status == "pending"
    panda = Config().with_overrides({"RULES": "panda-1.0.4"})
    assert production.all_capped_keep(Config()) == 3 and production.all_capped_keep(panda) == 0


# --- T1 weight (job side) ------------------------------------------------------------------------

# network weight off: every queue then has weight base x data x t1, with base = (0 + 1) / (0 + 10) = 0.1
NO_NW = Config().with_overrides({"NW_ACTIVE": False})

T1_SITES = [site("N"), site("S", role="satellite")]
T1_QUEUES = [queue("QN", "N"), queue("QS", "S")]


def t1_decision(cfg: Config = NO_NW, **task_kw: Any) -> Any:
    """Production decision for task 1 at nucleus N with one nucleus queue and one satellite queue."""
    snap = grid(T1_QUEUES, [task(1, nucleus="N", **task_kw)], sites=T1_SITES)
    return production.broker(snap, 1, cfg)


def factors(d: Any) -> dict[str, float]:
    """t1 factor of each candidate."""
    return {c.name: c.factors["t1"] for c in d.candidates}


@pytest.mark.parametrize(
    ("task_kw", "nucleus_t1"),
    [
        ({}, 1.0),  # unset, not IO intensive
        ({"iointensity": 499.0}, 1.0),
        ({"iointensity": 500.0}, 4.0),  # "ioIntensity >= 500": WORLD_NUCLEUS_WEIGHT
        ({"t1weight": 0, "iointensity": 600.0}, 4.0),
        ({"t1weight": 2, "iointensity": 600.0}, 2.0),  # an explicit t1Weight wins over the IO rule
        ({"t1weight": 3}, 3.0),
    ],
)
def test_t1_factor_on_nucleus_queues(task_kw: dict[str, Any], nucleus_t1: float) -> None:
    d = t1_decision(**task_kw)
    assert factors(d) == {"QN": nucleus_t1, "QS": 1.0}
    qn = next(c for c in d.candidates if c.name == "QN")
    assert qn.weight == pytest.approx(0.1 * nucleus_t1)


def test_t1_factor_high_priority() -> None:
    # priority >= 900: t1Weight = max(t1Weight, 100); priority >= 800 keeps only the nucleus' queues anyway
    assert factors(t1_decision(currentpriority=900)) == {"QN": 100.0}
    assert factors(t1_decision(currentpriority=900, t1weight=150)) == {"QN": 150.0}
    assert factors(t1_decision(currentpriority=899, t1weight=2)) == {"QN": 2.0}
    assert factors(t1_decision(currentpriority=900, iointensity=600.0)) == {"QN": 100.0}


def test_t1_weight_minus_one_keeps_the_filter_and_weighs_one() -> None:
    d = t1_decision(t1weight=-1)
    assert factors(d) == {"QN": 1.0}
    assert d.skip_of("QS").criteria == "-t1weight"
    assert factors(t1_decision(t1weight=-1, currentpriority=950)) == {"QN": 100.0}


def test_t1_factor_follows_gdpconfig() -> None:
    cfg = NO_NW.with_overrides({"WORLD_NUCLEUS_WEIGHT": 7, "T1_WEIGHT_IO_INTENSITY": 100})
    assert factors(t1_decision(cfg, iointensity=100.0)) == {"QN": 7.0, "QS": 1.0}
    cfg2 = NO_NW.with_overrides({"T1_WEIGHT_HIGH_PRIO": 20, "T1_WEIGHT_HIGH_PRIO_MIN": 700})
    assert factors(t1_decision(cfg2, currentpriority=700)) == {"QN": 20.0, "QS": 1.0}


def test_t1_factor_is_one_without_nucleus() -> None:
    snap = grid(T1_QUEUES, [task(1, iointensity=900.0, currentpriority=950)], sites=T1_SITES)
    cache = GridCache(snap)
    ctx = production_queues.make_context(views.task_row(cache, 1), NO_NW, cache)
    assert np.array_equal(production.t1_factor(ctx), np.ones(2))
    hint = production_queues.make_context(views.task_row(cache, 1), NO_NW, cache, hint_mode=True)
    assert np.array_equal(production.t1_factor(hint), np.ones(2))


def test_t1_factor_reorders_queues_for_io_intensive_tasks() -> None:
    # without t1 the satellite queue (more running jobs) wins; x4 at the nucleus turns it round
    from tests.builders import counts

    snap = grid(
        T1_QUEUES,
        [task(1, nucleus="N", iointensity=600.0)],
        sites=T1_SITES,
        job_counts=counts("QN", running=10) + counts("QS", running=30),
    )
    d = production.broker(snap, 1, NO_NW)
    # QN: 11/10 x 4 = 4.4; QS: 31/10 = 3.1
    assert d.ranked_names == ["QN", "QS"]
    assert d.candidates[0].weight == pytest.approx(4.4)
