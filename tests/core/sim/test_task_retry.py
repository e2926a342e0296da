"""Task retry from one place (seed 003 "Task retry"): the task commands and the task machine agree, per profile."""

from __future__ import annotations

import pytest

from brokerage.model.gdpconfig import Config
from brokerage.sim.commands import CommandRefused, TaskCommand, apply
from brokerage.sim.task_states import (
    RETRY_FROM_CODE,
    RETRY_FROM_SEED,
    TASK_STATUSES,
    TRANSITIONS,
    is_allowed,
    retry_from,
)
from tests.core.sim.conftest import small_sim

CODE = Config(overrides={"RULES": "panda-1.0.4"})


def _sim(status: str, config: Config | None = None):  # type: ignore[no-untyped-def]
    sim = small_sim(config)
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    sim.tasks.loc[1, ["status", "oldStatus"]] = [status, status]
    return sim


def test_seed_retries_from_finished_and_exhausted_only() -> None:
    """Seed 003: "Tasks can be retried if they are in finished or exhausted state." """
    assert retry_from(Config()) == {"finished", "exhausted"}
    assert retry_from(CODE) == {"finished", "failed", "exhausted"}


def test_the_task_machine_allows_toretry_exactly_from_the_command_lists() -> None:
    """The task machine's toretry edges are the retry command's statuses (seed's and code's), no more: done and
    aborted cannot reach toretry, so the CLI's --task-command and the machine never disagree."""
    from_machine = {s for s in TASK_STATUSES if "toretry" in TRANSITIONS[s]}
    assert from_machine == RETRY_FROM_SEED | RETRY_FROM_CODE
    assert not is_allowed("done", "toretry") and not is_allowed("aborted", "toretry")


@pytest.mark.parametrize("status", sorted(TASK_STATUSES))
@pytest.mark.parametrize("config", [Config(), CODE], ids=["seed", "panda-1.0.4"])
def test_every_status_the_command_accepts_is_a_legal_move(status: str, config: Config) -> None:
    """A retry the command accepts moves the task only along the machine (checked by the simulator's moves); a
    status it refuses is refused with the rule, the task unchanged."""
    sim = _sim(status, config)
    if status in retry_from(config):
        apply(sim, TaskCommand(0.0, 1, "retry"))  # raises SimulationError on an illegal move
        assert sim.tasks.at[1, "status"] != status
    else:
        with pytest.raises(CommandRefused, match="retry is not allowed"):
            apply(sim, TaskCommand(0.0, 1, "retry"))
        assert sim.tasks.at[1, "status"] == status


def test_the_code_profile_retries_a_failed_task() -> None:
    """Switch retry_commands_as_jedi: PanDA's server accepts retry from failed; the task goes toretry -> ready."""
    sim = _sim("failed", CODE)
    apply(sim, TaskCommand(0.0, 1, "retry"))
    assert [to for _, tid, _, to, _ in sim.task_causes if tid == 1] == ["toretry", "ready"]
