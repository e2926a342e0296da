"""Which rule reads which gdpconfig key, collected from the rules' own declarations; nothing here is written by hand.

Each broker declares its filters (``Filter.reads`` and ``Filter.uses``) and its other steps (``Step``: weight
factors, caps, the cut, the pending time) where it defines them; DIRAC's task queues and matcher declare theirs in
``brokerage/dirac``. This module lists them once, per broker, and answers from them: which rules read a key
(the tuning page's "used by"), which brokers a what-if must run again (``brokers_reading``) and which keys a lever
may move at a stage (``stage_keys``, ``weight_keys``). The simulator's keys are declared in ``brokerage/sim/uses.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from brokerage.brokers import analysis, generic, nucleus, production
from brokerage.checks import generic_rules, production_queues
from brokerage.checks.context import ProdContext
from brokerage.dirac import limits, matcher, priorities, taskqueues
from brokerage.framework import Filter, Step, declared_keys
from brokerage.model.gdpconfig import REGISTRY, ConfigError, lookup_param

DIRAC = "dirac"
TITLES = {
    production.BROKER: "production",
    analysis.BROKER: "analysis",
    nucleus.BROKER: "nucleus",
    generic.BROKER: "generic (non-ATLAS VOs)",
    DIRAC: "DIRAC",
}


@dataclass(frozen=True)
class Use:
    """One rule and the gdpconfig keys it declares.

    ``keys`` are every key its result depends on, also through the derived attributes it reads (the network
    weights, the Stabilizer, ...); ``own`` are those it reads itself, the ones a lever moves to change its verdict.
    """

    broker: str  # production | analysis | task (the nucleus broker) | dirac | simulator
    stage: str  # the filter's or step's name, as funnels, weight factors and skips name it
    kind: str  # filter | weight | stage
    keys: tuple[str, ...]
    own: tuple[str, ...]

    @property
    def label(self) -> str:
        """'production: satellite link queue check' style: who reads, and where."""
        what = f"weight {self.stage}" if self.kind == "weight" else self.stage
        return f"{TITLES.get(self.broker, self.broker)}: {what}"


def uses_of(broker: str, items: Iterable[Filter | Step], context: type | None = None) -> tuple[Use, ...]:
    """The Use of each of ITEMS (filters or steps of BROKER, whose derived attributes are CONTEXT's).

    Usage: ``uses_of("production", production.CAPS, ProdContext)``
    """
    out = []
    for item in items:
        kind = "filter" if isinstance(item, Filter) else item.kind
        own = tuple(dict.fromkeys(item.declared.config))
        out.append(Use(broker, item.name, kind, declared_keys(item, context), own))
    return tuple(out)


USES: tuple[Use, ...] = (
    *uses_of(production.BROKER, (*production_queues.FILTERS, *production.CAPS, *production.STEPS), ProdContext),
    *uses_of(
        analysis.BROKER,
        (*analysis.PRELIMINARY, *analysis.PERSISTENT, *analysis.TEMPORARY, *analysis.STEPS),
        analysis.AnalContext,
    ),
    *uses_of(nucleus.BROKER, (*nucleus.FILTERS, *nucleus.STEPS), nucleus.NucleusContext),
    *uses_of(generic.BROKER, (*generic_rules.FILTERS, *generic.STEPS), generic_rules.GenContext),
    *uses_of(DIRAC, (*taskqueues.STEPS, *priorities.STEPS, *limits.STEPS, *matcher.STEPS)),
)
"""Every rule of the brokers and of DIRAC's matcher, in each broker's order."""


def param_key(key: str) -> str:
    """The registered parameter of KEY (a family variant KEY_<suffix> is its family's); ConfigError when unknown.

    Usage: ``param_key("DISK_THRESHOLD_Analysis") == "DISK_THRESHOLD"``
    """
    return key if key in REGISTRY else lookup_param(key).key


def used_by(key: str, uses: Iterable[Use] = USES) -> tuple[Use, ...]:
    """The rules of USES whose result depends on KEY (through derived attributes too).

    Usage: ``[u.label for u in used_by("NQUEUED_SAT_CAP")]``
    """
    k = param_key(key)
    return tuple(u for u in uses if k in u.keys)


def brokers_reading(keys: Iterable[str]) -> frozenset[str] | None:
    """The brokers (production, analysis, task) whose decisions may change with KEYS; None when a key is unknown.

    Usage: ``brokers_reading(["DISK_THRESHOLD"]) == {"task"}``
    """
    out: set[str] = set()
    for key in keys:
        try:
            found = used_by(key)
        except ConfigError:
            return None
        out.update(u.broker for u in found if u.broker != DIRAC)
    return frozenset(out)


def stage_keys(broker: str, stage: str) -> tuple[str, ...]:
    """The keys the filter or step STAGE of BROKER reads itself (empty for a stage that declares none).

    Usage: ``stage_keys("task", "transfer backlog check") == ("NQUEUED_NUC_CAP",)``
    """
    return next((u.own for u in USES if u.broker == broker and u.stage == stage), ())


def weight_keys(broker: str) -> tuple[str, ...]:
    """The keys BROKER's weight factors read themselves, in the factors' order.

    Usage: ``weight_keys("task") == ("RW_OFFSET", "MIN_IO_INTENSITY_WITH_LOCAL_DATA", "TAPE_WEIGHT")``
    """
    return tuple(dict.fromkeys(k for u in USES if u.broker == broker and u.kind == "weight" for k in u.own))
