"""The simulated clock: JEDI's agents each tick in the order of jedi-lifecycle.md §11, on one SimState.

``Simulation`` is the state with the run loop and the output; every agent is a module of its own with
``tick(state, now)`` (brokerage.sim.state lists them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from brokerage.model.gcpause import gc_paused
from brokerage.sim import (
    activator,
    adder,
    brokering,
    commands,
    finisher,
    jobgen,
    output,
    pilots,
    postprocessor,
    refiner,
    taskbroker,
    timeouts,
    watchdog,
)
from brokerage.sim.commands import TaskCommand
from brokerage.sim.state import TICK_S, Files, SimState

__all__ = ["AGENTS", "SAMPLE_S", "TICK_S", "Files", "Progress", "Simulation"]

SAMPLE_S = output.SAMPLE_S  # time series resolution
Progress = Callable[[int, int], None]
Tick = Callable[[SimState, float], None]

# One tick, in order: (agent, its period as a gdpconfig key, seconds, or None for every tick, its tick)
AGENTS: tuple[tuple[str, str | float | None, Tick], ...] = (
    ("commands", None, commands.tick),  # TaskCommando: the task commands due now
    ("refiner", refiner.REFINER_PERIOD_S, refiner.tick),  # TaskRefiner: new tasks arrive (brokerage.sim.arrivals)
    ("brokerage", "JOB_BROKERAGE_REFRESH", brokering.tick),  # the job brokers' view of the grid
    ("taskbroker", "TASKBROKER_PERIOD", taskbroker.tick),  # ContentsFeeder and TaskBroker
    ("jobgenerator", None, jobgen.tick),  # JobGenerator with the job throttler
    ("pilot_end", None, pilots.end_payloads),  # payloads at their walltime: running -> holding
    ("adder", "ADDER_PERIOD", adder.tick),  # holding -> finished / failed (the retry module on failures)
    ("datasetmanager", "DATASETMANAGER_PERIOD", finisher.tick),  # transferring -> finished
    ("activator", "DATASETMANAGER_PERIOD", activator.tick),  # datasetManager: assigned 1 h -> activated
    ("copyarchive", "COPYARCHIVE_PERIOD", timeouts.tick),  # job timeouts and reassignment
    ("dispatch", None, pilots.dispatch),  # pilots take activated jobs into free slots
    ("postprocessor", None, postprocessor.tick),  # scouts assessed, finishing tasks ended
    ("watchdog", "WATCHDOG_PERIOD", watchdog.tick),  # task rules, progress actions, paused tasks' jobs
    ("sample", SAMPLE_S, output.sample),  # the time series
)


class Simulation(SimState):
    """One run: SNAP moved forward under CONFIG, randomness from one generator seeded with SEED.

    Usage: ``sim = Simulation(snap, Config(), seed=1); sim.run(hours=24); sim.result()``
    """

    def _period(self, period: str | float) -> float:
        return float(self.config[period]) if isinstance(period, str) else float(period)

    def step(self, now: float) -> None:
        """One tick at NOW: every agent due, in the order of AGENTS.

        Usage: ``sim.step(0.0)``
        """
        self.now = now
        for name, period, tick in AGENTS:
            if period is None or self.due(name, self._period(period)):
                tick(self, now)
            if name == "commands":
                self.prune_live()

    @gc_paused()
    def run(
        self, hours: float, progress: Progress | None = None, commands: Sequence[TaskCommand] = (),
        until: Callable[[Simulation], bool] | None = None,
    ) -> Simulation:  # fmt: skip
        """Move the grid forward HOURS, one tick at a time; PROGRESS(done, total) after each simulated minute;
        COMMANDS (task commands at simulated times) applied at their tick, a refused one kept with its rule; UNTIL
        (checked after each tick) ends the run early when it returns True.

        Usage: ``Simulation(snap, Config()).run(24).result()["headline"]``
        """
        ticks = round(hours * 3600 / TICK_S)
        self.todo_commands = sorted(commands, key=lambda c: c.at_s)
        for i in range(ticks):
            self.step(i * TICK_S)
            if progress:
                progress(i + 1, ticks)
            if until is not None and until(self):
                self.now += TICK_S
                return self
        self.now = ticks * TICK_S
        output.sample(self, self.now)
        return self

    def result(self) -> dict[str, Any]:
        """The run's output (see brokerage.sim.output).

        Usage: ``Simulation(snap, Config()).run(1).result()["headline"]``
        """
        return output.build_result(self)
