"""Jobs tied to the nucleus (brokerage/checks/placement.py): high priority and scouts (-nucleus_only), t1Weight=-1
(-t1weight), and the job side of full chains (-full_chain, -not_full_chain), hand-computed."""

from __future__ import annotations

from typing import Any

import pytest

from brokerage.brokers import production
from brokerage.checks import placement, production_queues
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests.builders import grid, queue, site, task
from tests.core.checks.helpers import _nucleus_grid, assert_codes, assert_seed_codes

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
        pytest.param("require", "AL", {"QAL"}, {"QN": "-full_chain", "QON": "-full_chain", "QS": "-full_chain"},
                     id="-full_chain:require@allow"),
        pytest.param("only", "ON", {"QON"}, {"QN": "-full_chain", "QAL": "-full_chain", "QS": "-full_chain"},
                     id="-full_chain:only@only"),
        pytest.param("capable", "AL", {"QAL"}, {"QN": "-full_chain", "QON": "-full_chain", "QS": "-full_chain"},
                     id="-full_chain:capable@allow"),
        # a capable task on a normal nucleus keeps satellites; only-nuclei are reserved for full-chain jobs
        pytest.param("capable", "N", {"QN", "QAL", "QS"}, {"QON": "-not_full_chain"},
                     id="-not_full_chain:capable@normal"),
        # a normal task on an allow nucleus keeps satellites
        pytest.param("", "AL", {"QN", "QAL", "QS"}, {"QON": "-not_full_chain"}, id="-not_full_chain:normal@allow"),
        pytest.param("", "N", {"QN", "QAL", "QS"}, {"QON": "-not_full_chain"}, id="-not_full_chain:normal@normal"),
    ],
)  # fmt: skip
def test_full_chain_job_filter(fullchain: str, nucleus: str, expected_kept: set[str], expected_codes: dict) -> None:
    assert kept(fullchain=fullchain, nucleus=nucleus) == (expected_kept, expected_codes)


def test_full_chain_reasons() -> None:
    d = production.broker(snap_with(fullchain="require", nucleus="AL"), 1, NO_NW)
    assert "bare nucleus=AL" in d.skip_of("QS").reason
    d2 = production.broker(snap_with(nucleus="N"), 1, NO_NW)
    assert "site=ON is a bareNucleus=only nucleus" in d2.skip_of("QON").reason


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


def test_full_chain_on_bare_nucleus() -> None:
    """A fullChain task on a bare nucleus uses only its queues; other tasks avoid bareNucleus=only sites."""
    bare = [{"site_name": "N", "role": "nucleus", "bare_nucleus": "only"}, {"site_name": "N2", "role": "nucleus"}]
    bare.append({"site_name": "S1", "role": "satellite"})
    qs = [queue("QN", "N"), queue("QN2", "N2"), queue("Q1", "S1")]
    snap = grid(qs, [task(1, nucleus="N", fullchain="require")], sites=bare)
    assert_codes(snap, {"QN": None, "QN2": "-full_chain", "Q1": "-full_chain"})
    snap = grid(qs, [task(1, nucleus="N2")], sites=bare)
    assert_codes(snap, {"QN": "-not_full_chain", "QN2": None, "Q1": None})


# --- high priority and scouts at the nucleus ------------------------------------------------------

AT_NUCLEUS_ONLY = {"QN": None, "Q1": "-nucleus_only", "Q2": "-nucleus_only"}


@pytest.mark.parametrize(
    ("task_kw", "expected"),
    [
        pytest.param({"currentpriority": 800}, AT_NUCLEUS_ONLY, id="-nucleus_only:priority-800"),
        pytest.param({"is_scout": True}, AT_NUCLEUS_ONLY, id="-nucleus_only:scout"),
        pytest.param({"currentpriority": 799}, {"QN": None, "Q1": None, "Q2": None}, id="-nucleus_only:priority-799"),
    ],
)
def test_high_priority_goes_to_nucleus_only(task_kw: dict[str, Any], expected: dict[str, str | None]) -> None:
    """Priority >= 800 or scout jobs skip queues not associated with the nucleus."""
    assert_codes(_nucleus_grid(task(1, nucleus="N", **task_kw), []), expected)


def test_high_priority_nucleus_only_applies_to_preassigned_queues() -> None:
    """Seed: only the status check is waived for pre-assigned queues, so priority 900 still means nucleus only."""
    snap = _nucleus_grid(task(1, nucleus="N", currentpriority=900, site="QN,Q1"), [])
    assert_seed_codes(snap, {"QN": None, "Q1": "-nucleus_only"})


# --- t1Weight=-1 ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task_kw", "expected"),
    [
        pytest.param({}, {"QN": None, "Q1": "-t1weight", "Q2": "-t1weight"}, id="-t1weight"),
        pytest.param({"is_merge": True}, {"QN": None, "Q1": None, "Q2": None}, id="-t1weight:merge"),
    ],
)
def test_t1weight_minus_one_keeps_nucleus_queues(task_kw: dict[str, Any], expected: dict[str, str | None]) -> None:
    """t1Weight=-1 keeps only the nucleus' queues for normal jobs (not for merge jobs)."""
    assert_codes(_nucleus_grid(task(1, nucleus="N", t1weight=-1, **task_kw), []), expected)
