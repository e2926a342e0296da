"""Issue 30 item 3: the snapshot's jobs carry their real ages where the snapshot records them (job_ages, read from
PanDA's jobsActive4 / jobsDefined4 creation and modification times), drawn only where it does not."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np

from brokerage.model.snapshot import GridSnapshot
from brokerage.sim import timeouts
from brokerage.sim.jobs import S
from tests.builders import counts
from tests.core.sim.conftest import small_sim, status_of

H, D = 3600.0, 86400.0


def _ages(status: str, **times: float) -> list[dict[str, Any]]:
    """One job_ages row for queue A, share MC Simulation, STATUS; TIMES in hours before the snapshot, e.g.
    oldest_creationtime=10 (the snapshot's taken_at is filled in by _at)."""
    return [{"panda_queue": "A", "gshare": "MC Simulation", "jobstatus": status, **times}]


def _sim(job_counts: list[dict[str, Any]], ages: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    probe = small_sim(job_counts=job_counts)
    taken = probe.snap.taken_at
    rows = [{k: (taken - timedelta(hours=v) if k.endswith("time") else v) for k, v in r.items()} for r in ages]
    return small_sim(job_counts=job_counts, job_ages=rows)


def _of(sim, status: str) -> np.ndarray:  # type: ignore[no-untyped-def]
    live = sim.live
    return live[sim.jobs["jobStatus"][live] == S[status]]


def test_defined_jobs_start_at_their_recorded_ages_and_r6_closes_the_one_past_4_hours() -> None:
    """Seed 000: "4 hours for defined jobs": three defined jobs whose group was created 10 / 6 / 2 h and modified
    5 / 3 / 1 h before the snapshot (oldest, median, newest) start at exactly those ages, the oldest first; the
    first copyArchive pass closes only the one modified 5 h ago (R6)."""
    sim = _sim(
        counts("A", defined=3),
        _ages(
            "defined",
            oldest_creationtime=10,
            median_creationtime=6,
            newest_creationtime=2,
            oldest_modificationtime=5,
            median_modificationtime=3,
            newest_modificationtime=1,
        ),
    )
    rows = _of(sim, "defined")
    assert (sim.jobs["creationTime"][rows] / H).round(6).tolist() == [-10.0, -6.0, -2.0]
    assert (sim.jobs["modificationTime"][rows] / H).round(6).tolist() == [-5.0, -3.0, -1.0]
    sim.now = 0.0
    timeouts.tick(sim, 0.0)
    assert status_of(sim, rows) == ["closed", "defined", "defined"]
    ev = sim.log.frame()
    assert ev.loc[ev["rule"] == "R6", "value"].round(2).tolist() == [5.0]


def test_a_group_without_a_median_spreads_evenly_from_its_oldest_to_its_newest() -> None:
    """Five activated jobs whose group was created between 8 h and 4 h before the snapshot (no median recorded)
    are created 8, 7, 6, 5 and 4 h before it; their modification time, not recorded, is their creation time as a
    drawn activated job's is."""
    sim = _sim(counts("A", activated=5), _ages("activated", oldest_creationtime=8, newest_creationtime=4))
    rows = _of(sim, "activated")
    assert (sim.jobs["creationTime"][rows] / H).round(6).tolist() == [-8.0, -7.0, -6.0, -5.0, -4.0]
    assert (sim.jobs["modificationTime"][rows] / H).round(6).tolist() == [-8.0, -7.0, -6.0, -5.0, -4.0]


def test_running_jobs_created_22_days_ago_are_closed_by_the_21_day_rule() -> None:
    """Seed 000: "21 days for running jobs": a running group the snapshot records as created 22 days ago is closed
    by K9 at the first pass; the drawn ages (at most 12 h) never reach it."""
    sim = _sim(counts("A", running=2), _ages("running", oldest_creationtime=22 * 24, newest_creationtime=22 * 24))
    rows = _of(sim, "running")
    assert (sim.jobs["creationTime"][rows] / D).round(6).tolist() == [-22.0, -22.0]
    assert (sim.jobs["startTime"][rows] >= sim.jobs["creationTime"][rows]).all()
    sim.now = 0.0
    timeouts.tick(sim, 0.0)
    assert status_of(sim, rows) == ["closed", "closed"]
    drawn = small_sim(job_counts=counts("A", running=2))
    timeouts.tick(drawn, 0.0)
    assert status_of(drawn, _of(drawn, "running")) == ["running", "running"]


def test_groups_without_ages_are_drawn_as_before_and_old_snapshots_load_unchanged() -> None:
    """Only the groups job_ages names take recorded ages: a snapshot document without job_ages (an older one)
    loads with an empty table, and its jobs get the very ages a snapshot with another group's ages draws for them."""
    sim = small_sim(job_counts=counts("A", defined=2, activated=2))
    doc = sim.snap.to_dict()
    del doc["job_ages"]
    assert GridSnapshot.from_dict(doc).tables["job_ages"].empty
    other = _sim(counts("A", defined=2, activated=2), _ages("running", oldest_creationtime=30, newest_creationtime=30))
    for col in ("creationTime", "modificationTime"):
        assert np.array_equal(sim.jobs[col][sim.live], other.jobs[col][other.live])
    assert (sim.jobs["creationTime"][sim.live] >= -12 * H).all()
