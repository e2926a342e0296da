"""JEDI task statuses and transitions: the seed's chart, the command paths, and what is refused."""

from __future__ import annotations

from collections import deque

import pytest

from brokerage.model.snapshot import frame
from brokerage.sim import task_states as ts
from brokerage.sim.status_log import log_problems

# The seed's status list ("Transition of task status") plus the command/data-carousel statuses of reference §7.1.
SEED_STATUSES = {
    "registered", "defined", "assigning", "ready", "pending", "scouting", "scouted", "running", "prepared", "done",
    "failed", "finished", "aborting", "aborted", "finishing", "topreprocess", "preprocessing", "tobroken", "broken",
    "toretry", "toincexec", "rerefine", "paused", "throttled", "exhausted", "passed",
}  # fmt: skip
# Arrows of the official chart (reference §7.2); "a<->b" arrows appear in both directions.
CHART = [
    ("registered", "topreprocess"), ("topreprocess", "preprocessing"), ("preprocessing", "registered"),
    ("preprocessing", "tobroken"), ("registered", "tobroken"), ("registered", "pending"), ("pending", "registered"),
    ("registered", "defined"), ("defined", "pending"), ("pending", "defined"), ("defined", "ready"),
    ("defined", "assigning"), ("defined", "tobroken"), ("ready", "pending"), ("pending", "ready"),
    ("ready", "assigning"), ("assigning", "ready"), ("ready", "tobroken"), ("ready", "scouting"), ("ready", "running"),
    ("scouting", "tobroken"), ("scouting", "pending"), ("pending", "scouting"), ("scouting", "scouted"),
    ("scouted", "running"), ("running", "pending"), ("pending", "running"), ("running", "throttled"),
    ("throttled", "running"), ("running", "tobroken"), ("running", "prepared"), ("tobroken", "broken"),
    ("prepared", "done"), ("prepared", "finished"), ("prepared", "failed"), ("prepared", "exhausted"),
    ("exhausted", "finishing"), ("exhausted", "toretry"), ("pending", "finishing"), ("finishing", "passed"),
    ("passed", "done"), ("passed", "finished"), ("passed", "failed"), ("finished", "toretry"),
    ("failed", "toretry"), ("toretry", "ready"), ("done", "toincexec"), ("finished", "toincexec"),
    ("failed", "toincexec"), ("toincexec", "rerefine"), ("rerefine", "defined"), ("aborting", "aborted"),
]  # fmt: skip


def test_status_list_covers_the_seed() -> None:
    """Every status of the seed's list is known, has a description, and has a transition entry."""
    assert set(ts.TASK_STATUSES) >= SEED_STATUSES
    assert len(ts.TASK_STATUSES) == len(set(ts.TASK_STATUSES)) == 31
    assert set(ts.DESCRIPTIONS) == set(ts.TASK_STATUSES) == set(ts.TRANSITIONS)
    assert all(ts.DESCRIPTIONS[s] for s in ts.TASK_STATUSES)


def test_transitions_only_name_known_statuses() -> None:
    """Every target of TRANSITIONS is a known status."""
    for old, nxt in ts.TRANSITIONS.items():
        assert nxt <= set(ts.TASK_STATUSES), old


@pytest.mark.parametrize(("old", "new"), CHART)
def test_every_chart_arrow_is_allowed(old: str, new: str) -> None:
    """Each arrow of the official task status chart is an allowed transition."""
    assert ts.is_allowed(old, new)


def test_the_charts_done_to_toretry_arrow_is_no_move() -> None:
    """The chart draws done -> toretry, but no retry reaches it: seed 003 retries "finished or exhausted" tasks and
    PanDA's server refuses done, so the machine (the retry command's one list) refuses it too."""
    assert not ts.is_allowed("done", "toretry")
    assert "done" not in ts.RETRY_FROM_SEED | ts.RETRY_FROM_CODE


def test_a_new_task_starts_registered() -> None:
    """None (task creation) may only be followed by registered."""
    assert ts.is_allowed(None, "registered")
    assert [s for s in ts.TASK_STATUSES if ts.is_allowed(None, s)] == ["registered"]
    with pytest.raises(ts.TransitionError, match="must start as 'registered', not 'running'"):
        ts.check_transition(None, "running")


@pytest.mark.parametrize(
    ("old", "new"),
    [("done", "running"), ("broken", "ready"), ("aborted", "running"), ("registered", "running"),
     ("finished", "aborting"), ("defined", "scouting"), ("scouted", "scouting"), ("prepared", "paused"),
     ("running", "running"), ("passed", "exhausted"), ("ready", "bogus"), ("bogus", "ready")],
)  # fmt: skip
def test_illegal_transitions_are_refused(old: str, new: str) -> None:
    """Changes the chart and the commands do not allow are refused."""
    assert not ts.is_allowed(old, new)
    with pytest.raises(ts.TransitionError):
        ts.check_transition(old, new)


def test_refusal_names_both_statuses_and_the_allowed_ones() -> None:
    """The TransitionError message names the old and new status and lists the allowed next statuses."""
    with pytest.raises(ts.TransitionError) as err:
        ts.check_transition("done", "running")
    assert str(err.value) == "task status 'done' cannot change to 'running'; allowed next statuses: toincexec"
    with pytest.raises(ts.TransitionError, match="allowed next statuses: none"):
        ts.check_transition("broken", "ready")


def test_broken_is_the_only_dead_end() -> None:
    """Final statuses only move on by command (retry, incexec); broken cannot move at all."""
    assert {"done", "finished", "failed", "aborted", "broken"} == ts.FINAL_STATUSES
    assert ts.TRANSITIONS["broken"] == frozenset()
    assert ts.TRANSITIONS["aborted"] == {"toincexec"}
    assert ts.TRANSITIONS["done"] == {"toincexec"}  # retry is refused from done (seed 003, the server)
    for final in ("finished", "failed"):
        assert ts.TRANSITIONS[final] == {"toretry", "toincexec"}


def test_kill_pause_and_finish_follow_the_server_rules() -> None:
    """kill/finish are refused in final and closing statuses; pause is refused in final and paused statuses."""
    for s in ("finished", "done", "prepared", "broken", "aborted", "toabort", "aborting", "failed"):
        assert not ts.is_allowed(s, "aborting") and not ts.is_allowed(s, "finishing"), s
    for s in ("registered", "defined", "assigning", "ready", "pending", "scouting", "running", "exhausted", "paused"):
        assert ts.is_allowed(s, "aborting"), s
    for s in ("finished", "failed", "done", "aborted", "broken", "paused"):
        assert not ts.is_allowed(s, "paused"), s
    assert ts.is_allowed("aborting", "toabort") and ts.is_allowed("toabort", "aborted")


def test_retry_and_incexec_paths() -> None:
    """retry goes toretry -> ready (or straight back to running from exhausted); incexec goes via rerefine."""
    assert ts.is_allowed("exhausted", "toretry") and ts.is_allowed("toretry", "ready")
    assert ts.is_allowed("exhausted", "running")
    assert ts.is_allowed("aborted", "toincexec") and ts.is_allowed("toincexec", "rerefine")
    assert not ts.is_allowed("aborted", "toretry")


def test_only_refreshable_statuses_repeat() -> None:
    """A status may follow itself only where JEDI rewrites it (re-brokerage, new hold, avalanche, throttle)."""
    assert {s for s in ts.TASK_STATUSES if ts.is_allowed(s, s)} == set(ts.REFRESHABLE)


def _reachable(start: str) -> set[str]:
    seen, todo = {start}, deque([start])
    while todo:
        for nxt in ts.TRANSITIONS[todo.popleft()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_every_status_is_reachable_and_every_task_can_end() -> None:
    """Every status can be reached from registered, and from every status some final status can be reached."""
    assert _reachable("registered") == set(ts.TASK_STATUSES)
    for s in ts.TASK_STATUSES:
        assert _reachable(s) & ts.FINAL_STATUSES, s


def test_resume_returns_to_the_paused_in_status() -> None:
    """In a status history, a resume must go back to the status the task was paused in."""
    assert ts.history_problems(["registered", "defined", "paused", "defined", "ready"]) == []
    problems = ts.history_problems(["registered", "defined", "paused", "ready"])
    assert len(problems) == 1 and "returns to 'defined'" in problems[0]
    with pytest.raises(ts.TransitionError) as err:
        ts.check_history(["defined", "done"])
    assert len(err.value.problems) == 2  # no registered start, and defined -> done


def test_log_problems_checks_a_whole_table() -> None:
    """log_problems reports bad pairs, resumes to another status, unknown tasks and a last status unlike the task's."""
    rows = [
        ("registered", 1, "2026-01-01T00:00:00Z"), ("defined", 1, "2026-01-01T00:01:00Z"),
        ("paused", 1, "2026-01-01T00:02:00Z"), ("ready", 1, "2026-01-01T00:03:00Z"),
        ("registered", 2, "2026-01-01T00:00:00Z"), ("done", 2, "2026-01-01T00:05:00Z"),
        ("registered", 3, "2026-01-01T00:00:00Z"),
    ]  # fmt: skip
    log = frame("task_status_log", [{"status": s, "jeditaskid": t, "modificationtime": w} for s, t, w in rows])
    tasks = frame("tasks", [{"jeditaskid": 1, "status": "ready"}, {"jeditaskid": 2, "status": "running"}])
    problems = log_problems(log, tasks)
    assert any("task 1" in p and "returns to 'defined'" in p for p in problems)
    assert any("task 2" in p and "'registered' cannot change to 'done'" in p for p in problems)
    assert any("task 2 last logged 'done' but tasks.status is 'running'" in p for p in problems)
    assert any("task 3 is not in tasks" in p for p in problems)
    assert len(problems) == 4


def test_a_kill_or_finish_of_a_paused_task_is_no_resume() -> None:
    """paused -> aborting (kill) and paused -> finishing (finish) are commands, not resumes: the task need not go back
    to the status it was paused in first, in a history and in a whole log table."""
    assert ts.history_problems(["registered", "defined", "ready", "paused", "aborting", "aborted"]) == []
    assert ts.history_problems(["registered", "defined", "ready", "paused", "finishing", "passed", "failed"]) == []
    rows = [("registered", "2026-01-01T00:00:00Z"), ("defined", "2026-01-01T00:01:00Z"),
            ("paused", "2026-01-01T00:02:00Z"), ("aborting", "2026-01-01T00:03:00Z"),
            ("aborted", "2026-01-01T00:04:00Z")]  # fmt: skip
    log = frame("task_status_log", [{"status": s, "jeditaskid": 1, "modificationtime": w} for s, w in rows])
    assert log_problems(log, frame("tasks", [{"jeditaskid": 1, "status": "aborted"}])) == []
