"""Task (nucleus) brokerage under the panda-1.0.4 profile: the switches of the nucleus broker, hand-computed."""

from __future__ import annotations

from datetime import timedelta

import pytest

from brokerage.brokers import nucleus
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import PANDA_104, PROFILE_KEY
from tests.builders import TAKEN_AT, dataset, endpoint, queue, replica, site, task
from tests.core.brokers.test_nucleus import FC_SITES, cand, code, names, ngrid

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


def _frozen_grid(days: float) -> object:
    """Nuclei A, B, C and a satellite site S; task 1 (100 GB input, 50 files) frozen DAYS before the snapshot; A holds
    5 GB of it on disk and 10 GB on tape (its best endpoint: 10 GB, 10 %), B 11 GB on disk, C nothing, S all of it (the
    complete WAN-readable replica JEDI requires)."""
    sites = [site("A"), site("B"), site("C"), site("S", role="satellite")]
    eps = [endpoint("A_DATADISK", "A"), endpoint("A_DATATAPE", "A", is_tape=True, type="DATATAPE"),
           endpoint("B_DATADISK", "B"), endpoint("C_DATADISK", "C"), endpoint("S_DATADISK", "S")]  # fmt: skip
    reps = [
        replica(1, 1, "A_DATADISK", size_gb=5.0, nfiles=5),
        replica(1, 1, "A_DATATAPE", size_gb=10.0, nfiles=10),
        replica(1, 1, "B_DATADISK", size_gb=11.0, nfiles=6),
        replica(1, 1, "S_DATADISK", size_gb=100.0, nfiles=50),
    ]
    frozen = (TAKEN_AT - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return ngrid(sites=sites, queues=[queue(f"Q{n}", n) for n in "ABC"], tasks=[task(1, frozentime=frozen)],
                 datasets=[dataset(1, 1, size_gb=100.0, nfiles=50)], dataset_replicas=reps, ddm_endpoints=eps)  # fmt: skip


@pytest.mark.parametrize("days", [7.5, 30.0])
def test_data_check_period_skips_the_locality_check_of_a_long_frozen_task(days: float) -> None:
    """data_check_period_as_jedi: JEDI skips the data locality check when the task was frozen more than
    DATA_LOCATION_CHECK_PERIOD (7) days ago (AtlasProdTaskBroker.py:434-437): A (10 % of 100 GB, not more) and C
    (nothing) pass, where the seed's rule keeps only B (11 % > 10 %)."""
    snap = _frozen_grid(days)
    assert names(nucleus.broker(snap, 1)) == {"B"} and code(nucleus.broker(snap, 1), "A") == "-insize"
    d = nucleus.broker(snap, 1, PANDA)
    assert names(d) == {"A", "B", "C"}
    assert "DATA_LOCATION_CHECK_PERIOD=7 days" in d.extra["data_locality"]["reason"]


def test_data_check_period_keeps_the_data_factors_of_the_weight() -> None:
    """data_check_period_as_jedi: with the check skipped JEDI still weighs by the input it found
    (AtlasProdTaskBroker.py:559-570): ioIntensity unset, so A's local factor is 10 / 100 = 0.1 (its tape endpoint) and,
    as only 5 GB is on disk, the tape factor 0.001; B's is 11 / 100 = 0.11; C holds nothing: local factor 0."""
    d = nucleus.broker(_frozen_grid(8.0), 1, PANDA)
    assert cand(d, "A").factors["local"] == pytest.approx(0.1)
    assert cand(d, "A").factors["tape"] == 0.001
    assert cand(d, "B").factors["local"] == pytest.approx(0.11) and cand(d, "B").factors["tape"] == 1.0
    assert cand(d, "C").factors["local"] == 0.0


def test_data_check_period_is_strict_and_read_from_gdpconfig() -> None:
    """data_check_period_as_jedi: the period must be exceeded (now - frozenTime > 7 days): a task frozen exactly 7
    days ago is still checked; DATA_LOCATION_CHECK_PERIOD=10 keeps a task frozen 8 days ago checked, and 0 means 7."""
    assert names(nucleus.broker(_frozen_grid(7.0), 1, PANDA)) == {"B"}
    assert names(nucleus.broker(_frozen_grid(8.0), 1, PANDA.with_overrides({"DATA_LOCATION_CHECK_PERIOD": 10}))) == {
        "B"
    }
    assert names(nucleus.broker(_frozen_grid(8.0), 1, PANDA.with_overrides({"DATA_LOCATION_CHECK_PERIOD": 0}))) == {
        "A",
        "B",
        "C",
    }


def test_full_chain_only_accepts_an_allow_nucleus() -> None:
    """full_chain_only_as_jedi: seed 000 says fullChain=only is 'to be assigned to a nucleus with bareNucleus=only';
    JEDI tests only and require alike (AtlasProdTaskBroker.py:522-525), so AL (bareNucleus=allow) passes too and only
    N, without a bare mode, fails -full_chain."""
    snap = ngrid(sites=FC_SITES, tasks=[task(1, fullchain="only")])
    assert names(nucleus.broker(snap, 1)) == {"ON"}
    d = nucleus.broker(snap, 1, PANDA)
    assert names(d) == {"AL", "ON"} and code(d, "N") == "-full_chain"


def test_hint_mode_does_not_treat_the_task_site_as_pre_assigned() -> None:
    """nucleus_as_jedi: JEDI's job check in hint mode scans the nuclei's queues (siteListForTB), so a task naming a
    site is not pre-assigned there (AtlasProdJobBroker.py:183-200) and the checks skipped for pre-assigned tasks run:
    an IPv6 task fails A's only queue (IPv4 stack, -network) and A fails -job; B's IPv6 queue runs it."""
    queues = [queue("QA", "A", wnconnectivity="full#IPv4"), queue("QB", "B", wnconnectivity="full#IPv6")]
    snap = ngrid(queues=queues, tasks=[task(1, site="QA", ipconnectivity="full#IPv6")])
    d = nucleus.broker(snap, 1, PANDA)
    assert names(d) == {"B"} and code(d, "A") == "-job"
    assert {s["queue"]: s["criteria"] for s in d.extra["job_check"]["A"]} == {"QA": "-network"}
