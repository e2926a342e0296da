"""One task's crosscheck (``crosscheck/single.py``): PanDA missing said with how to get it, and the same verdicts as
the whole grid's crosscheck gives that task."""

from __future__ import annotations

from pathlib import Path

import pytest

from brokerage.crosscheck.generator import random_grid
from brokerage.crosscheck.panda import PandaEnv, PandaMissing
from brokerage.crosscheck.run import crosscheck
from brokerage.crosscheck.single import crosscheck_task, panda_missing
from brokerage.model.errors import UnknownIdError
from brokerage.model.gdpconfig import Config


def test_missing_panda_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without PanDA's source the check fails clearly, in one sentence saying how to get it (scripts/panda.sh)."""
    monkeypatch.setenv("BROKERAGE_PANDA_DIR", str(tmp_path))
    why = panda_missing()
    assert why is not None and "run scripts/panda.sh" in why and str(tmp_path) in why
    with pytest.raises(PandaMissing, match=r"scripts/panda\.sh"):
        crosscheck_task(random_grid(1), 1, Config())


def test_an_unknown_task_is_named_before_panda_runs() -> None:
    """A task id not in the snapshot is an UnknownIdError naming it (PanDA's driver is never started)."""
    nowhere = PandaEnv(Path("/nonexistent/src"), Path("/nonexistent/python"))
    with pytest.raises(UnknownIdError, match="unknown task 987654"):
        crosscheck_task(random_grid(1), 987654, Config(), nowhere)


@pytest.mark.crosscheck
def test_one_task_gets_the_verdicts_the_whole_grid_gives_it(panda: PandaEnv) -> None:
    """Each task of a random grid checked alone has the same candidates, weights and removal codes on both sides as in
    the crosscheck of the whole grid (the other tasks do not change a task's brokerage), under panda-1.0.4."""
    snap = random_grid(3)
    whole = {(c.task, c.broker): c for c in crosscheck([(snap, Config())], panda).comparisons}
    assert whole
    for task in sorted({t for t, _ in whole})[:4]:
        one = crosscheck_task(snap, task, Config(), panda)
        assert one.profile == "panda-1.0.4" and one.panda_version == "1.0.4" and one.comparisons
        for c in one.comparisons:
            w = whole[(task, c.broker)]
            assert (c.ours.candidates, c.ours.skips) == (w.ours.candidates, w.ours.skips)
            assert (c.jedi.candidates, c.jedi.skips, c.jedi.error) == (w.jedi.candidates, w.jedi.skips, w.jedi.error)
            assert [r.to_dict() for r in c.rows] == [r.to_dict() for r in w.rows]
        assert one.identical == all(c.identical for c in one.comparisons)
        assert one.to_dict()["brokers"][0]["task"] == task
