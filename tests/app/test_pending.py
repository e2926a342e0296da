"""Pending tasks and why: throttle headlines, the pending rows and /api/pending."""

from __future__ import annotations

import json

from app.viewmodels import pending as vm
from brokerage.brokers.batch import run_grid_serial as run_grid
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot

THROTTLE_MSG = "throttle to generate jobs due to User Analysis usage 92% > 90% of its target for a class C task"


def _throttled(task: int = 7) -> Decision:
    return Decision("analysis", task, "pending", [], [], [], {}, message=THROTTLE_MSG,
                    extra={"throttled": {"rule": "USAGE_THROTTLE_CLASS_C", "numbers": {}}})  # fmt: skip


def _text(tree) -> str:
    return json.dumps(
        tree.to_plotly_json(), default=lambda o: o.to_plotly_json() if hasattr(o, "to_plotly_json") else str(o)
    )


def test_a_throttled_task_is_explained_by_its_throttle_not_by_empty_counts() -> None:
    """A task held before any filter ran gets the throttle as its reason and headline."""
    d = _throttled()
    assert vm.throttle_sentence(d) == (
        "Held before any filter ran: no jobs are generated because "
        "User Analysis usage 92% > 90% of its target for a class C task."
    )
    assert vm.reason("analysis", {}, d)[0] == vm.THROTTLE


def test_a_throttled_decision_hides_the_contradicting_empty_tables() -> None:
    """The queues panel shows the throttle as its headline and hides the funnel and both empty tables."""
    from app.components.decision import body_style, job_decision_props

    props = job_decision_props(_throttled(), None)
    head = _text(props[0])
    assert "Throttled" in head and "92% > 90%" in head
    assert "queues considered" not in head and body_style(_throttled()) == {"display": "none"}


def test_pending_rows_name_the_criteria_that_removed_most_queues(snap: GridSnapshot) -> None:
    """Every pending brokerage of a run is one row, whose reason names its most frequent skip criteria."""
    run = run_grid(snap, Config())
    rows = vm.pending_rows(snap, run, lambda key: _throttled(key[1]))
    pending = {k[1] for k, o in run.outcomes.items() if o.status != "ok"}
    assert {r["task"] for r in rows} == pending
    three = next(r for r in rows if r["task"] == 3)
    assert three["kind"] == vm.ALL_SKIPPED and three["reason"].startswith("All 10 queues skipped; most by -lowmemory 8")
    assert vm.top_criteria({"-a": 1, "-b": 5, "-c": 5, "-d": 0}, top=2) == "-b 5, -c 5"


def test_task_page_headline_leads_with_the_throttle(app_client, monkeypatch) -> None:
    """The task page's job-brokerage line says the task is throttled, not "0 queues kept"."""
    from app.callbacks.detail import update_task_jobs
    from app.main import state

    monkeypatch.setattr(state, "job_decision", lambda tid, overrides=None: _throttled(tid))
    text = _text(update_task_jobs(7))
    assert "Throttled" in text and "queues kept" not in text


def test_api_pending_lists_pending_tasks_with_reasons(app_client) -> None:
    """/api/pending answers JSON with a row per pending brokerage and counts per kind of reason."""
    body = app_client.get("/api/pending").get_json()
    assert body["pending"] and set(body["counts"]) <= {vm.THROTTLE, vm.ALL_SKIPPED, vm.NO_NUCLEUS}
    assert {"task", "kind", "reason", "top_criteria"} <= set(body["pending"][0])


def test_pending_page_and_overview_link(app_client) -> None:
    """The /pending page renders, and the overview's waiting-tasks count links to it."""
    assert app_client.get("/pending").status_code == 200
    from app.callbacks.pending import pending_view

    assert "pending brokerages" in _text(pending_view())


def test_why_not_explains_queues_the_broker_never_considers(snap: GridSnapshot) -> None:
    """A queue outside the preliminary candidates is named with its type and the broker that owns it."""
    from app.viewmodels.whynot import filter_text, why_not
    from brokerage.brokers.router import run_job_brokerage

    d = run_job_brokerage(snap, 1, Config())
    kind, sentence = why_not(snap, d, "bnl-atlas_q9")  # an analysis queue, case-insensitive
    assert kind == "not considered" and "BNL-ATLAS_Q9 is an analysis queue, brokered by the analysis broker" in sentence
    assert why_not(snap, d, d.candidates[0].name)[0] == "ranked"
    assert why_not(snap, d, d.skipped[0].candidate)[0] == "skipped"
    assert why_not(snap, d, "CERN-PROD_Q")[1].startswith("No queue is named 'CERN-PROD_Q'")
    assert filter_text({"queue": {"filterType": "text", "type": "contains", "filter": " ANALY "}}) == "ANALY"


def test_why_callback_reads_the_skipped_table_filter(app_client) -> None:
    """Typing a queue into the skipped table's filter answers why it is not there, without the box."""
    from app.callbacks.queues import update_why

    text = _text(update_why(1, None, {"queue": {"filter": "BNL-ATLAS_Q9"}}))
    assert "never considers BNL-ATLAS_Q9" in text


def test_link_sentence_says_what_the_numbers_do() -> None:
    """A link over NQUEUED_SAT_CAP is explained as skipped by -link_unusable, in one sentence with both numbers."""
    from app.viewmodels.network import link_sentence, parse_link

    d = {"src": "AGLT2", "nucleus": "CERN-PROD", "NQUEUED_SAT_CAP": 150, "nqueued": 412.0, "blocked": False,
         "closeness": 3.0, "weight": 0.5, "queued_weight": 0.1, "throughput_weight": 0.4, "rule": "mbps"}  # fmt: skip
    assert link_sentence(d) == "queued files 412 > NQUEUED_SAT_CAP 150: the link is skipped by -link_unusable."
    assert link_sentence({**d, "nqueued": 20.0}).startswith("queued files 20 ≤ NQUEUED_SAT_CAP 150: network weight 0.5")
    assert parse_link("AGLT2>CERN-PROD") == ("AGLT2", "CERN-PROD") and parse_link("AGLT2") is None


def test_link_sentence_shows_its_weighting() -> None:
    """The network weight is NW_QUEUE_IMPORTANCE × queuedWeight + (1 − NW_QUEUE_IMPORTANCE) × throughputWeight, with
    queuedWeight = 2 − nQueued/NQUEUED_SAT_CAP: 40 files queued, cap 150, importance 0.5, throughput weight 1.5
    give 0.5 × 1.73 + 0.5 × 1.5 = 1.62, and the sentence shows each factor."""
    from app.viewmodels.network import link_sentence

    qw = 2 - 40 / 150
    d = {"src": "MWT2", "nucleus": "BNL-ATLAS", "NQUEUED_SAT_CAP": 150, "nqueued": 40.0, "blocked": False,
         "closeness": 3.0, "weight": 0.5 * qw + 0.5 * 1.5, "queued_weight": qw, "throughput_weight": 1.5,
         "rule": "throughput dashb_mbps_1h", "NW_QUEUE_IMPORTANCE": 0.5}  # fmt: skip
    assert link_sentence(d) == (
        "queued files 40 ≤ NQUEUED_SAT_CAP 150: network weight 1.62 = 0.5 × queued 1.73 (2 − 40/150) "
        "+ 0.5 × throughput 1.5 (throughput dashb_mbps_1h); 0.5 is NW_QUEUE_IMPORTANCE."
    )


def test_network_nucleus_filter_and_congested_links(app_client) -> None:
    """?nucleus= keeps one column, and the congested links come most-queued first."""
    from app.callbacks.network import update_congested, update_heatmap, update_link_detail

    fig = update_heatmap("queued", "BNL-ATLAS")
    assert list(fig.data[0].x) == ["BNL-ATLAS"] and fig.data[0].zmax == 150
    rows = update_congested(None)
    assert [r["queued"] for r in rows] == sorted((r["queued"] for r in rows), reverse=True)
    assert {r["nucleus"] for r in update_congested("CERN-PROD")} == {"CERN-PROD"}
    assert "NQUEUED_SAT_CAP" in _text(update_link_detail("MWT2>BNL-ATLAS"))
    assert app_client.get("/network?nucleus=BNL-ATLAS&link=MWT2>BNL-ATLAS").status_code == 200


def test_stabilizer_rows_carry_excess_largest_first(snap: GridSnapshot) -> None:
    """Every (PQ, user) row carries excess = nQ_user − max_q_len, and the rows come largest excess first."""
    from app.viewmodels import stabilizer
    from brokerage.brokers.stabilizer import stabilizer_grid
    from brokerage.model.cache import GridCache

    rows = stabilizer.rows(stabilizer_grid(GridCache(snap), Config()))
    assert all(r["excess"] == round(r["nQ_user"] - r["max_q_len"], 3) for r in rows)
    assert [r["excess"] for r in rows] == sorted((r["excess"] for r in rows), reverse=True)


def test_stabilizer_opens_on_the_whole_grid(app_client) -> None:
    """Without ?user= the page picks no user, so a shared ?queue= link shows every user at that queue."""
    import dash

    tree = dash.page_registry["app.pages.stabilizer"]["layout"](queue="BNL-ATLAS_Q9")
    found = {}

    def walk(c) -> None:
        if getattr(c, "id", None):
            found[c.id] = c
        kids = getattr(c, "children", None)
        for k in kids if isinstance(kids, list) else [kids]:
            if hasattr(k, "to_plotly_json"):
                walk(k)

    walk(tree)
    assert getattr(found["stab-user"], "value", None) is None and found["stab-queue"].value == "BNL-ATLAS_Q9"
