"""One named difference between the seeds and PanDA's code (a rule profile's switch)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Switch:
    """One difference between the seeds and PanDA's code: on in a profile means "follow the code"."""

    name: str
    broker: str  # production, nucleus, analysis, all, simulator (the lifecycle)
    seed: str  # what the seed says (the default profile's rule)
    code: str  # what PanDA's code does at the profile's version
    where: str  # JEDI file:line (panda-server 1.0.4)
