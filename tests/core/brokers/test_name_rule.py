"""The "test in the name" rule is the seed's only: PanDA 1.0.4 (profile panda-1.0.4) has none, in either broker."""

from __future__ import annotations

from brokerage.brokers import nucleus, production
from brokerage.model.gdpconfig import Config
from tests.builders import endpoint, grid, queue, site, task

PANDA = Config().with_overrides({"RULES": "panda-1.0.4"})


def doma_grid() -> object:
    """Nucleus D whose only production queue is DOMA_LSST_TEST, nucleus E with queue QE."""
    queues = [queue("DOMA_LSST_TEST", "D"), queue("QE", "E")]
    rel = [{"panda_queue": q["panda_queue"], "ddm_endpoint_name": f"{q['atlas_site']}_DATADISK", "default_write": True}
           for q in queues]  # fmt: skip
    return grid(queues, [task(1, status="assigning")], sites=[site("D"), site("E")],
                ddm_endpoints=[endpoint("D_DATADISK", "D"), endpoint("E_DATADISK", "E")], panda_ddm_relation=rel)  # fmt: skip


def test_the_seed_keeps_test_named_queues_out_of_both_brokers() -> None:
    """Seed 001: "queues with 'test' in the name are not preliminary candidates"; the nucleus job check does not
    count them either, so D has no production queue."""
    snap = doma_grid()
    assert production.broker(snap, 1).skip_of("DOMA_LSST_TEST").criteria == "-test"
    d = nucleus.broker(snap, 1)
    assert d.skip_of("D") is not None and d.skip_of("D").criteria == "-job"
    assert "no production queue" in d.skip_of("D").reason


def test_panda_1_0_4_has_no_name_rule() -> None:
    """JEDI has no such rule (switch no_test_name_rule): a real DOMA production queue named *_TEST is a job-broker
    candidate and makes its site a nucleus able to run the task's jobs."""
    snap = doma_grid()
    assert "DOMA_LSST_TEST" in production.broker(snap, 1, PANDA).ranked_names
    d = nucleus.broker(snap, 1, PANDA)
    assert sorted(d.ranked_names) == ["D", "E"]
