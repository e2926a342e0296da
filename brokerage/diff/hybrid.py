"""Worker side of a diff: broker tasks again on the old grid with some inputs taken from the new one."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from brokerage.brokers import batch
from brokerage.brokers.batch import Key, Outcome
from brokerage.diff.delta import Key as RowKey
from brokerage.diff.delta import TableDelta, apply
from brokerage.model.cache import GridCache, derived_cache
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot

Swap = list[tuple[TableDelta, Sequence[RowKey] | None]]  # one replay's inputs from the new version


@dataclass(frozen=True)
class Fate:
    """One candidate's place before (old grid) and in the replay: rank or the criteria code that removed it."""

    rank_before: int | None
    rank_after: int | None
    code_before: str
    code_after: str
    factors: dict[str, tuple[float, float]]  # weight factors that moved (ranked in both)

    def effect(self) -> str:
        """How the candidate moved, in words."""
        rb, ra = self.rank_before, self.rank_after
        if rb is not None and ra is not None:
            return f"ranked lower ({rb} → {ra})" if ra > rb else f"ranked higher ({rb} → {ra})" if ra < rb else "kept"
        if rb is not None:
            return f"was removed by {self.code_after}" if self.code_after else f"dropped out (was rank {rb})"
        if ra is not None:
            was = f" (was removed by {self.code_before})" if self.code_before else ""
            return f"came in at rank {ra}{was}"
        return f"stays out ({self.code_after or self.code_before})"


def _place(d: Decision, name: str) -> tuple[int | None, str, dict[str, float]]:
    for c in d.candidates:
        if c.name == name:
            return c.rank, "", c.factors
    s = d.skip_of(name)
    return None, (s.criteria if s else ""), {}


def fate(before: Decision, after: Decision, name: str) -> Fate:
    """NAME's place in two decisions of one brokerage, with the weight factors that moved.

    Usage: ``fate(decision_old, decision_replayed, "CERN").effect()``
    """
    rb, cb, fb = _place(before, name)
    ra, ca, fa = _place(after, name)
    moved = {
        k: (float(fb[k]), float(fa[k]))
        for k in fb
        if k in fa and abs(float(fb[k]) - float(fa[k])) > 1e-9 * max(1.0, abs(float(fb[k])))
    }
    return Fate(rb, ra, cb, ca, moved)


MIXED_KEPT = 4  # mixed grids (with their caches) a process keeps: the chunks of one swap often share a worker
_mixed_grids: OrderedDict[str, tuple[GridSnapshot, GridCache]] = OrderedDict()
_locks = SimpleNamespace(mixed=threading.Lock())


def _new_lock_in_child() -> None:
    # a lock held by another thread at a fork would stay held in the child
    _locks.mixed = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_in_child)


def _mixed(snap: GridSnapshot, cache: GridCache, swap: Swap, name: str) -> tuple[GridSnapshot, GridCache]:
    """SNAP with SWAP applied, and its GridCache, shared by the chunks of one swap that reach this process."""
    with _locks.mixed:
        hit = _mixed_grids.get(name)
        if hit is not None:
            _mixed_grids.move_to_end(name)
            return hit
    mixed = apply(snap, swap, name.rsplit(":", 1)[-1])
    made = (mixed, derived_cache(cache, mixed))
    with _locks.mixed:
        _mixed_grids[name] = made
        while len(_mixed_grids) > MIXED_KEPT:
            _mixed_grids.popitem(last=False)
    return made


Item = tuple[int, Key, tuple[str, ...]]  # (swap index, brokerage, candidates whose fate to report)
Result = tuple[int, Key, Outcome | None, dict[str, Fate], str]  # (swap, brokerage, outcome, fates, error)


def replay_chunk(snap: GridSnapshot, cache: GridCache, payload: Any, items: Sequence[Item]) -> list[Result]:
    """Broker each item's task on SNAP with its swap applied; items come grouped by swap (one new grid each).

    PAYLOAD is (config, swaps). A brokerage that raises on a mixed grid is reported, not fatal.
    """
    config: Config = payload[0]
    swaps: list[Swap] = payload[1]
    token: str = payload[2]
    out: list[Result] = []
    olds: dict[Key, Decision] = {}
    current, hybrid, hcache = -1, snap, cache
    for index, key, names in items:
        if index != current:
            hybrid, hcache = _mixed(snap, cache, swaps[index], f"{token}:{index}")
            current = index
        try:
            old = olds.get(key) or olds.setdefault(key, batch.decide(snap, config, key, cache))
            new = batch.decide(hybrid, config, key, hcache)
        except Exception as exc:  # a mixed grid can be inconsistent (a row whose queue is only in the other one)
            out.append((index, key, None, {}, f"{type(exc).__name__}: {exc}"))
            continue
        out.append((index, key, Outcome.of(new, 1.0), {n: fate(old, new, n) for n in names}, ""))
    return out
