"""Which gdpconfig key each of the simulator's agents reads, and the whole index: the brokers', DIRAC's and these.

The agents read their keys outside any filter, so they declare them here, each under the module that reads it;
``tests/core/test_declarations.py`` checks every declared key is read in that module and every key the simulator
reads is declared. ``used_by`` answers for every parameter of the registry (the tuning page's "used by").
"""

from __future__ import annotations

from brokerage.brokers import uses as broker_uses
from brokerage.brokers.uses import Use
from brokerage.framework import Reads, Step

SIMULATOR = "simulator"

STEPS: dict[str, tuple[Step, ...]] = {
    "brokerage.sim.engine": (
        Step("agents", Reads(config=("JOB_BROKERAGE_REFRESH", "TASKBROKER_PERIOD", "ADDER_PERIOD",
                                     "DATASETMANAGER_PERIOD", "COPYARCHIVE_PERIOD", "WATCHDOG_PERIOD"))),
    ),
    "brokerage.sim.pilots": (Step("dispatch", Reads(config=("SLOPPY_DISPATCH_RATIO",))),),
    "brokerage.sim.brokering": (
        Step("live brokerage counts", Reads(config=("WEIGHT_QUEUE_OFFSET", "QUEUED_RUNNING_RATIO_CAP",
                                                    "ALL_CAPPED_KEEP_BEST"))),
    ),
    "brokerage.sim.watchdog": (Step("watchdog", Reads(config=("MAX_JOB_FAILURE_RATE_TO_PAUSE",))),),
    "brokerage.sim.task_agent": (Step("watchdog", Reads(config=("PENDING_TIMEOUT",))),),
    "brokerage.sim.throttler": (
        Step("throttler", Reads(config=("THROTTLE_THRESHOLD", "NQUEUELIMIT", "NRUNNINGCAP", "NQUEUECAP"))),
    ),
    "brokerage.sim.timeouts": (
        Step("timeouts", Reads(config=("TIMEOUT_defined", "TIMEOUT_holding", "HEARTBEAT_TIMEOUT", "ANALY_TIMEOUT"))),
        Step("fast rebrokerage", Reads(config=("FAST_REBRO_THRESHOLD_NQNR_RATIO", "FAST_REBRO_THRESHOLD_NQUEUE_FRAC",
                                               "FAST_REBRO_THRESHOLD_NQUEUE"))),
    ),
    "brokerage.sim.scouts": (
        Step("scouts", Reads(config=("SCOUT_RAMCOUNT_RANK", "SCOUT_RAMCOUNT_MARGIN", "SCOUT_CPUTIME_RANK"))),
    ),
}  # fmt: skip
"""The simulator's agents, by the module that reads their keys."""

SIM_USES: tuple[Use, ...] = tuple(use for steps in STEPS.values() for use in broker_uses.uses_of(SIMULATOR, steps))
USES: tuple[Use, ...] = broker_uses.USES + SIM_USES
"""Every rule that reads gdpconfig: the brokers', DIRAC's and the simulator's."""


def used_by(key: str) -> tuple[Use, ...]:
    """Every rule whose result depends on KEY (a family variant: its family's); ConfigError when KEY is unknown.

    Usage: ``[u.label for u in used_by("THROTTLE_THRESHOLD")] == ["simulator: throttler"]``
    """
    return broker_uses.used_by(key, USES)
