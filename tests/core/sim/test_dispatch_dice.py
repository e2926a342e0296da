"""Seed 003 "Fairshare": the job dispatcher does the fairshare, so every getJob takes the most under-pledged share's
job. Under the switch age_ordered_dispatch_as_panda (reference §7.3 "Job dispatch") every getJob throws the dice,
taking the oldest activated job with probability (SLOPPY_DISPATCH_RATIO+1)/100 and the most under-pledged share's
otherwise; a queue's free slots are so many independent throws, not one throw for the whole queue."""

from __future__ import annotations

import numpy as np
import pytest

from brokerage.model.gdpconfig import Config
from brokerage.sim import pilots
from tests.builders import counts, queue
from tests.core.sim.conftest import add_jobs, small_sim, status_of

CODE = Config().with_overrides({"RULES": "panda-1.0.4"})


def _taken(ratio: int, seed: int = 0, config: Config = CODE) -> tuple[int, int]:
    """Queue Q of 1,000 slots runs 200 jobs of A and 400 of B (pledges 50/50: B over, A under), so 400 slots are
    free; 400 activated jobs of B wait, older than 400 of A. (B's taken, A's taken) after one dispatch."""
    shares = [{"gshare": "A", "parent": "", "value": 50.0}, {"gshare": "B", "parent": "", "value": 50.0}]
    sim = small_sim(
        config.with_overrides({"SLOPPY_DISPATCH_RATIO": ratio}),
        queues=[queue("Q", "S1")],
        job_counts=counts("Q", gshare="A", running=200) + counts("Q", gshare="B", running=400),
        gshares=shares, queue_slots=[{"panda_queue": "Q", "nslots": 1000}],
    )  # fmt: skip
    sim.rng = np.random.default_rng(seed)
    b = add_jobs(sim, 400, queue="Q", gshare=sim.si["B"])
    a = add_jobs(sim, 400, queue="Q", gshare=sim.si["A"])
    pilots.dispatch(sim, 60.0)
    return status_of(sim, b).count("running"), status_of(sim, a).count("running")


@pytest.mark.parametrize("ratio", [10, 99])
def test_the_seed_dispatcher_never_goes_by_age(ratio: int) -> None:
    """Seed 003: "the fairshare mechanism in the job dispatcher ... fairshare is defined for the number of running
    jobs": under the seed profile all 400 free slots go to A (200 running against a pledge of 300), none to B's
    older jobs (400 running, over its pledge), whatever SLOPPY_DISPATCH_RATIO says."""
    assert _taken(ratio, config=Config()) == (0, 400)


def test_ratio_zero_reads_as_unset_and_minus_one_as_none() -> None:
    """getSortingCriteria: ``if not sloppy_ratio: sloppy_ratio = 10``, then ``randrange(100) <= ratio``: 0 gives
    11 % of getJobs by age, as 10 does, and -1 gives none, so B's older jobs take no slot."""
    assert pilots.age_ordered_fraction(CODE.with_overrides({"SLOPPY_DISPATCH_RATIO": 0})) == 0.11
    assert _taken(-1) == (0, 400)


def test_every_getjob_by_age_takes_the_oldest_jobs() -> None:
    """SLOPPY_DISPATCH_RATIO 99: (99+1)/100 = every getJob sorts by PandaID, so the 400 free slots take B's 400
    older jobs and none of A's, though A is under its pledge."""
    assert _taken(99) == (400, 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_half_the_getjobs_by_age_take_about_half_the_slots(seed: int) -> None:
    """SLOPPY_DISPATCH_RATIO 49: each of the 400 getJobs goes by age with p = 0.5, so B (over its pledge, with the
    oldest jobs) takes Binomial(400, 0.5) slots, 200 +- 10 (one throw per queue would give B all 400 or none), and
    A the rest: the queue fills exactly."""
    b, a = _taken(49, seed)
    assert 140 <= b <= 260 and a + b == 400, (b, a)


def test_the_default_ratio_sends_one_getjob_in_nine_by_age() -> None:
    """SLOPPY_DISPATCH_RATIO 10 (default): p = 11/100, so B takes Binomial(400, 0.11) = 44 +- 6 slots, A the
    other 356."""
    b, a = _taken(10)
    assert 20 <= b <= 70 and a + b == 400, (b, a)
