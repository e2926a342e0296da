"""copyArchive's timeout and reassignment rules (jedi-lifecycle.md §3), each with a hand-placed job."""

from __future__ import annotations

import numpy as np

from brokerage.gdpconfig import Config
from brokerage.sim.jobs import SUB_TOREASSIGN
from tests.builders import queue
from tests.core.sim.conftest import add_jobs, small_sim, status_of

H = 3600.0


def _pass(sim, now: float) -> None:  # type: ignore[no-untyped-def]
    sim.now = now
    sim._copy_archive()


def test_r6_closes_jobs_defined_longer_than_timeout_defined() -> None:
    """R6: a managed job defined 4.5 h > TIMEOUT_defined 4 h is closed (kill code 51, to be reassigned); 3.5 h is
    kept."""
    sim = small_sim()
    old = add_jobs(sim, status="defined", modificationTime=-4.5 * H + 10 * H)
    young = add_jobs(sim, status="defined", modificationTime=-3.5 * H + 10 * H)
    _pass(sim, 10 * H)
    assert status_of(sim, old) == ["closed"] and status_of(sim, young) == ["defined"]
    assert sim.jobs["jobSubStatus"][old][0] == SUB_TOREASSIGN and sim.jobs["errorCode"][old][0] == 100
    ev = sim.log.frame()
    assert ev[ev["rule"] == "R6"]["value"].round(2).tolist() == [4.5]


def test_analysis_rebrokerage_after_analy_timeout_or_3h_offline() -> None:
    """A: a user job activated 12.5 h > ANALY_TIMEOUT 12 h is closed, 11.5 h is kept; at an offline queue 3.5 h is
    enough."""
    sim = small_sim(queues=[queue("A", "S1"), queue("OFF", "S2", status="offline")])
    late = add_jobs(sim, prodSourceLabel=1, activationTime=-12.5 * H + 20 * H)
    early = add_jobs(sim, prodSourceLabel=1, activationTime=-11.5 * H + 20 * H)
    off = add_jobs(sim, queue="OFF", prodSourceLabel=1, activationTime=-3.5 * H + 20 * H)
    _pass(sim, 20 * H)
    assert status_of(sim, np.r_[late, early, off]) == ["closed", "activated", "closed"]
    assert not set(sim.log.frame()["rule"]) - {"A"}


def test_lost_heartbeat_at_a_queue_without_pilots() -> None:
    """H8: a production job running at an offline queue since -600 s last beat at -600 s; at 2.2 h its silence
    2.37 h > HEARTBEAT_TIMEOUT_production 2 h fails it (code 100); at an online queue it beats every 30 min."""
    sim = small_sim(queues=[queue("A", "S1"), queue("OFF", "S2", status="offline")])
    dead = add_jobs(sim, status="running", queue="OFF", startTime=-600.0, runSeconds=10 * H)
    alive = add_jobs(sim, status="running", queue="A", startTime=-600.0, runSeconds=10 * H)
    _pass(sim, 2.2 * H)
    assert status_of(sim, np.r_[dead, alive]) == ["failed", "running"]
    ev = sim.log.frame()
    row = ev[ev["rule"] == "H8"].iloc[0]
    assert round(row["value"], 2) == round((2.2 * H + 600) / H, 2) and row["threshold"] == 2.0
    assert sim.jobs["errorCode"][dead][0] == 100


def test_fast_rebrokerage_closes_the_oldest_excess_minus_one() -> None:
    """F: 50 queued vs 5 running at one queue of a share with FAST_REBRO_THRESHOLD_NQUEUE 10: 5 x 3 < 50, 50 > 10,
    50 > 0.3 x 50, excess = ceil(min(35, 40, 35)) = 35, so the 34 oldest are closed (code 10, error 130)."""
    cfg = Config().with_overrides({"FAST_REBRO_THRESHOLD_NQUEUE_MC Simulation": 10})
    sim = small_sim(cfg)
    queued = add_jobs(sim, 50)
    add_jobs(sim, 5, status="running", startTime=0.0, runSeconds=100 * H)
    _pass(sim, 60.0)
    closed = [s == "closed" for s in status_of(sim, queued)]
    assert sum(closed) == 34 and closed[:34] == [True] * 34
    assert set(sim.jobs["errorCode"][queued[:34]]) == {130}


def test_fast_rebrokerage_without_its_share_key_is_a_dry_run() -> None:
    """F dry run: without FAST_REBRO_THRESHOLD_NQUEUE_<share> the overshoot (limit 10) is only logged."""
    sim = small_sim()
    queued = add_jobs(sim, 50)
    add_jobs(sim, 5, status="running", startTime=0.0, runSeconds=100 * H)
    _pass(sim, 60.0)
    assert set(status_of(sim, queued)) == {"activated"}
    assert sim.dry_runs == [(60.0, "A", "MC Simulation", 34)]


def test_inactive_site_rule_needs_priority_800() -> None:
    """R5: priority >= 800 managed jobs activated 5 h > 4 h at a queue whose last pilot started over 2 h ago are
    closed; a priority-700 job there is kept."""
    sim = small_sim(queues=[queue("A", "S1", laststart="2026-11-20T06:00:00Z"), queue("B", "S2")])
    high = add_jobs(sim, currentPriority=900.0, modificationTime=-5 * H + H, stateChangeTime=-5 * H + H)
    low = add_jobs(sim, currentPriority=700.0, modificationTime=-5 * H + H, stateChangeTime=-5 * H + H)
    _pass(sim, H)
    assert status_of(sim, np.r_[high, low]) == ["closed", "activated"]
