"""Seed 000 "Timeout Rules": the inactive-queue clock (laststart) and the queues spared every timeout rule."""

from __future__ import annotations

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.sim import pilots, timeouts
from tests.builders import queue
from tests.core.sim.conftest import add_jobs, small_sim, status_of

H = 3600.0
PANDA = Config().with_overrides({"RULES": "panda-1.0.4"})


def _pass(sim, now: float) -> None:  # type: ignore[no-untyped-def]
    sim.now = now
    timeouts.tick(sim, now)


def test_a_job_start_moves_the_queues_laststart_so_r5_spares_it() -> None:
    """Seed 000: "4 hours for activated or starting jobs with job.currentPriority>=800 at the queues where laststart
    in the SiteData table is older than 2 hours", laststart moving when a job starts there. Both queues last started
    a job 6 h before the run; a job starts at A at 3 h. At 5 h A's laststart is 2 h old (not older than 2 h), so a
    priority-900 job idle since 0 h (5 h > 4 h) is kept there, and closed by R5 at B (laststart 11 h old)."""
    qs = [queue("A", "S1", laststart="2026-11-20T06:00:00Z"), queue("B", "S2", laststart="2026-11-20T06:00:00Z")]
    sim = small_sim(queues=qs, queue_slots=[{"panda_queue": "A", "nslots": 1}, {"panda_queue": "B", "nslots": 0}])
    assert np.allclose(sim.laststart, -6.0 * H)
    starter = add_jobs(sim, queue="A", creationTime=3 * H, modificationTime=3 * H)
    sim.now = 3 * H
    pilots.dispatch(sim, 3 * H)
    assert status_of(sim, starter) == ["running"]
    assert sim.laststart.tolist() == [3 * H, -6 * H]
    idle = {"currentPriority": 900.0, "modificationTime": 0.0, "stateChangeTime": 0.0}
    at_a, at_b = add_jobs(sim, queue="A", **idle), add_jobs(sim, queue="B", **idle)
    _pass(sim, 5 * H)
    assert status_of(sim, np.r_[at_a, at_b]) == ["activated", "closed"]
    ev = sim.log.frame()
    assert ev[ev["rule"] == "R5"]["id"].tolist() == sim.jobs["PandaID"][at_b].tolist()


def test_r5_reads_the_moved_laststart_two_hours_after_the_last_start() -> None:
    """Seed 000's 4 h rule for priority >= 800: a queue becomes inactive 2 h after its last job start. A job starts at
    A at 1 h; at 3.5 h (2.5 h after) a priority-900 job activated since 0 h (3.5 h < 4 h) is kept, at 4.5 h
    (idle 4.5 h > 4 h, laststart 3.5 h > 2 h old) it is closed."""
    sim = small_sim(
        queues=[queue("A", "S1", laststart="2026-11-20T06:00:00Z")], queue_slots=[{"panda_queue": "A", "nslots": 1}]
    )
    first = add_jobs(sim, currentPriority=500.0, creationTime=H, modificationTime=H)
    pilots.dispatch(sim, H)
    assert status_of(sim, first) == ["running"] and sim.laststart[0] == H
    waiting = add_jobs(sim, currentPriority=900.0, modificationTime=0.0, stateChangeTime=0.0)
    _pass(sim, 3.5 * H)
    assert status_of(sim, waiting) == ["activated"]
    _pass(sim, 4.5 * H)
    assert status_of(sim, waiting) == ["closed"]


def _stale_jobs(sim):  # type: ignore[no-untyped-def]
    """At each queue: a defined job 5 h old (R6), a priority-900 activated job 5 h idle (R5 where the queue is
    inactive), an activated job 49 h old (R8)."""
    rows = {}
    for q in sim.g.queues:
        rows[q] = np.r_[
            add_jobs(sim, queue=q, status="defined", modificationTime=-5 * H),
            add_jobs(sim, queue=q, currentPriority=900.0, modificationTime=-5 * H, stateChangeTime=-5 * H),
            add_jobs(sim, queue=q, modificationTime=-49 * H, stateChangeTime=-49 * H),
        ]
    return rows


def _queues() -> list[dict]:
    old = "2026-11-20T06:00:00Z"
    return [
        queue("A", "S1", laststart=old),
        queue("P", "S2", status="paused", laststart=old),
        queue("D", "S3", catchall="disableReassign", laststart=old),
    ]


def test_seed_profile_disables_every_timeout_rule_at_paused_and_disable_reassign_queues() -> None:
    """Seed 000: "disable all timeout rules when the queue status is paused or the queue has disableReassign in
    catchall": the defined (R6), inactive-site (R5) and long-activated (R8) jobs are closed at A and kept at the
    paused queue P and at D (catchall disableReassign)."""
    sim = small_sim(queues=_queues())
    rows = _stale_jobs(sim)
    _pass(sim, 0.0)
    assert status_of(sim, rows["A"]) == ["closed"] * 3
    assert status_of(sim, rows["P"]) == ["defined", "activated", "activated"]
    assert status_of(sim, rows["D"]) == ["defined", "activated", "activated"]


def test_panda_profile_spares_paused_from_h8_only_and_disable_reassign_from_r5_r8_r9() -> None:
    """Switch timeout_exemptions_as_panda (PanDA's copyArchive): a paused queue skips only H8, so its defined,
    inactive and long-activated jobs are closed; catchall disableReassign skips R5, R8 and R9, so at D only the
    defined job (R6) is closed; a running job silent 3 h at P is not failed by H8."""
    sim = small_sim(PANDA, queues=_queues())
    rows = _stale_jobs(sim)
    silent = add_jobs(sim, queue="P", status="running", startTime=-3 * H, runSeconds=10 * H)
    _pass(sim, 0.0)
    assert status_of(sim, rows["P"]) == ["closed"] * 3
    assert status_of(sim, rows["D"]) == ["closed", "activated", "activated"]
    assert status_of(sim, silent) == ["running"]
    rules = sim.log.frame().groupby("rule").size().to_dict()
    assert rules == {"R5": 2, "R6": 3, "R8": 2}
