"""DIRAC priorities: job RealPriority and task-queue Priority from group shares (reference §4)."""

from __future__ import annotations

import math

import numpy as np

from brokerage.dirac.matcher import task_queues
from brokerage.dirac.priorities import real_priority
from brokerage.model.gdpconfig import Config
from tests.core.dirac.helpers import CERN, job, snapshot


def _prio(snap, config: Config | None = None) -> dict[int, float]:
    tqs = task_queues(snap, config or Config())
    return dict(zip(tqs.tq_id.tolist(), tqs.priority.tolist(), strict=True))


def test_real_priority_maps_0_to_1e_5_and_10_to_1e6() -> None:
    """__hackJobPriority: Priority 0 -> 1e-5, 1..9 unchanged, 10 -> 1e6."""
    assert real_priority(np.array([0, 1, 5, 9, 10, 12])).tolist() == [1e-5, 1.0, 5.0, 9.0, 1e6, 1e6]


def test_worked_example_of_the_reference() -> None:
    """§4.5: alice T1 (a=1) and T2 (a=5), bob T3 (a=1), share 1000 over U=2 users: 83.33, 416.67, 500."""
    snap = snapshot([
        job(1, "alice", cpu=100, Priority=1),
        job(2, "alice", cpu=100, Priority=5, Platforms=["x86_64-el9"]),
        job(3, "bob", cpu=100, Priority=1),
    ])  # fmt: skip
    assert _prio(snap) == {1: 83.3333, 2: 416.6667, 3: 500.0}


def test_site_only_variants_share_the_sum() -> None:
    """Task queues differing only in Sites/BannedSites each get the sum of their p's (83.33 + 416.67 = 500)."""
    snap = snapshot([job(1, "alice", Priority=1), job(2, "alice", Priority=5, Sites=[CERN]), job(3, "bob")])
    assert _prio(snap) == {1: 500.0, 2: 500.0, 3: 500.0}


def test_job_sharing_group_is_one_entity() -> None:
    """A JobSharing group with JobShare 300 splits it over its task queues by mean RealPriority: 150 and 150."""
    snap = snapshot(
        [job(1, "carol", "lhcb_mc", cpu=100), job(2, "dan", "lhcb_mc", cpu=100, Platforms=["p"])],
        dirac_group_shares=[{"OwnerGroup": "lhcb_mc", "JobShare": 300.0, "JobSharing": True}],
    )
    assert _prio(snap) == {1: 150.0, 2: 150.0}


def test_background_task_queues_get_the_minimum_share() -> None:
    """With AllowBackgroundTQs, a queue of Priority-0 jobs (a = 1e-5 <= 0.1) gets 0.001; the other the whole share."""
    snap = snapshot(
        [job(1, "alice", Priority=0), job(2, "alice", Priority=3, Platforms=["p"])],
        dirac_group_shares=[{"OwnerGroup": "lhcb_user", "JobShare": 1000.0, "AllowBackgroundTQs": True}],
    )
    assert _prio(snap) == {1: 0.001, 2: 1000.0}


def test_share_override_from_config_and_stuck_mode() -> None:
    """DIRAC_JOB_SHARE_<group> replaces the group's JobShare; DIRAC_TQ_PRIORITY=stuck leaves every queue at 1."""
    snap = snapshot([job(1, "alice"), job(2, "bob")])
    assert _prio(snap, Config().with_overrides({"DIRAC_JOB_SHARE_lhcb_user": 40})) == {1: 20.0, 2: 20.0}
    assert _prio(snap, Config().with_overrides({"DIRAC_TQ_PRIORITY": "stuck"})) == {1: 1.0, 2: 1.0}


def test_empty_task_queue_has_no_priority_but_counts_as_an_owner() -> None:
    """An empty queue (only Matched jobs) keeps no Priority yet counts in U: alice gets 1000 / 2."""
    snap = snapshot([job(1, "alice"), job(2, "bob", Status="Matched")])
    prio = _prio(snap)
    assert prio[1] == 500.0 and math.isnan(prio[2])
