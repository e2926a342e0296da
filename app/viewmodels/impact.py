"""Whole-grid impact of a what-if: each moved task's old → new top candidate and the filter or factor that moved it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from brokerage.brokers.batch import GridRun, Key
from brokerage.whatif.compare import TaskDiff
from brokerage.whatif.impact import GridImpact

PENDING = "pending"


def top_of(run: GridRun, key: Key) -> str:
    """The top candidate of KEY in RUN, "pending" when none, "" when the run did not broker it."""
    o = run.outcomes.get(key)
    if o is None:
        return ""
    return o.top[0] if o.top and o.status == "ok" else PENDING


def why_moved(diff: TaskDiff) -> str:
    """The filter or weight factor that moved a task's brokerage, in one sentence (from ``whatif.compare``).

    Usage: ``why_moved(compare(state.job_decision(7), state.job_decision(7, {"NQUEUED_SAT_CAP": 300})))``
    """
    passes = [f for f in diff.filter_changes if f.change == "newly passes"]
    fails = [f for f in diff.filter_changes if f.change == "newly fails"]
    what = diff.label if diff.label != "queue" else "queue"
    parts: list[str] = []
    top_after, top_before = diff.top_after, diff.top_before
    new_top_passes = next((f for f in passes if f.name == top_after), None)
    old_top_fails = next((f for f in fails if f.name == top_before), None)
    if new_top_passes is not None:
        parts.append(f"{top_after} newly passes {new_top_passes.criteria_before}")
    if old_top_fails is not None:
        parts.append(f"{top_before} now fails {old_top_fails.criteria_after}")
    if passes and new_top_passes is None:
        by = Counter(f.criteria_before for f in passes).most_common(2)
        parts.append(f"{len(passes)} {what}s newly pass " + ", ".join(f"{c} ({n})" for c, n in by))
    if fails and old_top_fails is None:
        by = Counter(f.criteria_after for f in fails).most_common(2)
        parts.append(f"{len(fails)} {what}s newly fail " + ", ".join(f"{c} ({n})" for c, n in by))
    if not parts and diff.factor_changes:
        # the top changed with no filter change: the weight factor that moved most did it
        f = max(diff.factor_changes, key=lambda c: abs(c.after - c.before) / (abs(c.before) + 1e-9))
        parts.append(f"weight factor {f.factor} of {f.name}: {f.before:.3g} → {f.after:.3g}")
    return "; ".join(parts) or "same candidates; the weights moved the order"


def moved_rows(
    im: GridImpact,
    before: GridRun,
    after: GridRun,
    names: Mapping[int, str],
    explain: Callable[[Key], str] | None = None,
    limit: int = 200,
    explained: int = 50,
) -> list[dict[str, Any]]:
    """Tasks whose brokerage moved: what moved, old → new top candidate, and (for the first EXPLAINED) why.

    EXPLAIN(key) is called only for the rows shown first, because each needs two brokerages.
    Usage: ``moved_rows(g.impact, base_run, g.after, g.names, lambda k: "...")``
    """
    kinds: dict[Key, list[str]] = {}
    for label, keys in (("top-10 set", im.top10_changed), ("top candidate", im.top_changed),
                        ("now pending", im.newly_pending), ("no longer pending", im.unpending)):  # fmt: skip
        for key in keys:
            kinds.setdefault(key, []).append(label)
    # status changes first, then top-candidate changes: those are what an operator acts on
    weight = {"no longer pending": 0, "now pending": 0, "top candidate": 1, "top-10 set": 2}
    order = sorted(kinds, key=lambda k: (min(weight[w] for w in kinds[k]), k[1], k[0]))[:limit]
    rows = []
    for i, key in enumerate(order):
        broker, tid = key
        old, new = top_of(before, key), top_of(after, key)
        rows.append(
            {
                "task": tid,
                "brokerage": "nucleus" if broker == "task" else broker,
                "what": ", ".join(sorted(set(kinds[key]))),
                "top": f"{old or '?'} → {new or '?'}",
                "why": explain(key) if explain is not None and i < explained else "",
                "taskname": names.get(tid, ""),
            }
        )
    return rows


def totals_text(df: pd.DataFrame, unit: str) -> str:
    """Before/after totals of a load table (columns before, after), e.g. "jobs in total: 1,200 → 1,180"."""
    if df is None or df.empty:
        return ""
    b, a = float(df["before"].sum()), float(df["after"].sum())
    return f"{unit} in total: {b:,.0f} → {a:,.0f} ({a - b:+,.0f})"
