"""DIRAC task queues: jobs grouped by exactly equal requirements, ids in creation order, split at 5000 by switch."""

from __future__ import annotations

from brokerage.dirac.matcher import task_queues
from brokerage.model.gdpconfig import Config
from tests.core.dirac.helpers import CERN, CNAF, job, snapshot


def test_equal_requirements_share_a_task_queue_whatever_the_list_order() -> None:
    """Sites [A, B] and [B, A, A] are the same set: one task queue; a different CPU bucket makes another."""
    snap = snapshot([job(1, Sites=[CERN, CNAF]), job(2, Sites=[CNAF, CERN, CERN]), job(3, cpu=600, Sites=[CERN])])
    tqs = task_queues(snap, Config())
    assert tqs.njobs.tolist() == [2, 1]
    assert tqs.fields["Sites"].values(0) == [CERN, CNAF]
    assert tqs.cpu_time.tolist() == [500, 5000]


def test_owner_group_and_every_multi_field_are_part_of_the_key() -> None:
    """Owner, OwnerGroup and each of Sites/GridCEs/BannedSites/Platforms/JobTypes/Tags separate task queues."""
    jobs = [job(1), job(2, owner="bob"), job(3, group="lhcb_mc"), job(4, Sites=[CERN]), job(5, GridCEs=["ce1"]),
            job(6, BannedSites=[CERN]), job(7, Platforms=["el9"]), job(8, JobTypes=["User"]), job(9, Tags=["GPU"]),
            job(10)]  # fmt: skip
    tqs = task_queues(snapshot(jobs), Config())
    assert len(tqs) == 9 and tqs.njobs.tolist() == [2, 1, 1, 1, 1, 1, 1, 1, 1]


def test_task_queue_holds_at_most_max_jobs_then_a_new_one_opens() -> None:
    """With DIRAC_MAX_JOBS_IN_TQ=2, five equal jobs make queues of 2, 2, 1 in JobID order."""
    snap = snapshot([job(i) for i in (5, 1, 4, 2, 3)])
    tqs = task_queues(snap, Config().with_overrides({"DIRAC_MAX_JOBS_IN_TQ": 2}))
    assert tqs.njobs.tolist() == [2, 2, 1]
    assert [tqs.job_id[tqs.jobs_of(i)].tolist() for i in range(3)] == [[1, 2], [3, 4], [5]]


def test_the_seed_groups_every_job_of_equal_requirements_in_one_queue() -> None:
    """Seed 004: "All jobs with identical requirements are grouped in one TaskQueue": 5,001 equal jobs, one queue."""
    tqs = task_queues(snapshot([job(i) for i in range(1, 5002)]), Config())
    assert tqs.njobs.tolist() == [5001]


def test_dirac_code_splits_at_5000_jobs() -> None:
    """Switch tq_split_as_dirac (DIRAC's TaskQueueDB): 5,001 equal jobs give a full queue of 5,000 and one of 1."""
    tqs = task_queues(snapshot([job(i) for i in range(1, 5002)]), Config().with_overrides({"RULES": "panda-1.0.4"}))
    assert tqs.njobs.tolist() == [5000, 1]


def test_buckets_from_config_regroup_the_jobs() -> None:
    """4000 s and 4500 s jobs share the 5000 s bucket; with DIRAC's buckets both are in 21600 s too."""
    snap = snapshot([job(1, cpu=4000), job(2, cpu=4500), job(3, cpu=400)])
    assert task_queues(snap, Config()).cpu_time.tolist() == [5000, 500]
    dirac = Config().with_overrides({"DIRAC_CPU_BUCKETS": [360, 1800, 3600, 21600, 43200]})
    assert task_queues(snap, dirac).cpu_time.tolist() == [21600, 1800]
