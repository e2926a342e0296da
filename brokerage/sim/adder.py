"""The Adder (add_main, jedi-lifecycle.md §2, §11.2): holding jobs become finished or failed as their output report
says."""

from __future__ import annotations

from brokerage.sim.propagate import end_jobs
from brokerage.sim.state import SimState


def tick(state: SimState, now: float) -> None:
    """Every holding job ends: finished, or failed with its error (the retry module acts on it first).

    Usage: ``adder.tick(state, state.now)``
    """
    j = state.jobs
    hold = state.live_rows("holding")
    bad = j["willFail"][hold]
    state.log.add(now, j["PandaID"][hold[~bad]], "holding", "finished", "adder_finished")
    state.log.add(now, j["PandaID"][hold[bad]], "holding", "failed", "adder_failed",
                  j["errorCode"][hold[bad]], state.g.failure_rate[j["computingSite"][hold[bad]]])  # fmt: skip
    end_jobs(state, hold[~bad], "finished")
    end_jobs(state, hold[bad], "failed")
