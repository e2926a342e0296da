"""DIRAC 9.1.22's Matcher and Limiter under the code profile (panda-1.0.4), against the project's earlier rules."""

from __future__ import annotations

from brokerage.dirac.matcher import match
from brokerage.model.gdpconfig import Config
from tests.core.dirac.helpers import CERN, job, snapshot
from tests.core.dirac.test_matcher import reasons

CODE = Config().with_overrides({"RULES": "panda-1.0.4"})


def test_processor_tags_start_at_one_in_dirac_9() -> None:
    """dirac_processor_tags_from_one: NumberOfProcessors 4 offers 1Processors..4Processors (range(1, n + 1))."""
    snap = snapshot([job(1, Tags=["1Processors"]), job(2, Tags=["4Processors", "MultiProcessor"])])
    pilot = f"Site={CERN},CPUTime=500,NumberOfProcessors=4"
    assert reasons(snap, pilot) == {1: ["Tag"], 2: []}
    assert reasons(snap, pilot, CODE) == {1: [], 2: []}
    assert match(snap, pilot, CODE).resource.tags == ("1Processors", "2Processors", "3Processors", "4Processors",
                                                      "MultiProcessor")  # fmt: skip


def test_max_ram_offers_no_gb_tags_in_dirac_9() -> None:
    """dirac_ram_not_tags: MaxRAM=4096 no longer offers 2GB..4GB, so a job tagged 4GB needs a pilot listing it."""
    snap = snapshot([job(1, Tags=["4GB"]), job(2)])
    assert reasons(snap, f"Site={CERN},CPUTime=500,MaxRAM=4096") == {1: [], 2: []}
    assert reasons(snap, f"Site={CERN},CPUTime=500,MaxRAM=4096", CODE) == {1: ["Tag"], 2: []}
    assert reasons(snap, f"Site={CERN},CPUTime=500,MaxRAM=4096,Tags=4GB", CODE) == {1: [], 2: []}


def test_limits_on_attributes_outside_the_jobs_table_are_ignored_in_dirac_9() -> None:
    """dirac_limits_job_columns: a Platform limit reached excludes nothing (not a column of the Jobs table); a
    JobType limit still does."""
    snap = snapshot(
        [job(1, Platforms=["el9"]), job(2, JobTypes=["MC"])],
        dirac_running_limits=[{"Site": CERN, "Attribute": "Platform", "Value": "el9", "Limit": 5},
                              {"Site": CERN, "Attribute": "JobType", "Value": "MC", "Limit": 5}],
        dirac_running_counts=[{"Site": CERN, "Attribute": "Platform", "Value": "el9", "Running": 5},
                              {"Site": CERN, "Attribute": "JobType", "Value": "MC", "Running": 5}],
    )  # fmt: skip
    only_platform = snap.replace(dirac_running_limits=snap.tables["dirac_running_limits"].iloc[:1])
    assert reasons(only_platform, f"Site={CERN},CPUTime=500") == {1: ["RunningLimit"], 2: []}
    m = match(only_platform, f"Site={CERN},CPUTime=500", CODE)
    assert reasons(only_platform, f"Site={CERN},CPUTime=500", CODE) == {1: [], 2: []}
    assert any("limit on Platform ignored" in n for n in m.notes)
    only_type = snap.replace(dirac_running_limits=snap.tables["dirac_running_limits"].iloc[1:])
    assert reasons(only_type, f"Site={CERN},CPUTime=500", CODE) == {1: [], 2: ["RunningLimit"]}


def test_site_and_ce_limits_are_merged_in_dirac_9() -> None:
    """dirac_ce_limits_merged: site limit 10 and CE limit 50 on JobType=MC with 20 running: the seed profile lets
    the CE's limit replace the site's (20 < 50, no hit); DIRAC checks both and the site's is reached."""
    snap = snapshot(
        [job(1, JobTypes=["MC"]), job(2)],
        dirac_running_limits=[{"Site": CERN, "Attribute": "JobType", "Value": "MC", "Limit": 10},
                              {"Site": CERN, "GridCE": "ce1", "Attribute": "JobType", "Value": "MC", "Limit": 50}],
        dirac_running_counts=[{"Site": CERN, "Attribute": "JobType", "Value": "MC", "Running": 20}],
    )  # fmt: skip
    pilot = f"Site={CERN},GridCE=ce1,CPUTime=500"
    assert reasons(snap, pilot) == {1: [], 2: []}
    assert reasons(snap, pilot, CODE) == {1: ["RunningLimit"], 2: []}
    assert reasons(snap, f"Site={CERN},GridCE=ce2,CPUTime=500") == {1: ["RunningLimit"], 2: []}  # the site's


def test_owner_with_several_groups_bypasses_the_other_conditions_in_dirac_9() -> None:
    """dirac_owner_groups_unbracketed: Owner=alice, OwnerGroup=[g1, g2] builds 'c(g1) OR c(g2) AND rest', so
    alice's g1 queue needing CPUTime 50000 (bucket 50000 > 500) and CNAF still matches a CERN pilot; alice's g2 queue
    (the last group) keeps every rule, and bob's g1 queue fails Owner (g1 has no JobSharing)."""
    snap = snapshot([job(1, group="g1", cpu=40000, Sites=["LCG.CNAF.it"]), job(2, group="g2", cpu=40000),
                     job(3, owner="bob", group="g1")])  # fmt: skip
    pilot = f"Site={CERN},CPUTime=500,Owner=alice,OwnerGroup=g1;g2"
    assert reasons(snap, pilot) == {1: ["CPUTime", "Site"], 2: ["CPUTime"], 3: ["Owner"]}
    assert reasons(snap, pilot, CODE) == {1: [], 2: ["CPUTime"], 3: ["Owner"]}
    assert any("unbracketed OR" in n for n in match(snap, pilot, CODE).notes)
    # one group: DIRAC brackets nothing to go wrong, the rules hold
    assert reasons(snap, f"Site={CERN},CPUTime=500,Owner=alice,OwnerGroup=g1", CODE) == {1: ["CPUTime", "Site"],
                                                                                         2: ["OwnerGroup", "CPUTime"],
                                                                                         3: ["Owner"]}  # fmt: skip
