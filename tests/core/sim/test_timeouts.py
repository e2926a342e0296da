"""copyArchive's timeout and reassignment rules (jedi-lifecycle.md §3), each with a hand-placed job."""

from __future__ import annotations

import numpy as np
import pytest

from brokerage.model.gdpconfig import Config
from brokerage.sim import timeouts
from brokerage.sim.jobs import SUB_TOREASSIGN
from tests.builders import queue
from tests.core.sim.conftest import add_jobs, small_sim, status_of

H = 3600.0


def _pass(sim, now: float) -> None:  # type: ignore[no-untyped-def]
    sim.now = now
    timeouts.tick(sim, sim.now)


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


def test_fast_rebrokerage_leaves_queues_with_harvester_slots_alone() -> None:
    """Seed 000: fast rebrokerage only where "nSlots is not defined in the Harvester_Slots table": the same 50
    queued vs 5 running at A, whose numSlots (its Harvester_Slots entry) is 400, close nothing; B beside it, without
    an entry, with 40 queued vs 2 running: the share's total counts B's 40 only (A's jobs are left out), excess =
    ceil(min(40 - 6, 40 - 10, 40 - 0.3 x 40)) = 28, so B's 27 oldest are closed."""
    cfg = Config().with_overrides({"FAST_REBRO_THRESHOLD_NQUEUE_MC Simulation": 10})
    sim = small_sim(cfg, queues=[queue("A", "S1", numslots=400), queue("B", "S2")])
    at_a = add_jobs(sim, 50)
    add_jobs(sim, 5, status="running", startTime=0.0, runSeconds=100 * H)
    at_b = add_jobs(sim, 40, queue="B")
    add_jobs(sim, 2, status="running", queue="B", startTime=0.0, runSeconds=100 * H)
    _pass(sim, 60.0)
    assert set(status_of(sim, at_a)) == {"activated"}
    assert [s == "closed" for s in status_of(sim, at_b)] == [True] * 27 + [False] * 13


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


def test_h1_fails_an_analysis_job_silent_longer_than_heartbeat_timeout_analysis() -> None:
    """H1: an analysis job at an offline queue last beat at the run's start (-0.5 h start, beats every 30 min: last
    at 0 h); at 2.1 h its 2.1 h silence > HEARTBEAT_TIMEOUT_analysis 2 h fails it; at 1.9 h it is kept."""
    sim = small_sim(queues=[queue("A", "S1"), queue("OFF", "S2", status="offline")])
    row = add_jobs(sim, status="running", queue="OFF", prodSourceLabel=1, startTime=-0.5 * H, runSeconds=10 * H)
    _pass(sim, 1.9 * H)
    assert status_of(sim, row) == ["running"]
    _pass(sim, 2.1 * H)
    assert status_of(sim, row) == ["failed"]
    ev = sim.log.frame()
    assert ev[ev["rule"] == "H1"]["value"].tolist() == [pytest.approx(2.1, abs=1e-4)]


def test_h6_fails_a_job_holding_longer_than_timeout_holding() -> None:
    """H6: a job in holding since 48.5 h > TIMEOUT_holding 48 h fails (code 103); one holding 47 h is kept."""
    sim = small_sim()
    old = add_jobs(sim, status="holding", modificationTime=100 * H - 48.5 * H)
    young = add_jobs(sim, status="holding", modificationTime=100 * H - 47 * H)
    _pass(sim, 100 * H)
    assert status_of(sim, np.r_[old, young]) == ["failed", "holding"]
    assert sim.jobs["errorCode"][old][0] == 103


def test_k1_and_k2_close_defined_and_activated_jobs_created_over_7_days_ago() -> None:
    """K1/K2: a defined and an activated job created 7.2 days ago are killed (closed, code 102); 6.9 days old ones
    stay (the R rules do not apply: their modificationTime is recent)."""
    now = 10 * 86400.0
    sim = small_sim()
    k1 = add_jobs(sim, status="defined", creationTime=now - 7.2 * 86400, modificationTime=now - 60)
    k2 = add_jobs(sim, status="activated", creationTime=now - 7.2 * 86400, modificationTime=now - 60)
    young = add_jobs(sim, status="activated", creationTime=now - 6.9 * 86400, modificationTime=now - 60)
    _pass(sim, now)
    assert status_of(sim, np.r_[k1, k2, young]) == ["closed", "closed", "activated"]
    ev = sim.log.frame().set_index("rule")
    assert {"K1", "K2"} <= set(ev.index) and sim.jobs["errorCode"][k1][0] == 102


def test_r7_r8_r9_close_production_jobs_stuck_12_48_48_hours() -> None:
    """R7: assigned 12.5 h > 12 h; R8: activated 48.5 h > 48 h; R9: starting since 48.5 h > 48 h; each closed
    for reassignment; an analysis job in the same states is left alone by these production rules."""
    now = 60 * H
    sim = small_sim(config=Config().with_overrides({"TIMEOUT_defined": 100.0}))
    r7 = add_jobs(sim, status="assigned", modificationTime=now - 12.5 * H, creationTime=now - 13 * H)
    r8 = add_jobs(sim, status="activated", modificationTime=now - 48.5 * H, creationTime=now - 49 * H)
    r9 = add_jobs(sim, status="starting", stateChangeTime=now - 48.5 * H, modificationTime=now - 60,
                  creationTime=now - 49 * H)  # fmt: skip
    user = add_jobs(sim, status="assigned", prodSourceLabel=1, modificationTime=now - 12.5 * H, creationTime=now - H)
    _pass(sim, now)
    assert status_of(sim, np.r_[r7, r8, r9, user]) == ["closed", "closed", "closed", "assigned"]
    ev = sim.log.frame()
    assert sorted(ev["rule"]) == ["R7", "R8", "R9"]
    assert (sim.jobs["jobSubStatus"][np.r_[r7, r8, r9]] == SUB_TOREASSIGN).all()


def test_k3_k9_k10_kill_jobs_by_age_in_the_active_table() -> None:
    """K3: an analysis job holding since 7.5 days is killed; K9: a production job activated 22 days after its
    creation (modified recently) is killed; K10: a throttled job created 7.5 days ago is killed; a running analysis
    job 8 days old is left to its pilot (K3 only sends tobekilled)."""
    now = 30 * 86400.0
    sim = small_sim(config=Config().with_overrides({"TIMEOUT_holding": 10000.0}))
    k3 = add_jobs(sim, status="holding", prodSourceLabel=1, modificationTime=now - 7.5 * 86400,
                  creationTime=now - 7.6 * 86400)  # fmt: skip
    k9 = add_jobs(sim, status="transferring", creationTime=now - 22 * 86400, modificationTime=now - 60)
    k10 = add_jobs(sim, status="throttled", creationTime=now - 7.5 * 86400, modificationTime=now - 60)
    running = add_jobs(sim, status="running", prodSourceLabel=1, startTime=now - 600, modificationTime=now - 8 * 86400,
                       creationTime=now - 8 * 86400, runSeconds=10 * H)  # fmt: skip
    _pass(sim, now)
    assert status_of(sim, np.r_[k3, k9, k10, running]) == ["closed", "closed", "closed", "running"]
    assert sorted(sim.log.frame()["rule"]) == ["K10", "K3", "K9"]
