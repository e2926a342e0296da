"""The generic job broker (PanDA's GenJobBroker) for tasks of VOs other than ATLAS, and the router that sends them."""

from __future__ import annotations

from brokerage.brokers import generic
from brokerage.brokers.router import needs_nucleus, route, run_job_brokerage, tasks_needing_nucleus
from brokerage.checks import production_queues
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from tests.builders import counts, grid, queue, task


def wlcg(tid: int = 1, **kw: object) -> dict[str, object]:
    """A single-core task of VO wlcg."""
    return task(tid, vo="wlcg", **kw)


def wlcg_counts(q: str, gshare: str = "Rubin", **status: int) -> list[dict[str, object]]:
    """job_counts rows of VO wlcg for queue Q."""
    return [{**r, "vo": "wlcg"} for r in counts(q, gshare, **status)]


def test_a_task_of_another_vo_goes_to_the_generic_broker() -> None:
    """JEDI's plugin config sends atlas:any to AtlasProdJobBroker and every other VO (wlcg:any) to GenJobBroker."""
    assert route({"vo": "wlcg", "prodsourcelabel": "managed"}).name == "generic"
    assert route({"vo": "wlcg", "prodsourcelabel": "user"}).name == "generic"
    assert route({"vo": "atlas", "prodsourcelabel": "user"}).name == "analysis"
    assert route({"prodsourcelabel": "managed"}).name == "production"  # no VO: atlas


def test_only_atlas_tasks_go_to_task_brokerage() -> None:
    """Only ATLAS has a task broker (nucleus choice): an assigning wlcg task without nucleus is not in it."""
    assert not needs_nucleus({"vo": "wlcg", "status": "assigning", "nucleus": None})
    snap = grid([queue("A", "S")], [wlcg(1, status="assigning"), task(2, status="assigning")])
    assert tasks_needing_nucleus(snap) == [2]


def test_the_weight_is_genjobbrokers() -> None:
    """weight = (nRunning+1)/(nActivated+nAssigned+1)/(nAssigned+1), nAssigned = defined jobs, over every share:
    A (running 9, activated 1, defined 1): 10/3/2 = 1.667; B (running 3): 4/1/1 = 4 ranks first."""
    jc = wlcg_counts("A", running=9, activated=1, defined=1) + wlcg_counts("B", gshare="Other", running=3)
    snap = grid([queue("A", "S"), queue("B", "S")], [wlcg()], job_counts=jc)
    d = run_job_brokerage(snap, 1)
    assert d.broker == "generic" and d.ranked_names == ["B", "A"]
    assert [round(c.weight, 3) for c in d.candidates] == [4.0, 1.667]


def test_at_most_five_queues_are_kept() -> None:
    """Up to 5 sites by weight (maxNumSites = 5); the rest are cut with -low_weight."""
    qs = [queue(f"Q{i}", "S") for i in range(7)]
    jc = [r for i in range(7) for r in wlcg_counts(f"Q{i}", running=i)]
    d = generic.broker(grid(qs, [wlcg()], job_counts=jc), 1)
    assert d.ranked_names == ["Q6", "Q5", "Q4", "Q3", "Q2"]
    assert {s.candidate for s in d.skipped if s.criteria == "-low_weight"} == {"Q0", "Q1"}


def test_allow_no_pilot_and_test_label_pass_without_pilots() -> None:
    """nPilot == 0 is skipped unless the task's label is test or the queue's catchall holds allow_no_pilot."""
    qs = [queue("NOP", "S", npilot=0, catchall="allow_no_pilot"), queue("NOP2", "S", npilot=0)]
    assert generic.broker(grid(qs, [wlcg()]), 1).ranked_names == ["NOP"]
    assert generic.broker(grid(qs, [wlcg(prodsourcelabel="test")]), 1).ranked_names == ["NOP", "NOP2"]


def test_candidates_are_the_tasks_cloud_else_every_queue() -> None:
    """Without pre-assignment the candidates are the queues of the task's cloud; an unknown cloud gives all (WORLD)."""
    qs = [queue("US1", "S", cloud="US"), queue("DE1", "S", cloud="DE")]
    assert generic.broker(grid(qs, [wlcg(cloud="DE")]), 1).ranked_names == ["DE1"]
    assert sorted(generic.broker(grid(qs, [wlcg(cloud="XX")]), 1).ranked_names) == ["DE1", "US1"]


def test_a_preassigned_queue_is_used_even_offline_and_a_pattern_matches_in_the_cloud() -> None:
    """task.site names the queue, else is a regular expression over the cloud's queues; either way the queues are
    pre-assigned, so their status is not checked."""
    qs = [queue("DOMA_A", "S", status="offline"), queue("DOMA_B", "S"), queue("OTHER", "S")]
    assert generic.broker(grid(qs, [wlcg(site="DOMA_A")]), 1).ranked_names == ["DOMA_A"]
    assert sorted(generic.broker(grid(qs, [wlcg(site="^DOMA_")]), 1).ranked_names) == ["DOMA_A", "DOMA_B"]
    d = generic.broker(grid(qs, [wlcg(site="NOPE")]), 1)
    assert d.status == "pending" and "unknown site=NOPE" in d.message


def test_the_atlas_name_rule_does_not_apply() -> None:
    """GenJobBroker has no 'test in the name' rule: a DOMA production queue named *_TEST is a candidate."""
    snap = grid([queue("DOMA_LSST_TEST", "S")], [wlcg()])
    assert generic.broker(snap, 1, Config()).ranked_names == ["DOMA_LSST_TEST"]


def test_each_vos_broker_counts_only_its_vos_jobs() -> None:
    """JEDI counts jobs per VO (getJobStatisticsByGlobalShare(taskSpec.vo): WHERE vo=:vo). Queue A holds 50 running
    atlas jobs and wlcg's running 1, activated 4, defined 1; B holds 3 running wlcg jobs. The wlcg task weighs A
    (1+1)/(4+1+1)/(1+1) = 0.167 and B (3+1)/1/1 = 4, so B ranks first (summed over VOs A would weigh
    (51+1)/6/2 = 4.333 and win); the atlas task's production context sees A's 50 running jobs and none at B."""
    jc = counts("A", running=50) + wlcg_counts("A", running=1, activated=4, defined=1) + wlcg_counts("B", running=3)
    snap = grid([queue("A", "S"), queue("B", "S")], [wlcg(1), task(2)], job_counts=jc)
    d = run_job_brokerage(snap, 1)
    assert d.broker == "generic" and d.ranked_names == ["B", "A"]
    assert [round(c.weight, 3) for c in d.candidates] == [4.0, 0.167]
    assert d.candidates[1].details == {"nRunning": 1.0, "nActivated": 4.0, "nAssigned": 1.0}
    cache = GridCache(snap)
    atlas = production_queues.make_context(views.task_row(cache, 2), Config(), cache)
    wl = generic.make_context(views.task_row(cache, 1), Config(), cache)
    assert atlas.counts["running"].tolist() == [50.0, 0.0] and wl.counts["running"].tolist() == [1.0, 3.0]
    assert atlas.counts["activated"].tolist() == [0.0, 0.0]
