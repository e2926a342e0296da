"""The snapshot → DIRAC driver document, and the random DIRAC grids (no DIRAC needed)."""

from __future__ import annotations

from brokerage.crosscheck.dirac_convert import ce_pilots, grid_document, resource_description
from brokerage.crosscheck.dirac_grids import random_dirac_grid
from brokerage.crosscheck.dirac_run import dirac_config
from brokerage.model.gdpconfig import Config
from tests.core.dirac.helpers import CERN, job, snapshot


def _snap():
    return snapshot(
        [job(2, group="lhcb_mc", VO="lhcb", Sites=[CERN, " "], Priority=3), job(1, cpu=4500, VO="lhcb"),
         job(3, Status="Matched", VO="lhcb", JobTypes=["Test"])],
        dirac_group_shares=[{"OwnerGroup": "lhcb_mc", "VO": "lhcb", "JobShare": 2000, "JobSharing": True}],
        dirac_ces=[{"Site": CERN, "GridCE": "ce1", "CPUTime": 86400, "NumberOfProcessors": 8, "MaxRAM": 16000,
                    "Tags": ["GPU"]}],
    )  # fmt: skip


def test_groups_carry_integral_shares_and_the_default_for_a_group_without_a_row() -> None:
    """DIRAC reads JobShare with an int default, so 2000.0 must be written 2000 (int('2000.0') falls back to 1000);
    a group without a row gets DIRAC_JOB_SHARE (1000) and its VO from its jobs."""
    doc = grid_document(_snap(), dirac_config(Config()), [])
    assert doc["groups"]["lhcb_mc"] == {"VO": "lhcb", "JobShare": 2000, "JobSharing": True, "AllowBackgroundTQs": False}
    assert isinstance(doc["groups"]["lhcb_mc"]["JobShare"], int)
    assert doc["groups"]["lhcb_user"]["JobShare"] == 1000 and doc["groups"]["lhcb_user"]["VO"] == "lhcb"


def test_jobs_are_waiting_or_matched_in_job_id_order_with_their_definitions() -> None:
    """insertJob order is JobID order; a Matched job comes with its status (the driver inserts and removes it once,
    leaving an empty task queue); blanks stay for DIRAC to strip."""
    doc = grid_document(_snap(), dirac_config(Config()), [])
    assert [(j["JobID"], j["Status"]) for j in doc["jobs"]] == [(1, "Waiting"), (2, "Waiting"), (3, "Matched")]
    assert doc["jobs"][1]["definition"]["Sites"] == [CERN, " "] and doc["jobs"][1]["Priority"] == 3
    assert doc["jobs"][0]["definition"]["CPUTime"] == 4500


def test_the_code_profile_caps_task_queues_at_5000_and_no_mask_is_none() -> None:
    """tq_split_as_dirac: 5000 jobs per task queue under panda-1.0.4; an empty site mask table is no mask."""
    doc = grid_document(_snap(), dirac_config(Config()), [])
    assert doc["max_jobs_in_tq"] == 5000 and doc["mask"] is None
    assert doc["buckets"] == [500, 5000, 50000, 300000]


def test_pilots_become_resource_descriptions() -> None:
    """Tags → Tag, RequiredTags → RequiredTag; a pilot without OwnerGroup is a generic pilot of the single VO, or
    lists every group when the grid has several VOs (our pilot has none)."""
    pilot = ce_pilots(_snap())[0]
    assert pilot == {"Site": CERN, "GridCE": "ce1", "CPUTime": 86400, "Tags": ["GPU"], "NumberOfProcessors": 8,
                     "MaxRAM": 16000}  # fmt: skip
    one = resource_description(pilot, ["lhcb"], ["lhcb_mc", "lhcb_user"])
    assert one["Tag"] == ["GPU"] and one["VirtualOrganization"] == "lhcb" and "OwnerGroup" not in one
    two = resource_description(pilot, ["lhcb", "gridpp"], ["g1", "g2"])
    assert two["OwnerGroup"] == ["g1", "g2"] and "VirtualOrganization" not in two
    assert resource_description({**pilot, "OwnerGroup": ["g1"]}, ["a", "b"], ["g1", "g2"])["OwnerGroup"] == ["g1"]


def test_random_dirac_grids_are_deterministic_and_vary() -> None:
    """The same seed gives the same grid; across seeds the fields the matcher reads vary."""
    a, pa, oa = random_dirac_grid(3)
    b, pb, ob = random_dirac_grid(3)
    assert a.tables["dirac_jobs"].equals(b.tables["dirac_jobs"]) and pa == pb and oa == ob
    seen = {"masks": set(), "caps": set(), "buckets": set(), "matched": 0, "limits": 0, "no_cpu": 0}
    for s in range(1, 40):
        snap, pilots, over = random_dirac_grid(s)
        seen["masks"].add(len(snap.tables["dirac_site_mask"]) > 0)
        seen["caps"].add(over.get("DIRAC_MAX_JOBS_IN_TQ", 5000))
        seen["buckets"].add(len(over["DIRAC_CPU_BUCKETS"]))
        seen["matched"] += int((snap.tables["dirac_jobs"]["Status"] == "Matched").sum())
        seen["limits"] += len(snap.tables["dirac_running_limits"])
        seen["no_cpu"] += sum("CPUTime" not in p for p in pilots)
    assert seen["masks"] == {True, False} and len(seen["caps"]) > 1 and seen["buckets"] == {4, 13}
    assert seen["matched"] and seen["limits"] and seen["no_cpu"]
