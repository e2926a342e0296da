"""Both sides' decisions in one shape: per broker and task, the candidates' weights and each removed name's code.

``ours`` runs this project's brokers (under the rule profile the config names); ``jedi`` reads what PanDA's driver
returned (candidates from the SiteCandidate objects, removals from the skip lines, nucleus weights from the
``use nucleus=`` lines). Names are unified queue names (PanDA's pseudo queues ``Q/MCORE`` collapse onto ``Q``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from brokerage.brokers.router import NUCLEUS_SEED, ROUTES, run_nucleus_brokerage
from brokerage.crosscheck.tokens import parse_lines, unified
from brokerage.model.cache import GridCache
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config

BROKERS = ("prod", "nucleus", "anal")
LOGGER = {"prod": "AtlasProdJobBroker", "nucleus": "AtlasProdTaskBroker", "anal": "AtlasAnalJobBroker"}


@dataclass
class Verdicts:
    """One broker's decision for one task: ok (some candidate) or not, weights, removals (code, message)."""

    ok: bool
    candidates: dict[str, float] = field(default_factory=dict)
    skips: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (our code, message)
    tokens: dict[str, str] = field(default_factory=dict)  # name -> JEDI token (jedi side only)
    unmapped: set[str] = field(default_factory=set)
    all_failed: str = ""  # a code every remaining name got at once (JEDI's "no sites can run jobs": -job)
    silent: tuple[str, ...] = ()  # codes JEDI applied without naming the names it removed (analysis data check, ...)
    ms: float = 0.0
    error: str = ""

    def probabilities(self) -> dict[str, float]:
        """Each candidate's share of the total weight (the nucleus draw)."""
        total = sum(self.candidates.values())
        n = len(self.candidates)
        return {k: (v / total if total > 0 else 1.0 / n) for k, v in self.candidates.items()}


def _from_decision(d: Decision, ms: float) -> Verdicts:
    out = Verdicts(ok=d.status == "ok" and bool(d.candidates), ms=ms)
    out.candidates = {c.name: float(c.weight) for c in d.candidates}
    for s in d.skipped:
        out.skips.setdefault(s.candidate, (s.criteria, s.reason))
    for name in out.candidates:
        out.skips.pop(name, None)
    return out


def ours(cache: GridCache, tid: int, broker: str, config: Config) -> Verdicts:
    """This project's decision for task TID by BROKER (``prod``, ``nucleus``, ``anal``) under CONFIG."""
    started = time.perf_counter()
    snap = cache.snap
    if broker == "prod":
        d = ROUTES["production"].broker(snap, tid, config, cache=cache)
    elif broker == "anal":
        d = ROUTES["analysis"].broker(snap, tid, config, cache=cache)
    else:
        d = run_nucleus_brokerage(snap, tid, config, cache=cache, seed=NUCLEUS_SEED)
    return _from_decision(d, (time.perf_counter() - started) * 1000.0)


def jedi(result: dict[str, Any], broker: str, prefer: str | None = None) -> Verdicts:
    """PanDA's decision from the driver's RESULT for one task and BROKER. A unified queue with several pseudo queue
    candidates gets the weight of its PREFER pseudo queue (our side's resource type view) when that one is among
    them, else the first."""
    lines = [msg for name, msg in result.get("log", []) if name == LOGGER[broker]]
    parsed = parse_lines(lines, "nucleus" if broker == "nucleus" else "site")
    out = Verdicts(ok=False, ms=float(result.get("ms", 0.0)), unmapped=parsed.unmapped, error=result.get("error", ""))
    if broker == "nucleus":
        out.candidates = dict(parsed.uses)
    else:
        cands = result.get("candidates") or {}
        for name, w in cands.items():
            out.candidates.setdefault(unified(name), float(w))
        if prefer:
            for name, w in cands.items():
                if name.endswith(f"/{prefer}"):
                    out.candidates[unified(name)] = float(w)
    out.ok = bool(out.candidates)
    if broker == "anal" and any(line.endswith("candidates passed input data check") for line in lines):
        out.silent += ("-input_data",)  # AtlasAnalJobBroker.py:637: the data check logs no skip line per queue
    if broker == "anal" and any(line.endswith("did not pass all tests") for line in lines):
        out.silent += ("-nonpreassigned",)  # AtlasAnalJobBroker.py:1467-1473: the other queues go without a line
    if broker == "nucleus" and any("no sites can run jobs" in line for line in lines):
        out.all_failed = "-job"  # the hint-mode job broker found no queue: every nucleus still in the race fails
    for name, (code, token, msg) in parsed.skips.items():
        if name not in out.candidates:
            out.skips[name] = (code, msg)
            out.tokens[name] = token
    return out
