"""Task (nucleus) brokerage under the panda-1.0.4 profile: the switches of the nucleus broker, hand-computed."""

from __future__ import annotations

from brokerage.brokers import nucleus
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import PANDA_104, PROFILE_KEY
from tests.builders import endpoint, queue, site
from tests.core.brokers.test_nucleus import code, names, ngrid

PANDA = Config().with_overrides({PROFILE_KEY: PANDA_104})


def test_nucleus_state_always_active_lets_an_inactive_nucleus_pass() -> None:
    """Seed 003: 'The nucleus status must be ACTIVE'; PanDA 1.0.4 sets every site's state to ACTIVE when it reads
    the site specs (entity_module.py:1846), so under nucleus_state_always_active an INACTIVE nucleus is not skipped."""
    snap = ngrid(sites=[site("A"), site("B", state="INACTIVE")])
    assert code(nucleus.broker(snap, 1), "B") == "-status"  # the seed profile (default)
    d = nucleus.broker(snap, 1, PANDA)
    assert code(d, "B") is None and names(d) == {"A", "B"}


def _hint_grid(b_disk: dict[str, str]) -> object:
    """Nuclei A and B, one queue each (QA, QB); B's DATADISK has the detailed statuses B_DISK, and B's queue also
    reads a DATATAPE whose statuses are all ON."""
    eps = [endpoint("A_DATADISK", "A"), endpoint("B_DATADISK", "B", **b_disk),
           endpoint("B_DATATAPE", "B", is_tape=True, type="DATATAPE")]  # fmt: skip
    rel = [{"panda_queue": "QA", "ddm_endpoint_name": "A_DATADISK", "default_write": True},
           {"panda_queue": "QB", "ddm_endpoint_name": "B_DATADISK", "default_write": True},
           {"panda_queue": "QB", "ddm_endpoint_name": "B_DATATAPE", "default_write": False}]  # fmt: skip
    return ngrid(ddm_endpoints=eps, panda_ddm_relation=rel)


def test_hint_mode_job_check_tests_only_datadisk_read_lan() -> None:
    """blacklist_as_jedi in the task broker's job check (hint mode): check_endpoints_with_blacklist looks at DATADISK
    endpoints only, so B's queue cannot read over LAN although its tape endpoint can (-read_lan_blacklist), B has
    no queue left and fails -job; the seed's blacklist counts any input endpoint, so B passes there."""
    snap = _hint_grid({"read_lan": "OFF"})
    assert code(nucleus.broker(snap, 1), "B") is None
    d = nucleus.broker(snap, 1, PANDA)
    assert code(d, "B") == "-job" and names(d) == {"A"}
    assert {s["queue"]: s["criteria"] for s in d.extra["job_check"]["B"]} == {"QB": "-read_lan_blacklist"}


def test_hint_mode_counts_every_nucleus_queue_as_the_nucleus() -> None:
    """blacklist_as_jedi in hint mode: JEDI puts the queues of every nucleus in sites_in_nucleus
    (AtlasProdJobBroker.py:269-273), and a nucleus' queue need not send output over WAN: B's second queue QB2 writes
    to B_DATADISK2, which cannot send over WAN (read_wan OFF), and still runs the task (B's first queue is offline)."""
    eps = [endpoint("A_DATADISK", "A"), endpoint("B_DATADISK", "B"), endpoint("B_DATADISK2", "B", read_wan="OFF")]
    rel = [{"panda_queue": q, "ddm_endpoint_name": e, "default_write": True}
           for q, e in (("QA", "A_DATADISK"), ("QB", "B_DATADISK"), ("QB2", "B_DATADISK2"))]  # fmt: skip
    queues = [queue("QA", "A"), queue("QB", "B", status="offline"), queue("QB2", "B")]
    d = nucleus.broker(ngrid(queues=queues, ddm_endpoints=eps, panda_ddm_relation=rel), 1, PANDA)
    assert code(d, "B") is None and names(d) == {"A", "B"}
