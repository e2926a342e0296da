"""User job counts per VO: a user is a (USERNAME, VO) pair (seed 003: "SELECT USERNAME,VO FROM JEDI_Task"), so the
user caps and the Analysis Stabilizer count the task's VO's jobs; the panda-1.0.4 profile sums every VO as JEDI's
per-user SQL does (switch anal_user_counts_every_vo)."""

from __future__ import annotations

from typing import Any

import pytest

from brokerage.brokers.analysis_throttle import throttle
from brokerage.brokers.stabilizer import share_users, stabilizer, stabilizer_grid
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.snapshot import GridSnapshot
from tests.builders import anal_queue, anal_task, counts, grid, user_counts
from tests.core.checks.helpers import UA, cfg, run

CAP = cfg(CAP_RUNNING_USER_JOBS=100)
PANDA = cfg(CAP_RUNNING_USER_JOBS=100, RULES="panda-1.0.4")
CFG_DEFAULT = cfg()


def of_vo(rows: list[dict[str, Any]], vo: str) -> list[dict[str, Any]]:
    """ROWS (job or user count rows) as VO's."""
    return [{**r, "vo": vo} for r in rows]


def _caps_grid() -> GridSnapshot:
    """alice: 60 running atlas jobs and 60 running wlcg jobs (another user of the same name); bob: 600 running atlas
    jobs; task 1 is alice's (atlas), task 2 bob's of VO wlcg."""
    uc = user_counts("A", running=60) + of_vo(user_counts("A", running=60), "wlcg")
    uc += user_counts("A", user="bob", running=600)
    tasks = [anal_task(1), anal_task(2, username="bob", vo="wlcg")]
    return grid([anal_queue("A", "S1")], tasks, user_job_counts=uc)


def test_a_user_of_the_same_name_in_another_vo_is_another_user() -> None:
    """CAP_RUNNING_USER_JOBS counts the task's VO's jobs of the user: atlas alice has 60 running (<= 100), her
    namesake's 60 wlcg jobs do not count (summed, 120 > 100 would throttle the task)."""
    snap = _caps_grid()
    assert run(snap, CAP).extra["throttled"] is None
    assert throttle(GridCache(snap), views.task_row(GridCache(snap), 1), CAP) is None


def test_a_wlcg_task_is_not_capped_by_atlas_jobs() -> None:
    """bob's 600 running atlas jobs exceed CAP_RUNNING_USER_JOBS=100 for his atlas tasks, not for his wlcg task
    (wlcg's bob has no job)."""
    cache = GridCache(_caps_grid())
    wlcg_task = views.task_row(cache, 2)
    assert throttle(cache, wlcg_task, CAP) is None
    atlas_task = {**wlcg_task, "vo": "atlas"}
    got = throttle(cache, atlas_task, CAP)
    assert got is not None and got["rule"] == "CAP_RUNNING_USER_JOBS" and got["numbers"]["count"] == 600


def test_panda_sums_the_users_jobs_of_every_vo() -> None:
    """Under panda-1.0.4 (anal_user_counts_every_vo) countJobsPerTarget_JEDI selects no VO: alice's 60 + 60 = 120
    running jobs > 100 throttle her atlas task."""
    d = run(_caps_grid(), PANDA)
    assert d.extra["throttled"]["rule"] == "CAP_RUNNING_USER_JOBS"
    assert d.extra["throttled"]["numbers"]["count"] == 120


def _stab_grid() -> GridSnapshot:
    """PQ A (trr 5): atlas UA jobs nQ = 170, nR = 200; wlcg UA jobs nQ = 300, nR = 10. atlas users: alice (20
    running, 150 activated), bob (180 running); wlcg users: alice (100 activated), dave (5 running)."""
    jc = counts("A", UA, running=200, activated=150, assigned=10, defined=5, starting=5)
    jc += of_vo(counts("A", UA, running=10, activated=300), "wlcg")
    uc = user_counts("A", running=20, activated=150) + user_counts("A", user="bob", running=180)
    uc += of_vo(user_counts("A", activated=100) + user_counts("A", user="dave", running=5), "wlcg")
    return grid([anal_queue("A", "S1", trr=5.0)], [anal_task(1)], job_counts=jc, user_job_counts=uc)


def test_the_stabilizer_counts_the_tasks_vo_only() -> None:
    """atlas alice at A: nUsers = 2 (alice, bob), nQ_user = 150; max_q_len = max(5, 0.05 x 200, nQ_max 400 x
    max(20/200, 1/2)) = 200, so 150 is not throttled (summed with wlcg's alice and dave: nQ_user 250 > 400/3)."""
    s = stabilizer(GridCache(_stab_grid()), CFG_DEFAULT, "alice", UA, "atlas")
    assert (s.nQ[0], s.nR[0], s.nUsers[0], s.nQ_user[0], s.nR_user[0]) == (170, 200, 2, 150, 20)
    assert s.max_q_len[0] == 200 and s.can_throttle[0] and not s.throttled[0]
    assert not run(_stab_grid()).extra["stabilizer"][0]["throttled"]


def test_the_stabilizer_of_the_other_vo_reads_that_vos_queue() -> None:
    """wlcg alice at A: nQ = 300 >= max(100, 8 x 5) can throttle, nQ_max = max(100, 2 x 10, 12 x 5) = 100,
    percentage = max(0/10, 1/2) (alice, dave), max_q_len = max(5, 0.05 x 10, 100 x 0.5) = 50 < nQ_user 100."""
    s = stabilizer(GridCache(_stab_grid()), CFG_DEFAULT, "alice", UA, "wlcg")
    assert (s.nQ[0], s.nR[0], s.nUsers[0], s.nQ_user[0]) == (300, 10, 2, 100)
    assert s.nQ_max[0] == 100 and s.max_q_len[0] == 50 and s.throttled[0]


def test_every_vo_summed_is_one_user_per_name() -> None:
    """share_users of every VO (the panda-1.0.4 Stabilizer's getUsersJobsStats_JEDI) sums alice's 150 + 100 queued
    jobs and counts 3 users at A (alice, bob, dave)."""
    su = share_users(GridCache(_stab_grid()), UA, None)
    assert su.nUsers[0] == 3 and su.nQ_user[su.by_user["alice"]].tolist() == [250]


def test_the_stabilizer_grid_lists_each_vos_users() -> None:
    """stabilizer_grid has one row per (gshare, VO, PQ, user), each against its VO's queue counts."""
    df = stabilizer_grid(GridCache(_stab_grid()), CFG_DEFAULT)
    rows = {
        (v, u): (nq, t) for v, u, nq, t in zip(df["vo"], df["produsername"], df["nQ"], df["throttled"], strict=True)
    }
    assert rows == {("atlas", "alice"): (170, False), ("atlas", "bob"): (170, False),
                    ("wlcg", "alice"): (300, True), ("wlcg", "dave"): (300, False)}  # fmt: skip


@pytest.mark.parametrize("vo", ["atlas", None])
def test_rows_without_a_vo_column_are_atlas(vo: str | None) -> None:
    """User counts of a snapshot without the column are atlas' (the only VO their brokers read)."""
    snap = _stab_grid()
    snap = snap.replace(user_job_counts=snap.tables["user_job_counts"].drop(columns=["vo"]))
    got = views.user_counts(GridCache(snap), vo)
    assert len(got) == 5 and views.user_counts(GridCache(snap), "wlcg").empty
