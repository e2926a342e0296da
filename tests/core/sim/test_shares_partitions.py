"""Seed 003's "Work queues" and "Shares": stretchable shares take unused CPU first, partition queues group their
sub queues' tasks; PanDA's code reads neither (switches stretchable_shares_as_jedi, work_queue_partitions_as_jedi)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from brokerage.model.gdpconfig import Config
from brokerage.model.workqueues import partition_of, share_tree, stretched_targets, task_work_queues
from brokerage.sim import pilots
from brokerage.sim.setup import sim_grid
from tests.builders import counts, queue, sim_grid_snapshot, task
from tests.core.sim.conftest import add_jobs, small_sim, status_of

CODE = Config().with_overrides({"RULES": "panda-1.0.4"})
NO_SLOPPY = {"SLOPPY_DISPATCH_RATIO": -1}  # the panda-1.0.4 profile sends no getJob by age


def _tree(stretch: tuple[bool, ...] = (False,) * 5) -> pd.DataFrame:
    return pd.DataFrame({
        "gshare": ["Prod", "Anal", "Sim", "Evgen", "User"], "parent": ["", "", "Prod", "Prod", "Anal"],
        "value": [75.0, 25.0, 2.0, 1.0, 5.0], "throttled": [True] * 5, "stretchable": list(stretch),
    })  # fmt: skip


def test_unused_share_goes_to_active_shares_by_their_original_shares() -> None:
    """Seed 003: "all queues get unused CPUs according to their original shares if there is no queue with the
    stretchable attribute": Evgen (25 %) has no jobs, so Sim (50) gets 25 x 50/75 and User (25) 25 x 25/75: 66.67
    and 33.33; Prod, their parent, 66.67."""
    t = share_tree(_tree())
    active = np.array([False, False, True, False, True])
    assert stretched_targets(t, active).round(2).tolist() == [66.67, 33.33, 66.67, 0.0, 33.33]


def test_stretchable_shares_take_the_unused_share_first() -> None:
    """Seed 003: "If queues have the stretchable attribute, they are given priority in getting unused CPUs": with
    Anal stretchable (its leaf User with it), Evgen's 25 % all goes to User: Sim 50, User 50."""
    t = share_tree(_tree((False, True, False, False, False)))
    assert t.stretchable.tolist() == [False, True, False, False, True]
    active = np.array([False, False, True, False, True])
    assert stretched_targets(t, active).round(2).tolist() == [50.0, 50.0, 50.0, 0.0, 50.0]


def _flat(stretch_a: bool) -> Any:
    """Queue Q with 41 slots, 28 running jobs of share A and 12 of B; shares A 50 %, B 25 %, C 25 % (no jobs)."""
    shares = [
        {"gshare": "A", "parent": "", "value": 50.0, "stretchable": stretch_a},
        {"gshare": "B", "parent": "", "value": 25.0},
        {"gshare": "C", "parent": "", "value": 25.0},
    ]
    return dict(
        queues=[queue("Q", "S1")],
        job_counts=counts("Q", gshare="A", running=28) + counts("Q", gshare="B", running=12),
        gshares=shares, queue_slots=[{"panda_queue": "Q", "nslots": 41}],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("stretch_a", "config", "first"),
    [(True, Config().with_overrides(NO_SLOPPY), "A"), (False, Config().with_overrides(NO_SLOPPY), "B"),
     (True, CODE.with_overrides(NO_SLOPPY), "B")],
    ids=["seed-stretchable", "seed-none-stretchable", "panda-1.0.4"],
)  # fmt: skip
def test_the_free_slot_goes_to_the_share_the_stretched_pledge_puts_first(
    stretch_a: bool, config: Config, first: str
) -> None:
    """Seed 003: "unused CPU to active queues, stretchable queues first". 40 running (A 28, B 12), C idle. A
    stretchable: A pledged 75 % (30 jobs), B 25 % (10): A 28/30 = 0.93 before B 12/10 = 1.2, so Q's one free slot
    takes A's activated job. No stretchable share: A 66.7 % (26.7), B 33.3 % (13.3): B 0.9 before A 1.05. The
    panda-1.0.4 profile (no stretching): A 50 % (20), B 25 % (10): B 1.2 before A 1.4."""
    sim = small_sim(config, **_flat(stretch_a))
    b_job = add_jobs(sim, queue="Q", gshare=sim.si["B"])  # older: a dispatch by age would take it
    a_job = add_jobs(sim, queue="Q", gshare=sim.si["A"])
    pilots.dispatch(sim, 60.0)
    taken = {"A": status_of(sim, a_job)[0], "B": status_of(sim, b_job)[0]}
    assert taken == {first: "running", ("B" if first == "A" else "A"): "activated"}


def _wq() -> pd.DataFrame:
    return pd.DataFrame({
        "queue_id": [10, 11, 12, 13], "queue_name": ["MC part", "evgen", "simul", "rest"],
        "queue_type": ["managed"] * 4, "queue_order": [1, 2, 3, 100],
        "criteria": ["", "processingType = 'evgen'", "processingType = 'simul'", ""], "variables": [{}] * 4,
        "status": ["active"] * 4, "partitionid": [-1, 10, 10, None], "queue_function": ["Resource", "", "", ""],
    })  # fmt: skip


def test_a_partition_has_no_criteria_and_its_sub_queues_belong_to_it() -> None:
    """Seed 003: "partition queues themselves don't have selection criteria ... If tasks pass the selection criteria
    of the sub queue, those tasks belong to the sub queue in addition to the partition queue": the partition (order
    1, empty criteria) takes no task; evgen and simul tasks get their sub queues, both of partition "MC part"; a
    reco task falls to "rest". PanDA's code (partitions not read) puts every task in the first row, the partition."""
    tasks = pd.DataFrame({"prodsourcelabel": ["managed"] * 3, "processingtype": ["evgen", "simul", "reco"]})
    assert task_work_queues(tasks, _wq(), partitions=True).tolist() == ["evgen", "simul", "rest"]
    assert partition_of(_wq()) == {"evgen": "MC part", "simul": "MC part"}
    assert task_work_queues(tasks, _wq()).tolist() == ["MC part"] * 3


def test_jedi_works_with_the_partition_queue() -> None:
    """Seed 003: "JEDI works with the partition queue, e.g., tasks in the partition queue are submitted together
    regardless of sub queues": the evgen and simul tasks share the aligned work queue "MC part" (a Resource queue,
    run by JobGenerator and the throttler on its own), the reco task goes by its global share."""
    tasks = [task(1, processingtype="evgen"), task(2, processingtype="simul"), task(3, processingtype="reco")]
    wq = _wq().assign(variables=[{}] * 4).to_dict("records")
    for row in wq:
        row["partitionid"] = None if pd.isna(row["partitionid"]) else int(row["partitionid"])
    snap = sim_grid_snapshot([queue("Q", "S1")], tasks, job_counts=counts("Q", running=1), work_queues=wq)
    g = sim_grid(snap, Config())
    assert g.work_queues[len(g.shares) :] == ["MC part"]
    assert g.tasks["workQueue"].tolist() == ["MC part", "MC part", "MC Simulation"]
