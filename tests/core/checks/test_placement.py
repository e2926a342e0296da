"""Job side of full-chain and T1 weight: the production broker's full-chain filter and t1_factor, hand-computed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from brokerage.brokers import production
from brokerage.checks import placement, production_queues
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests.builders import grid, queue, site, task

# network weight off: every queue then has weight base x data x t1, with base = (0 + 1) / (0 + 10) = 0.1
NO_NW = Config().with_overrides({"NW_ACTIVE": False})
SITES = [
    site("N"),
    site("AL", bare_nucleus="allow"),
    site("ON", bare_nucleus="only"),
    site("S", role="satellite"),
]
QUEUES = [queue("QN", "N"), queue("QAL", "AL"), queue("QON", "ON"), queue("QS", "S")]


def snap_with(**task_kw: Any) -> GridSnapshot:
    """The four-site grid with task 1 set by TASK_KW."""
    return grid(QUEUES, [task(1, **task_kw)], sites=SITES)


def kept(**task_kw: Any) -> tuple[set[str], dict[str, str]]:
    """(queues kept, criteria code of each skipped queue) for task 1."""
    d = production.broker(snap_with(**task_kw), 1, NO_NW)
    return set(d.ranked_names), {s.candidate: s.criteria for s in d.skipped}


# --- full chain ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fullchain", "nucleus", "expected_kept", "expected_codes"),
    [
        # a full-chain task on a bare nucleus: only the nucleus' queues
        ("require", "AL", {"QAL"}, {"QN": "-full_chain", "QON": "-full_chain", "QS": "-full_chain"}),
        ("only", "ON", {"QON"}, {"QN": "-full_chain", "QAL": "-full_chain", "QS": "-full_chain"}),
        ("capable", "AL", {"QAL"}, {"QN": "-full_chain", "QON": "-full_chain", "QS": "-full_chain"}),
        # a capable task on a normal nucleus keeps satellites; only-nuclei are reserved for full-chain jobs
        ("capable", "N", {"QN", "QAL", "QS"}, {"QON": "-not_full_chain"}),
        # a normal task on an allow nucleus keeps satellites
        ("", "AL", {"QN", "QAL", "QS"}, {"QON": "-not_full_chain"}),
        ("", "N", {"QN", "QAL", "QS"}, {"QON": "-not_full_chain"}),
    ],
)
def test_full_chain_job_filter(fullchain: str, nucleus: str, expected_kept: set[str], expected_codes: dict) -> None:
    assert kept(fullchain=fullchain, nucleus=nucleus) == (expected_kept, expected_codes)


def test_full_chain_reasons() -> None:
    d = production.broker(snap_with(fullchain="require", nucleus="AL"), 1, NO_NW)
    assert "bare nucleus=AL" in d.skip_of("QS").reason
    d2 = production.broker(snap_with(nucleus="N"), 1, NO_NW)
    assert "site=ON is a bareNucleus=only nucleus" in d2.skip_of("QON").reason


def test_full_chain_filter_sits_before_the_pilot_check() -> None:
    names = [f.name for f in production_queues.FILTERS]
    assert names.index("full-chain check") == names.index("pilot check") - 1
    assert names.index("full-chain check") > names.index("T1 weight check")


def test_full_chain_filter_is_inactive_without_bare_only_sites_or_nucleus() -> None:
    plain = grid(
        [queue("QN", "N"), queue("QS", "S")], [task(1, nucleus="N")], sites=[site("N"), site("S", "satellite")]
    )
    d = production.broker(plain, 1, NO_NW)
    step = next(f for f in d.funnel if f.filter == "full-chain check")
    assert (step.before, step.after) == (2, 2)
    # no nucleus yet (and hint mode): the filter does not apply
    cache = GridCache(snap_with())
    ctx = production_queues.make_context(views.task_row(cache, 1), NO_NW, cache)
    assert placement.f_full_chain(ctx) is None
    hint_cache = GridCache(snap_with(nucleus="N"))
    hint = production_queues.make_context({**task(1), "nucleus": "N"}, NO_NW, hint_cache, hint_mode=True)
    assert placement.f_full_chain(hint) is None


# --- T1 weight ----------------------------------------------------------------------------------

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
