"""The crosscheck's allow-list: differences from PanDA 1.0.4 that are argued not worth modelling (docs/crosscheck.md).

Each entry names the difference (broker, field, our verdict, PanDA's), the tasks it was argued for (ids of
``--random-grids 300 --seed 1`` or of the seed-2 demo grid; empty: any task), why, and the JEDI line. A crosscheck marks a differing row the
list covers as *allowed*: it is reported apart and does not fail the strict lane. Rows of a task whose PanDA side
crashed in a known way (``compare.KNOWN_PANDA_BUGS``) are allowed by that crash.
Usage: ``reason = allowed("prod", "verdict", "+use", "?-t1_weight", 86008)``
"""

from __future__ import annotations

from dataclasses import dataclass

ANY = "*"


@dataclass(frozen=True)
class Allowed:
    """One argued difference."""

    broker: str  # prod, nucleus, anal
    field: str  # verdict, weight, probability
    ours: str  # our verdict (ANY: any)
    jedi: str  # PanDA's verdict (ANY: any)
    tasks: tuple[int, ...]  # the tasks it was argued for (empty: any task)
    why: str
    where: str  # JEDI file:line

    def covers(self, broker: str, field: str, ours: str, jedi: str, task: int) -> bool:
        """Whether this entry covers the difference."""
        return (
            self.broker == broker
            and self.field == field
            and self.ours in (ANY, ours)
            and self.jedi in (ANY, jedi)
            and (not self.tasks or task in self.tasks)
        )


ENTRIES: tuple[Allowed, ...] = (
    Allowed(
        "prod", "verdict", "+use", "?-t1_weight", (86008, 135003, 45002631),
        "a task with a negative t1Weight: after the -t1weight filter kept the nucleus' queues, JEDI's final selection "
        "keeps only the one with the largest nRunningAll (running jobs of every share) and names the others "
        "-t1_weight; the selection depends on the order JEDI iterates pseudo queues (a hash-ordered set) and the "
        "seed has no such rule, so it is not modelled",
        "AtlasProdJobBroker.py:2024-2040",
    ),
)  # fmt: skip


def allowed(broker: str, field: str, ours: str, jedi: str, task: int) -> str:
    """The reason of the first entry covering the difference ('' when none does)."""
    for e in ENTRIES:
        if e.covers(broker, field, ours, jedi, task):
            return f"{e.where}: {e.why}"
    return ""
