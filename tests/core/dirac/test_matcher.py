"""DIRAC matcher: one hand-computed case per rule, request-level refusals, wildcards, the explanation."""

from __future__ import annotations

from typing import Any

import pytest

from brokerage.dirac.matcher import RULE_NAMES, match
from brokerage.dirac.pilot import MISSING_CPU, MISSING_SITE, WRONG_CONDITIONS, PilotError, parse_pilot
from brokerage.model.gdpconfig import Config
from tests.core.dirac.helpers import CERN, CNAF, job, snapshot


def reasons(snap, pilot: str, config: Config | None = None, **kw: Any) -> dict[int, list[str]]:
    """Task queue id -> failing rule names."""
    d = match(snap, pilot, config or Config(), **kw).to_dict()
    return {t["id"]: [r["rule"] for r in t["reasons"]] for t in d["taskqueues"]}


def texts(snap, pilot: str, config: Config | None = None) -> dict[int, list[str]]:
    """Task queue id -> failing rule sentences."""
    d = match(snap, pilot, config or Config()).to_dict()
    return {t["id"]: [r["text"] for r in t["reasons"]] for t in d["taskqueues"]}


def test_cpu_bucket_edge_4000s_job_refused_by_4500s_pilot() -> None:
    """A 4,000 s job falls in the 5,000 s bucket and is refused by a 4,500 s pilot, taken by a 5,000 s one."""
    snap = snapshot([job(1, cpu=4000)])
    assert texts(snap, f"Site={CERN},CPUTime=4500") == {1: ["CPUTime bucket 5000 s > resource CPUTime 4500 s"]}
    assert reasons(snap, f"Site={CERN},CPUTime=5000") == {1: []}


def test_cpu_bucket_edge_above_last_bucket_needs_only_the_last() -> None:
    """A 10^6 s job is capped at 300,000 s: a 300,000 s pilot takes it, a 299,999 s pilot does not."""
    snap = snapshot([job(1, cpu=10**6)])
    assert reasons(snap, f"Site={CERN},CPUTime=300000") == {1: []}
    assert reasons(snap, f"Site={CERN},CPUTime=299999") == {1: ["CPUTime"]}


def test_owner_group_must_match() -> None:
    """Owner Group must match: a lhcb_mc pilot refuses the lhcb_user queue."""
    snap = snapshot([job(1, group="lhcb_user"), job(2, group="lhcb_mc")])
    assert texts(snap, f"Site={CERN},CPUTime=500,OwnerGroup=lhcb_mc") == {
        1: ["OwnerGroup lhcb_user not accepted by the resource (lhcb_mc)"],
        2: [],
    }


def test_owner_must_match_unless_group_has_job_sharing() -> None:
    """Owner must match when the group lacks JobSharing; a JobSharing group's queue accepts any owner."""
    shares = [{"OwnerGroup": "lhcb_mc", "JobShare": 100.0, "JobSharing": True}]
    snap = snapshot([job(1, "bob", "lhcb_user"), job(2, "bob", "lhcb_mc")], dirac_group_shares=shares)
    got = texts(snap, f"Site={CERN},CPUTime=500,OwnerGroup=lhcb_user;lhcb_mc,Owner=alice")
    assert got == {1: ["Owner bob ≠ alice (group lhcb_user has no JobSharing)"], 2: []}


def test_site_must_be_accepted_and_not_banned() -> None:
    """Site must be in the job's sites (empty = any) and not in its banned sites."""
    snap = snapshot([job(1, Sites=[CNAF]), job(2, BannedSites=[CERN]), job(3)])
    assert texts(snap, f"Site={CERN},CPUTime=500") == {
        1: [f"Site {CERN} not in job sites [{CNAF}]"],
        2: [f"Site {CERN} banned by the job"],
        3: [],
    }


def test_grid_ce_platform_and_job_type_if_required() -> None:
    """GridCE, Platform and JobType must be among the job's values when it lists any."""
    snap = snapshot([job(1, GridCEs=["ce2"]), job(2, Platforms=["el8"]), job(3, JobTypes=["MCSimulation"]), job(4)])
    got = reasons(snap, f"Site={CERN},CPUTime=500,GridCE=ce1,Platform=el9,JobType=User")
    assert got == {1: ["GridCE"], 2: ["Platform"], 3: ["JobType"], 4: []}
    # a pilot that does not say its GridCE/Platform/JobType is not restricted by them
    assert reasons(snap, f"Site={CERN},CPUTime=500") == {1: [], 2: [], 3: [], 4: []}


def test_every_failing_rule_is_reported() -> None:
    """A queue failing three rules lists all three, in DIRAC's order."""
    snap = snapshot([job(1, cpu=6000, Sites=[CNAF], Platforms=["el8"])])
    assert reasons(snap, f"Site={CERN},CPUTime=500,Platform=el9") == {1: ["CPUTime", "Site", "Platform"]}


def test_tags_of_the_queue_must_be_offered_by_the_pilot() -> None:
    """Tag: the queue's tags must be a subset of the pilot's; a pilot with no tags takes only tag-less queues."""
    snap = snapshot([job(1, Tags=["MultiProcessor", "8Processors"]), job(2, Tags=["GPU"]), job(3)])
    assert texts(snap, f"Site={CERN},CPUTime=500") == {
        1: ["missing resource tags [8Processors, MultiProcessor]"],
        2: ["missing resource tags [GPU]"],
        3: [],
    }
    # NumberOfProcessors=8 adds 2Processors..8Processors and MultiProcessor
    assert reasons(snap, f"Site={CERN},CPUTime=500,NumberOfProcessors=8") == {1: [], 2: ["Tag"], 3: []}


def test_max_ram_adds_gb_tags() -> None:
    """MaxRAM=4096 MB gives 2GB..4GB tags: a 4GB queue matches, a 6GB one does not."""
    snap = snapshot([job(1, Tags=["4GB"]), job(2, Tags=["6GB"])])
    assert reasons(snap, f"Site={CERN},CPUTime=500,MaxRAM=4096") == {1: [], 2: ["Tag"]}


def test_auto_tags_stop_above_1024_and_whole_node_is_a_key() -> None:
    """Matcher: no <n>Processors tags when n > 1024 (MultiProcessor still); WholeNode is added whatever its value."""
    snap = snapshot([job(1, Tags=["MultiProcessor"]), job(2, Tags=["2Processors"]), job(3, Tags=["WholeNode"])])
    assert reasons(snap, f"Site={CERN},CPUTime=500,NumberOfProcessors=2000") == {1: [], 2: ["Tag"], 3: ["Tag"]}
    assert reasons(snap, f"Site={CERN},CPUTime=500,WholeNode=false")[3] == []


def test_required_tags_need_tags() -> None:
    """RequiredTags are dropped when the pilot sends no Tags (a note says so), so they restrict nothing."""
    snap = snapshot([job(1)])
    m = match(snap, f"Site={CERN},CPUTime=500,RequiredTags=GPU")
    assert m.status == "matched" and "RequiredTags ignored: the pilot sent no Tags" in m.notes


def test_required_tag_must_be_carried_by_the_queue() -> None:
    """RequiredTag: the queue must carry every tag the pilot requires."""
    snap = snapshot([job(1, Tags=["GPU"]), job(2)])
    assert texts(snap, f"Site={CERN},CPUTime=500,Tags=GPU,RequiredTags=GPU") == {
        1: [],
        2: ["resource requires tags [GPU]"],
    }


def test_running_limit_excludes_queues_of_the_limited_value() -> None:
    """RunningLimit: JobType=MCSimulation limited to 100 at CERN with 100 running excludes MCSimulation queues."""
    snap = snapshot(
        [job(1, JobTypes=["MCSimulation"]), job(2, JobTypes=["User"]), job(3)],
        dirac_running_limits=[{"Site": CERN, "Attribute": "JobType", "Value": "MCSimulation", "Limit": 100}],
        dirac_running_counts=[{"Site": CERN, "Attribute": "JobType", "Value": "MCSimulation", "Running": 100}],
    )
    assert texts(snap, f"Site={CERN},CPUTime=500") == {
        1: [f"JobType=MCSimulation at {CERN}: 100 running ≥ limit 100"],
        2: [],
        3: [],
    }
    assert reasons(snap, f"Site={CNAF},CPUTime=500") == {1: [], 2: [], 3: []}  # the limit is CERN's
    off = Config().with_overrides({"DIRAC_CHECK_JOB_LIMITS": False})
    assert reasons(snap, f"Site={CERN},CPUTime=500", off)[1] == []


def test_running_limit_below_the_limit_passes() -> None:
    """99 running against a limit of 100 excludes nothing."""
    snap = snapshot(
        [job(1, JobTypes=["MCSimulation"])],
        dirac_running_limits=[{"Site": CERN, "Attribute": "JobType", "Value": "MCSimulation", "Limit": 100}],
        dirac_running_counts=[{"Site": CERN, "Attribute": "JobType", "Value": "MCSimulation", "Running": 99}],
    )
    assert reasons(snap, f"Site={CERN},CPUTime=500") == {1: []}


def test_negative_condition_needs_every_limited_attribute() -> None:
    """Limits on JobType and OwnerGroup exclude only queues hitting both (DIRAC ORs one piece per attribute)."""
    limits = [{"Site": CERN, "Attribute": "JobType", "Value": "MC", "Limit": 1},
              {"Site": CERN, "Attribute": "OwnerGroup", "Value": "lhcb_mc", "Limit": 1}]  # fmt: skip
    counts = [{"Site": CERN, "Attribute": "JobType", "Value": "MC", "Running": 5},
              {"Site": CERN, "Attribute": "OwnerGroup", "Value": "lhcb_mc", "Running": 5}]  # fmt: skip
    snap = snapshot([job(1, group="lhcb_mc", JobTypes=["MC"]), job(2, JobTypes=["MC"]), job(3, group="lhcb_mc")],
                    dirac_running_limits=limits, dirac_running_counts=counts)  # fmt: skip
    assert reasons(snap, f"Site={CERN},CPUTime=500") == {1: ["RunningLimit"], 2: [], 3: []}


def test_matching_delay_blocks_recently_matched_values() -> None:
    """MatchingDelay: Owner=alice matched 20 s ago at CERN with a 60 s delay blocks alice's queue for 40 s more."""
    delays = [{"Site": CERN, "Attribute": "Owner", "Value": "alice", "Delay": 60, "SinceLastMatch": 20.0},
              {"Site": CERN, "Attribute": "Platform", "Value": "el9", "Delay": 60, "SinceLastMatch": 90.0}]  # fmt: skip
    snap = snapshot([job(1, "alice"), job(2, "bob", Platforms=["el9"])], dirac_matching_delays=delays)
    assert texts(snap, f"Site={CERN},CPUTime=500") == {
        1: [f"Owner=alice delayed at {CERN}: matched 20 s ago, 40 s of 60 s left"],
        2: [],
    }


def test_empty_task_queue_cannot_be_matched() -> None:
    """Empty: a definition seen only on a just-Matched job is an empty queue, refused."""
    snap = snapshot([job(1, Status="Matched"), job(2, owner="bob")])
    got = match(snap, f"Site={CERN},CPUTime=500").to_dict()
    assert [t["reasons"] for t in got["taskqueues"]] == [
        [],
        [{"rule": "Empty", "text": "task queue has no waiting jobs"}],
    ]
    assert got["matched"]["taskqueue"] == 1


def test_masked_site_takes_only_test_jobs() -> None:
    """A pilot at a Banned site is treated as JobType=Test: queues of other job types are refused, with the reason."""
    snap = snapshot([job(1, JobTypes=["User"]), job(2, JobTypes=["Test"])],
                    dirac_site_mask=[{"Site": CERN, "Status": "Banned"}, {"Site": CNAF, "Status": "Active"}])  # fmt: skip
    assert texts(snap, f"Site={CERN},CPUTime=500") == {
        1: ["JobType Test not in the job's list [User] (site not in the mask: only Test jobs)"],
        2: [],
    }
    assert reasons(snap, f"Site={CNAF},CPUTime=500") == {1: [], 2: []}


def test_any_wildcard_disables_the_rule() -> None:
    """Site=ANY disables the Site and BannedSite rules and is reported as skipped (any)."""
    snap = snapshot([job(1, Sites=[CNAF], BannedSites=[CERN])])
    m = match(snap, "Site=ANY,CPUTime=500")
    assert m.to_dict()["taskqueues"][0]["reasons"] == []
    assert m.not_applied["Site"].startswith("skipped (any)")


@pytest.mark.parametrize(
    ("pilot", "message"),
    [("CPUTime=500", MISSING_SITE), (f"Site={CERN}", MISSING_CPU),
     (f"Site={CERN},CPUTime=5,Tags=A,RequiredTags=B", WRONG_CONDITIONS)],
)  # fmt: skip
def test_request_level_refusals(pilot: str, message: str) -> None:
    """Missing Site, missing CPUTime and RequiredTags outside Tags refuse the whole request."""
    d = match(snapshot([job(1)]), pilot).to_dict()
    assert d["status"] == "refused" and d["message"] == message and d["matched"] is None
    assert {t["verdict"] for t in d["taskqueues"]} == {"refused"}


@pytest.mark.parametrize(("text", "field"), [("Site=A,Colour=red", "Colour"), ("Site=A,CPUTime=abc", "CPUTime"),
                                             ("Site=A,oops", "oops"), ("Site=A,NumberOfProcessors=-1",
                                                                        "NumberOfProcessors")])  # fmt: skip
def test_bad_pilot_strings_name_the_field(text: str, field: str) -> None:
    """Unknown fields and unreadable values raise PilotError naming the field."""
    with pytest.raises(PilotError) as err:
        parse_pilot(text)
    assert err.value.field == field


def test_explanation_comes_from_the_same_masks_as_the_funnel() -> None:
    """The funnel counts first failures per rule; eligible queues have no reasons; verdicts cover every queue."""
    snap = snapshot([job(1, cpu=6000), job(2, Sites=[CNAF]), job(3), job(4, owner="bob")])
    m = match(snap, f"Site={CERN},CPUTime=500", seed=3)
    d = m.to_dict()
    steps = {f["filter"]: (f["before"], f["after"]) for f in d["funnel"]}
    assert steps["CPUTime"] == (4, 3) and steps["Site"] == (3, 2)
    assert [f["filter"] for f in d["funnel"]][: len(RULE_NAMES)] == list(RULE_NAMES)
    verdicts = {t["id"]: t["verdict"] for t in d["taskqueues"]}
    assert verdicts[1] == verdicts[2] == "excluded"
    assert sorted([verdicts[3], verdicts[4]]) == ["eligible", "matched"]
    assert d["matched"]["taskqueue"] in (3, 4)
    assert m.as_decision().ranked_names[0] in ("3", "4")
