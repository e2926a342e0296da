"""How much work the demo grid's shares hold and how they are pledged (issue 30: a grid the simulator sustains)."""

from __future__ import annotations

import numpy as np

from brokerage.synth.shares import SHARES, shares_and_slots
from brokerage.synth.work import WORK_HOURS, job_hours, work_scale


def test_job_hours_follow_the_simulators_walltime() -> None:
    """A job runs baseWalltime + cputime x events / (cores x cpuEfficiency) / corepower (brokerage.sim.setup and
    jobgen): 10 HS06 s x 3,240 events / 0.9 over 10 HS06 = 3,600 s, plus the seed's 600 s baseWalltime when
    unset (7/6 h); 4 cores at 50 % with baseWalltime 1,800 s: 1,800 + 10 x 7,200 / 2 / 10 = 5,400 s."""
    hours = job_hours(np.array([10.0, 10.0]), np.array([1, 4]), np.array([90, 50]), np.array([0, 1800]),
                      np.array([3240, 7200]), np.array([0.1, 0.1]))  # fmt: skip
    assert np.allclose(hours, [7 / 6, 1.5])


def test_cpu_efficiency_zero_means_base_walltime_and_short_jobs_floor_at_ten_minutes() -> None:
    """Seed 003: "cpuEfficiency can be set to 0 ... In this case wall = baseWalltime"; a job shorter than the
    simulator's MIN_WALL_S (600 s) runs 600 s."""
    hours = job_hours(np.array([50.0, 0.1]), np.array([1, 1]), np.array([0, 100]), np.array([1200, 1]),
                      np.array([1000, 10]), np.array([0.1, 0.1]))  # fmt: skip
    assert np.allclose(hours, [1200 / 3600, 600 / 3600])


def test_a_share_of_short_jobs_holds_more_of_them() -> None:
    """A share's tasks hold WORK_HOURS of its running jobs: 10 running x 168 h = 1,680 job hours; 8 jobs left of
    8 h hold 64 (x 26.25), 8 jobs of 0.5 h hold 4 (x 420); a share already holding more keeps its input (x 1)."""
    scale = work_scale(np.array(["A", "B", "C"]), np.array([8.0, 0.5, 8.0]), np.array([100, 100, 1]),
                       {"A": 10.0, "B": 10.0, "C": 1.0})  # fmt: skip
    k = scale(np.array([800, 800, 1000]))
    assert WORK_HOURS == 168.0
    assert np.allclose(k, [26.25, 420.0, 1.0])


def test_each_share_is_pledged_its_fraction_of_the_running_jobs() -> None:
    """The share tree's leaf values are the shares' fractions of the running jobs (the simulator's fair-share
    dispatch then has nothing to correct) and each branch the sum of its leaves; usage_perc stays as given."""
    jc = np.zeros((2, len(SHARES), 6), np.int64)
    jc[0, :, 0] = np.arange(1, len(SHARES) + 1) * 10  # 10, 20, ..., 110 running: 660 in all
    usage = [95.0] * len(SHARES)
    g = shares_and_slots(np.array(["Q1", "Q2"], dtype=object), jc, [np.nan, np.nan], usage)["gshares"]
    leaf = dict(zip(g["gshare"][2:], g["value"][2:], strict=True))
    assert leaf[SHARES[0]] == round(100 * 10 / 660, 3) and leaf[SHARES[-1]] == round(100 * 110 / 660, 3)
    assert abs(g["value"][0] + g["value"][1] - 100.0) < 0.01
    assert list(g["usage_perc"][2:]) == usage
