"""PanDA 1.0.4's own checks, active only under the rule profile panda-1.0.4 (brokerage/checks/panda_rules.py)."""

from __future__ import annotations

import pytest

from brokerage.brokers import production
from brokerage.model.gdpconfig import Config
from tests.builders import grid, queue, task

PANDA = Config().with_overrides({"RULES": "panda-1.0.4"})


def _skips(config: Config) -> dict[str, str]:
    qs = [queue("A", "S1"), queue("B", "S1", catchall="useJumboJobs")]
    d = production.broker(grid(qs, [task(1)]), 1, config)
    return {s.candidate: s.criteria for s in d.skipped}


@pytest.mark.parametrize("profile", [pytest.param(PANDA, id="-jumbo:panda-1.0.4")])
def test_a_task_without_jumbo_jobs_avoids_jumbo_queues(profile: Config) -> None:
    """Under PanDA's code a task without jumbo jobs skips a queue whose catchall holds useJumboJobs (-jumbo)."""
    skips = _skips(profile)
    assert skips.get("B") == "-jumbo"
    assert "A" not in skips


def test_the_seed_has_no_jumbo_rule() -> None:
    """The seed names no jumbo check, so under the default profile a useJumboJobs queue is not skipped for it."""
    assert _skips(Config()).get("B") != "-jumbo"
