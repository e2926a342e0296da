"""Ours against a DIRAC answer, row by row (hand-made DIRAC answers; no DIRAC needed)."""

from __future__ import annotations

from brokerage.crosscheck.dirac_compare import compare_pilot, compare_queues, their_queues
from brokerage.crosscheck.dirac_run import dirac_config
from brokerage.dirac.matcher import match, task_queues
from brokerage.model.gdpconfig import Config
from tests.core.dirac.helpers import CERN, CNAF, job, snapshot

CFG = dirac_config(Config())
# jobs 1, 2 (alice, same requirements) -> TQ1; job 3 (bob, at CNAF only) -> TQ2; both Priority 500 (share 1000 / 2)
SNAP = snapshot([job(1), job(2), job(3, owner="bob", Sites=[CNAF])])


def _dirac(prio1: float = 500.0, sites2: list[str] | None = None, jobs: dict[str, int] | None = None) -> dict:
    return {
        "taskqueues": {
            "1": {"Owner": "alice", "OwnerGroup": "lhcb_user", "VO": "lhcb", "CPUTime": 500, "Priority": prio1},
            "2": {"Owner": "bob", "OwnerGroup": "lhcb_user", "VO": "lhcb", "CPUTime": 500, "Priority": 500.0,
                  "Sites": sites2 or [CNAF]},
        },
        "jobs": jobs or {"1": 1, "2": 1, "3": 2},
    }  # fmt: skip


def test_identical_task_queues_agree_within_float_precision() -> None:
    """Same queues, definitions, jobs; DIRAC's FLOAT Priority 499.99997 is within 1e-6 of our 500."""
    c = compare_queues(0, task_queues(SNAP, CFG), _dirac(prio1=499.99997), (1.0, 2.0))
    assert c.identical and [r.name for r in c.rows] == ["TQ1", "TQ2"]
    assert c.rows[0].ours_weight == 500.0 and c.rows[0].jedi_weight == 499.99997


def test_a_priority_a_definition_or_a_job_that_differs_is_named() -> None:
    """Priority 250 vs 500 differs in weight; another site list in definition; a job in another queue in jobs."""
    tqs = task_queues(SNAP, CFG)
    assert [r.differs for r in compare_queues(0, tqs, _dirac(prio1=250.0), (0, 0)).rows] == ["weight", ""]
    assert [r.differs for r in compare_queues(0, tqs, _dirac(sites2=[CERN]), (0, 0)).rows] == ["", "definition"]
    moved = compare_queues(0, tqs, _dirac(jobs={"1": 1, "2": 2, "3": 2}), (0, 0))
    assert [r.differs for r in moved.rows] == ["jobs", "jobs"] and not moved.identical


def test_a_queue_only_dirac_has_is_a_verdict_difference() -> None:
    """An empty task queue DIRAC left and ours has not: ours absent, DIRAC empty."""
    result = _dirac()
    result["taskqueues"]["3"] = {"Owner": "carol", "OwnerGroup": "lhcb_user", "VO": "lhcb", "CPUTime": 500,
                                 "Priority": 1.0}  # fmt: skip
    row = compare_queues(0, task_queues(SNAP, CFG), result, (0, 0)).rows[-1]
    assert (row.name, row.ours, row.jedi, row.differs) == ("TQ3", "absent", "empty", "verdict")


def test_pilot_rows_compare_membership_and_name_our_first_failing_rule() -> None:
    """A pilot at CERN: ours takes TQ1 and removes TQ2 (-Site); DIRAC returning [1] agrees, [1, 2] differs on TQ2."""
    m = match(SNAP, f"Site={CERN},CPUTime=500", CFG)
    pilot = {"status": "matched", "resource": {"Site": CERN, "CPUTime": 500}, "taskqueues": [1]}
    c = compare_pilot(7, m, pilot, 1.0, their_queues(_dirac()))
    assert c.identical
    assert [(r.name, r.ours, r.jedi) for r in c.rows if r.name.startswith("TQ")] == [
        ("TQ1", "+use", "+use"), ("TQ2", "-Site", "-excluded")]  # fmt: skip
    wrong = compare_pilot(7, m, {**pilot, "taskqueues": [1, 2]}, 1.0, their_queues(_dirac()))
    assert [r.name for r in wrong.differing()] == ["TQ2"]


def test_refusals_and_resource_tags_are_compared() -> None:
    """Both refuse a pilot without CPUTime (one row, agreeing); a tag DIRAC's Matcher did not add differs."""
    refused = match(SNAP, f"Site={CERN}", CFG)
    c = compare_pilot(1, refused, {"status": "refused", "message": "Missing mandatory field 'CPUTime'"}, 1.0, {})
    assert c.identical and [r.name for r in c.rows] == ["request"]
    m = match(SNAP, f"Site={CERN},CPUTime=500,NumberOfProcessors=2", CFG)
    pilot = {"status": "matched", "resource": {"Tag": ["1Processors", "2Processors"]}, "taskqueues": [1]}
    rows = {r.name: r for r in compare_pilot(1, m, pilot, 1.0, their_queues(_dirac())).rows}
    assert rows["resource:Tag"].differs == "resource"  # ours also has MultiProcessor
