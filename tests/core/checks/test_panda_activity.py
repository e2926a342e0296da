"""PanDA 1.0.4's inactive, transferring, diskIO and event service rules (brokerage/checks/panda_activity.py)."""

from __future__ import annotations

import pytest

from brokerage.brokers import production
from brokerage.model.gdpconfig import Config
from tests.builders import counts, grid, queue, site, task

PANDA = Config().with_overrides({"RULES": "panda-1.0.4"})
OLD = "2026-11-20T09:00:00Z"  # 3 h before the snapshot


def _skips(snap: object, config: Config, tid: int = 1) -> dict[str, str]:
    return {s.candidate: s.criteria for s in production.broker(snap, tid, config).skipped}


@pytest.mark.parametrize("profile", [pytest.param(PANDA, id="-inactive:panda-1.0.4")])
def test_inactive_counts_starting_jobs(profile: Config) -> None:
    """inactive_as_jedi: for priority >= 800 a queue whose laststart is older than 2 h with activated + starting
    jobs > 0 is skipped; A has 0 activated but 5 starting jobs, so JEDI skips it and the seed (activated only) not."""
    snap = grid([queue("A", "S1", laststart=OLD), queue("B", "S2")], [task(1, currentpriority=900)],
                job_counts=counts("A", running=3, starting=5))  # fmt: skip
    assert _skips(snap, profile).get("A") == "-inactive"
    assert _skips(snap, Config()).get("A") != "-inactive"


def test_inactive_not_for_preassigned_tasks() -> None:
    """inactive_as_jedi: the slowness/inactive check does not run for a pre-assigned task."""
    snap = grid([queue("A", "S1", laststart=OLD), queue("B", "S2")], [task(1, currentpriority=900, site="A")],
                job_counts=counts("A", running=3, activated=5))  # fmt: skip
    assert _skips(snap, PANDA).get("A") != "-inactive"


def _transfer_grid() -> object:
    """Nucleus N (queue N1) and satellite S (queue S1); both have 2,100 transferring jobs and 10 running, over
    max(2000, 2 x 10): the task's nucleus is N."""
    return grid(
        [queue("N1", "N"), queue("S1", "S")],
        [task(1, nucleus="N")],
        sites=[site("N"), site("S", role="satellite")],
        job_counts=counts("N1", running=10, transferring=2100) + counts("S1", running=10, transferring=2100),
    )


@pytest.mark.parametrize("profile", [pytest.param(PANDA, id="-transferring:panda-1.0.4")])
def test_transferring_not_checked_at_the_nucleus(profile: Config) -> None:
    """transferring_as_jedi: JEDI skips the transferring check at the nucleus' queues (and queues writing to it);
    2,100 > max(2000, 2 x 10) removes only the satellite's queue S1; the seed removes both."""
    assert _skips(_transfer_grid(), profile).get("S1") == "-transferring"
    assert "N1" not in _skips(_transfer_grid(), profile)
    assert _skips(_transfer_grid(), Config()).get("N1") == "-transferring"


@pytest.mark.parametrize("profile", [pytest.param(PANDA, id="-diskIO:panda-1.0.4")])
def test_diskio_divided_by_queue_cores(profile: Config) -> None:
    """diskio_per_core: an 8-core task's diskIO 8000 // the queue's 8 cores = 1000 is below the limit 2000, so a
    queue running at 3000 > 2000 is not skipped; the seed compares 8000 with 2000 and skips it (-diskIO)."""
    snap = grid([queue("A", "S1", corecount=8, maxdiskio=2000, diskio_avg=3000.0, maxrss=64000)],
                [task(1, corecount=8, diskio=8000.0)])  # fmt: skip
    assert _skips(snap, profile).get("A") != "-diskIO"
    assert _skips(snap, Config()).get("A") == "-diskIO"
    single = grid([queue("A", "S1", maxdiskio=2000, diskio_avg=3000.0)], [task(1, diskio=8000.0)])
    assert _skips(single, profile).get("A") == "-diskIO"  # a single-core task: 8000 > 2000, skipped


@pytest.mark.parametrize("profile", [pytest.param(PANDA, id="-es_ucore:panda-1.0.4")])
def test_event_service_avoids_single_core_pseudo_queues(profile: Config) -> None:
    """es_ucore_check: an event service single-core task skips a unified queue's single-core pseudo queue
    (UCORE/SCORE, -es_ucore); the seed has no such rule."""
    uq = queue("U", "S1", type="unified", capability="ucore", corecount=8, jobseed="all", maxrss=64000)
    snap = grid([uq], [task(1, eventservice=True)])
    assert _skips(snap, profile).get("U") == "-es_ucore"
    assert _skips(snap, Config()).get("U") != "-es_ucore"
