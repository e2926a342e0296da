"""Seed 000 "Timeout Rules" for the statuses the snapshot's jobs start in: pending, sent, starting, assigned, and the
21-day rule for running jobs."""

from __future__ import annotations

import numpy as np

from brokerage.sim import activator, pilots, timeouts
from tests.builders import counts, queue
from tests.core.sim.conftest import add_jobs, small_sim, status_of

H, D = 3600.0, 86400.0


def _pass(sim, now: float) -> None:  # type: ignore[no-untyped-def]
    sim.now = now
    timeouts.tick(sim, now)


def test_pending_jobs_are_read_and_closed_after_one_hour() -> None:
    """Seed 000: "1 hour for pending jobs": the snapshot's 3 pending jobs are read (not dropped); a pending job
    created 1.5 h ago is closed by K4, one created 0.5 h ago is kept."""
    sim = small_sim(job_counts=counts("A", pending=3))
    assert status_of(sim, sim.live) == ["pending"] * 3
    old = add_jobs(sim, status="pending", creationTime=-1.5 * H + H)
    young = add_jobs(sim, status="pending", creationTime=-0.5 * H + H)
    _pass(sim, H)
    assert status_of(sim, np.r_[old, young]) == ["closed", "pending"]
    ev = sim.log.frame()
    k4 = ev[(ev["rule"] == "K4") & (ev["id"] == sim.jobs["PandaID"][old][0])]
    assert k4["value"].round(2).tolist() == [1.5]


def test_sent_jobs_fail_after_30_minutes_and_are_otherwise_confirmed_running() -> None:
    """Seed 000: "30 min for sent jobs": a job sent 40 min ago fails (H3, code 102); one sent 10 min ago is
    confirmed by its pilot's updateJob at the next dispatch and runs from then on."""
    sim = small_sim()
    late = add_jobs(sim, status="sent", modificationTime=-40 * 60.0)
    fresh = add_jobs(sim, status="sent", modificationTime=-10 * 60.0)
    _pass(sim, 0.0)
    assert status_of(sim, np.r_[late, fresh]) == ["failed", "sent"]
    assert sim.jobs["errorCode"][late][0] == 102
    pilots.dispatch(sim, 60.0)
    assert status_of(sim, fresh) == ["running"] and sim.jobs["startTime"][fresh][0] == 60.0


def test_starting_jobs_run_where_pilots_are_and_wait_where_none_are() -> None:
    """A starting job at an online queue is reported running by its pilot at the next dispatch; at an offline queue
    (no pilots) it stays starting, left to R9 (48 h) and the heartbeat rules."""
    sim = small_sim(queues=[queue("A", "S1"), queue("OFF", "S2", status="offline")])
    up = add_jobs(sim, status="starting")
    down = add_jobs(sim, status="starting", queue="OFF")
    pilots.dispatch(sim, 60.0)
    assert status_of(sim, np.r_[up, down]) == ["running", "starting"]


def test_assigned_jobs_are_activated_after_one_hour() -> None:
    """§3.6 datasetManager's activator: an assigned job unchanged for 1.5 h (> 1 h) is activated; one assigned 0.5 h
    ago waits."""
    sim = small_sim()
    old = add_jobs(sim, status="assigned", modificationTime=-1.5 * H + H)
    young = add_jobs(sim, status="assigned", modificationTime=-0.5 * H + H)
    sim.now = H
    activator.tick(sim, H)
    assert status_of(sim, np.r_[old, young]) == ["activated", "assigned"]
    assert sim.jobs["activationTime"][old][0] == H


def test_running_jobs_are_closed_after_21_days() -> None:
    """Seed 000: "21 days for running jobs": a running job created 21.5 days before is closed by K9 (kill code 2),
    one created 20.5 days before keeps running."""
    sim = small_sim()
    now = 22 * D
    old = add_jobs(sim, status="running", creationTime=now - 21.5 * D, startTime=now - 600, runSeconds=10 * H)
    young = add_jobs(sim, status="running", creationTime=now - 20.5 * D, startTime=now - 600, runSeconds=10 * H)
    _pass(sim, now)
    assert status_of(sim, np.r_[old, young]) == ["closed", "running"]
    assert sim.jobs["errorCode"][old][0] == 102
