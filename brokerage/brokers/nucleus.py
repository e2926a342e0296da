"""ATLAS production task brokerage: choose a nucleus for each production task (seeds 000 and 003, full-chain);
the data it reads in nucleus_context, the filters in nucleus_filters, the weight in nucleus_weights."""

from __future__ import annotations

from typing import Any

import numpy as np

from brokerage.brokers import nucleus_panda
from brokerage.brokers.nucleus_context import (
    RW_UNIT,
    NucleusContext,
    RWTable,
    nucleus_arrays,
    nucleus_input,
    projected_output_gb,
    task_rw_seconds,
)
from brokerage.brokers.nucleus_filters import FILTERS, PANDA_FILTERS
from brokerage.brokers.nucleus_weights import STEPS as WEIGHT_STEPS
from brokerage.brokers.nucleus_weights import NucleusWeights, weights
from brokerage.checks import placement
from brokerage.framework import Reads, Step, apply_filters
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.explain import Candidate, Decision, FunnelStep
from brokerage.model.gcpause import gc_paused
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot

BROKER = "task"
LABEL = "nucleus"
STEPS: tuple[Step, ...] = (*WEIGHT_STEPS, Step("pending", Reads(config=("NUCLEUS_PENDING_MINUTES",))))
"""What the broker reads besides its filters: the weight factors, the pending time."""


def _parent_info(cache: GridCache, task: dict[str, Any], assigned: dict[int, str]) -> dict[str, Any]:
    pid = task.get("parent_tid")
    if pid is None or int(pid) == int(task["jeditaskid"]):
        return {}
    pid = int(pid)
    nucleus = assigned.get(pid)
    if nucleus is None:
        try:
            nucleus = views.task_row(cache, pid).get("nucleus")
        except KeyError:
            return {"jeditaskid": pid}
    return {"jeditaskid": pid, "nucleus": nucleus, "bare": bare_modes(cache).get(nucleus) or ""}


def bare_modes(cache: GridCache) -> dict[str, str]:
    """bareNucleus mode of every site ('' for none).

    Usage: ``bare_modes(cache)["CERN-PROD"]``
    """
    return placement.bare_modes(cache)[1]


def _reused(cache: GridCache, task: dict[str, Any], changed: dict[str, Any]) -> Decision:
    name = str(task["nucleus"])
    cand = Candidate(name, 1, 1.0, {}, {"probability": 1.0, "reused": True})
    unknown = "" if name in bare_modes(cache) else " (not a site of this snapshot)"
    return Decision(
        BROKER, int(task["jeditaskid"]), "ok", [cand], [], [FunnelStep("nucleus already set", 1, 1)],
        changed, label=LABEL,
        message=f"nucleus={name}{unknown} was already set for the task: re-used without brokerage",
        extra={"chosen": name, "data_locality": {"checked": False}},
    )  # fmt: skip


def _draw(rng: np.random.Generator, w: np.ndarray) -> int:
    """Index drawn proportionally to the weights W: t = U(0, Σw), the first candidate whose running sum exceeds t."""
    cum = np.cumsum(w)
    i = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
    positive = np.flatnonzero(w > 0)
    return min(i, int(positive[-1])) if len(positive) else min(i, len(w) - 1)


def _decide(ctx: NucleusContext, rng: np.random.Generator, changed: dict[str, Any]) -> tuple[Decision, int | None]:
    """Run the filters and the weighted draw for one task; return the decision and the chosen nucleus row."""
    na, cfg = ctx.na, ctx.config
    ctx.locality = {"checked": False}
    if (jedi := nucleus_panda.on(ctx)) and (why := nucleus_panda.wan_unreadable_input(ctx)):
        return Decision(BROKER, int(ctx.task["jeditaskid"]), "pending", [], [], [], dict(changed), label=LABEL,
                        message=why, extra={"chosen": None}), None  # fmt: skip
    # each filter sees which nuclei are still alive (the locality and job checks need it)
    alive, skips, funnel = apply_filters(na.name, np.ones(na.n, dtype=bool), PANDA_FILTERS if jedi else FILTERS, ctx)
    extra: dict[str, Any] = {"data_locality": ctx.locality, "rw_unit": RW_UNIT}
    if ctx.job_check:
        extra["job_check"] = ctx.job_check
    tid = int(ctx.task["jeditaskid"])
    idx = np.flatnonzero(alive)
    if len(idx) == 0:
        extra["chosen"] = None
        return Decision(
            BROKER, tid, "pending", [], skips, funnel, dict(changed), label=LABEL,
            pending_minutes=int(cfg["NUCLEUS_PENDING_MINUTES"]), message="no candidates", extra=extra,
        ), None  # fmt: skip
    w = weights(ctx)
    if jedi:
        jw, f = nucleus_panda.weights(ctx)
        w = NucleusWeights(f["rw"], f["local"], f["tape"], f["space"], jw, w.io_intensive)
    order = idx[np.lexsort((na.name[idx].astype(str), -w.weight[idx]))]
    total = float(w.weight[order].sum())
    # all weights 0: every candidate is equally likely
    drawn = w.weight[order] if total > 0 else np.ones(len(order))
    prob = drawn / drawn.sum()
    pick = int(order[_draw(rng, drawn)])
    inp = ctx.inputs
    candidates = []
    for rank, (i, p) in enumerate(zip(order, prob, strict=True), start=1):
        factors = {
            "rw": float(w.rw[i]),
            "local": float(w.local[i]),
            "tape": float(w.tape[i]),
            "space": float(w.space[i]),
        }
        details = {
            "probability": float(p),
            "rw_hs06_days": float(ctx.rw_days[i]),
            "localInputGB": float(inp.local_gb[i]),
            "localDiskInputGB": float(inp.local_disk_gb[i]),
            "localInputFiles": float(inp.local_files[i]),
            "totalInputGB": inp.total_gb,
            "endpoint": str(na.endpoint[i]),
            "spaceFreeGB": float(na.space_free[i]),
            "spaceExpiredGB": float(na.space_expired[i]),
            "spaceTotalGB": float(na.space_total[i]),
            "projectedOutputGB": float(projected_output_gb(ctx.rw_days[i], cfg)),
            "bareNucleus": str(na.bare[i]),
        }
        candidates.append(Candidate(str(na.name[i]), rank, float(w.weight[i]), factors, details))
    extra["chosen"] = str(na.name[pick])
    extra["io_intensive"] = w.io_intensive
    msg = "" if total > 0 else "every candidate has weight 0: drawn uniformly"
    return Decision(
        BROKER, tid, "ok", candidates, skips, funnel, dict(changed), label=LABEL, message=msg, extra=extra
    ), pick


@gc_paused()
def broker_many(
    snap: GridSnapshot,
    task_ids: list[int],
    config: Config | None = None,
    seed: int = 0,
    *,
    cache: GridCache | None = None,
) -> list[Decision]:
    """Assign nuclei to many tasks as one JEDI cycle: highest currentPriority first, RW updated after each choice.

    RW per (priority, nucleus) is computed once for the batch; each assignment adds the task's own RW to its
    nucleus for every priority at or below the task's. One ``numpy.random.Generator(seed)`` draws for the tasks
    in processing order. Decisions are returned in the order of TASK_IDS.
    Usage: ``[d.extra["chosen"] for d in broker_many(snap, [1, 2, 3], Config(), cache=cache)]``
    """
    config = config or Config()
    cache = cache_for(snap, cache)
    na = nucleus_arrays(cache)
    rng = np.random.default_rng(seed)
    tasks = {int(t): views.task_row(cache, int(t)) for t in dict.fromkeys(int(t) for t in task_ids)}
    prio = {t: float(row.get("currentpriority") or 0) for t, row in tasks.items()}
    table = RWTable(cache, na, np.array(list(prio.values()) or [0.0]))
    rw_of = task_rw_seconds(cache)
    changed = config.changed()
    assigned: dict[int, str] = {}
    out: dict[int, Decision] = {}
    for tid in sorted(tasks, key=lambda t: (-prio[t], t)):
        task = tasks[tid]
        if task.get("nucleus"):
            out[tid] = _reused(cache, task, dict(changed))
            assigned[tid] = str(task["nucleus"])
            continue
        ctx = NucleusContext(
            cache=cache,
            task=task,
            config=config,
            na=na,
            rw_seconds=table.rw(prio[tid]),
            inputs=nucleus_input(cache, task, na),
            parent=_parent_info(cache, task, assigned),
        )
        decision, pick = _decide(ctx, rng, changed)
        out[tid] = decision
        if pick is not None:
            table.assign(prio[tid], pick, float(rw_of.get(tid, 0.0)))
            assigned[tid] = str(na.name[pick])
    return [out[int(t)] for t in task_ids]


def broker(
    snap: GridSnapshot, jeditaskid: int, config: Config | None = None, seed: int = 0, *, cache: GridCache | None = None
) -> Decision:
    """Choose a nucleus for one production task and explain every nucleus' fate.

    Usage: ``broker(snap, 4242, Config(), seed=0, cache=cache).extra["chosen"]``
    """
    return broker_many(snap, [jeditaskid], config, seed, cache=cache)[0]
