"""Issue #33 item 13: for a pending task the answer comes first: the funnel step that emptied the list, numbered,
and the skipped queues grouped by criteria code (most first, `-test` last) with a drill-down to the tasks."""

from __future__ import annotations

from typing import Any

from app.viewmodels import answer, queues
from brokerage.brokers.router import run_job_brokerage
from brokerage.model.explain import Decision, FunnelStep, Skip
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot


def test_pending_task_groups_its_skips_by_criteria_most_first(snap: GridSnapshot) -> None:
    """Sample task 2 (8 cores): of 10 queues, -status removes MWT2_Q3, -link_unusable AGLT2_Q2 and AGLT2_Q6,
    -cpucore 6 single-core queues and -lowmemory the last one (BNL-ATLAS_Q5): step 13 of 28, the memory check,
    empties the list, and the groups read -cpucore 6, -link_unusable 2, then the ties by code."""
    d = run_job_brokerage(snap, 2, Config())
    assert answer.emptying_step(d) == {"number": 13, "of": 28, "filter": "memory check", "before": 1, "after": 0}
    groups = answer.skip_groups(d)
    assert [(g["criteria"], g["count"]) for g in groups] == [
        ("-cpucore", 6), ("-link_unusable", 2), ("-lowmemory", 1), ("-status", 1)
    ]  # fmt: skip
    assert groups[1]["names"] == ["AGLT2_Q2", "AGLT2_Q6"] and groups[2]["names"] == ["BNL-ATLAS_Q5"]
    assert answer.pending_sentence(d) == (
        "No queue left: step 13 of 28, memory check, removed the last 1 (of 10 considered)."
    )
    labels = queues.funnel_figure(d)["data"][0]["y"]
    assert "13. memory check" in labels and "11. core count check" in labels  # the same numbers as the sentence


def test_test_queues_are_never_the_headline() -> None:
    """Queues in test status take only test jobs, so -test is listed after the codes that explain the pending
    state, even when it removed the most queues."""
    skips = [Skip(f"T{i}", "-test", "queue is in test status", "status check") for i in range(5)]
    skips += [Skip("A", "-cpucore", "1 core < 8", "core count check")]
    d = Decision("production", 9, "pending", [], skips,
                 [FunnelStep("preliminary candidates", 6, 6), FunnelStep("status check", 6, 1),
                  FunnelStep("core count check", 1, 0)], {})  # fmt: skip
    assert [g["criteria"] for g in answer.skip_groups(d)] == ["-cpucore", "-test"]
    assert answer.emptying_step(d)["number"] == 3


def test_a_ranked_task_has_no_pending_answer(snap: GridSnapshot) -> None:
    """A task with candidates left gets no pending answer (the ranked table is its answer)."""
    assert answer.pending_sentence(run_job_brokerage(snap, 1, Config())) is None


def test_pending_tasks_drill_down_by_criteria_code(app_client: Any) -> None:
    """/api/pending?criteria=-cpucore keeps the pending brokerages -cpucore removed candidates of (tasks 2 and 3 of
    the sample grid, 6 and 1 queues), and the Queues page's answer links there."""
    body = app_client.get("/api/pending?criteria=-cpucore").get_json()
    assert body["criteria"] == "-cpucore"
    assert sorted((r["task"], r["removed_by_criteria"]) for r in body["pending"]) == [(2, 6), (3, 1)]
    assert {r["task"] for r in app_client.get("/api/pending").get_json()["pending"]} == {2, 3, 7}


def test_stabilizer_row_drills_down_to_the_users_tasks(snap: GridSnapshot) -> None:
    """A (PQ, user) row leads to the user's waiting analysis tasks: alice's task 7 has BNL-ATLAS_Q9 removed by the
    queue length check (-overloaded: 66 queued > 2 x max(20, running 19)), not by the Stabilizer; bob has none."""
    from app.viewmodels import stabilizer
    from brokerage.model.waiting import waiting_task_ids

    waiting = set(waiting_task_ids(snap))
    decide = lambda tid: run_job_brokerage(snap, tid, Config())  # noqa: E731
    (row,) = stabilizer.affected_tasks(snap.tasks, waiting, decide, "alice", "BNL-ATLAS_Q9")
    assert row["task"] == 7 and not row["stabilizer"]
    assert row["standing"].startswith("removed here by -overloaded: defined+activated+assigned+starting=66 > 2 x")
    assert stabilizer.affected_tasks(snap.tasks, waiting, decide, "bob", "BNL-ATLAS_Q9") == []


def test_stabilizer_table_shows_numbers_with_their_rules_on_hover() -> None:
    """The (PQ, user) table shows every number column, each limit's rule as its tooltip, the rule texts hidden."""
    from app.viewmodels import stabilizer

    cols = {c["field"]: c for c in stabilizer.column_defs()}
    assert cols["max_q_len"]["tooltipField"] == "max_q_len_rule" and cols["nQ_max"]["tooltipField"] == "nQ_max_rule"
    assert all(cols[r]["hide"] for r in stabilizer.RULE_COLUMNS)
    assert not any(cols[f].get("hide") for f, *_ in stabilizer.NUMBER_COLUMNS)
