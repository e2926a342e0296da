"""The answer first for a pending brokerage: the funnel step that emptied the list and the skips per criteria code."""

from __future__ import annotations

from typing import Any

from brokerage.model.explain import Decision

# Codes that remove candidates never meant for the task (queues in test status take only test jobs): they are
# listed after the codes that explain the pending state, whatever their count.
BACKGROUND = ("-test",)


def emptying_step(decision: Decision) -> dict[str, Any] | None:
    """The numbered funnel step that left no candidate (1 = the first step of ``decision.funnel``), or None when
    candidates are left or no filter ran.

    Usage: ``emptying_step(d) == {"number": 5, "of": 5, "filter": "memory check", "before": 1, "after": 0}``
    """
    if decision.candidates:
        return None
    for i, f in enumerate(decision.funnel):
        if f.after == 0 and f.before > 0:
            return {"number": i + 1, "of": len(decision.funnel), "filter": f.filter, "before": f.before, "after": 0}
    return None


def skip_groups(decision: Decision, examples: int = 3) -> list[dict[str, Any]]:
    """The skipped candidates grouped by criteria code: most candidates first, BACKGROUND codes last; each with its
    filter, count and the first EXAMPLES names.

    Usage: ``skip_groups(d)[0] == {"criteria": "-cpucore", "filter": "core count check", "count": 6, ...}``
    """
    groups: dict[str, dict[str, Any]] = {}
    for row in decision.skipped.to_dicts(decision.label) if hasattr(decision.skipped, "to_dicts") else [
        s.to_dict(decision.label) for s in decision.skipped
    ]:  # fmt: skip
        g = groups.setdefault(row["criteria"], {"criteria": row["criteria"], "filter": row["stage"], "count": 0,
                                                "names": []})  # fmt: skip
        g["count"] += 1
        if len(g["names"]) < examples:
            g["names"].append(row[decision.label])
    return sorted(groups.values(), key=lambda g: (g["criteria"] in BACKGROUND, -g["count"], g["criteria"]))


def funnel_steps(decision: Decision) -> list[dict[str, Any]]:
    """Every funnel step numbered from 1, with the candidates before and after it."""
    return [{"number": i + 1, "filter": f.filter, "before": f.before, "after": f.after}
            for i, f in enumerate(decision.funnel)]  # fmt: skip


def pending_sentence(decision: Decision) -> str | None:
    """One sentence for a pending brokerage whose filters emptied the list, e.g. "No queue left: step 5 of 5,
    memory check, removed the last 1 (of 10 considered)."; None otherwise."""
    step = emptying_step(decision)
    if step is None:
        return None
    what = "nucleus" if decision.label == "nucleus" else "queue"
    first = decision.funnel[0].before
    return (
        f"No {what} left: step {step['number']} of {step['of']}, {step['filter']}, removed the last {step['before']} "
        f"(of {first} considered)."
    )
