"""Which production tasks are express: the seed's priority >= 1000 against JEDI's strict InputChunk.isExpress."""

from __future__ import annotations

import pytest

from brokerage.checks import production_queues
from brokerage.model import views
from brokerage.model.cache import cache_for
from brokerage.model.gdpconfig import Config
from tests.builders import grid, queue, task

PANDA = Config().with_overrides({"RULES": "panda-1.0.4"})


@pytest.mark.parametrize(
    ("priority", "ptype", "seed", "jedi"),
    [
        (1000, "simul", True, False),
        (1001, "simul", True, True),
        (999, "simul", False, False),
        (500, "urgent", True, True),
    ],
)
def test_express_priority(priority: int, ptype: str, seed: bool, jedi: bool) -> None:
    """Seed 003: 'processingType=urgent or priority>=1000 makes the FTS transfers ... use the express activity';
    under express_strict_priority JEDI's isExpress needs currentPriority > 1000, so a task at exactly 1000 is not
    express (urgent tasks are at any priority)."""
    cache = cache_for(grid([queue("Q", "A")], [task(1, currentpriority=priority, processingtype=ptype)]), None)
    row = views.task_row(cache, 1)
    assert production_queues.make_context(row, Config(), cache).express is seed
    assert production_queues.make_context(row, PANDA, cache).express is jedi
