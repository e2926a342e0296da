"""Grid-diff rows and labels: a diff's JSON (brokerage diff --json) -> table rows and sentences (pure)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

LEVELS = {"row": "one row", "table": "one table", "together": "several together"}


def version_options(versions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Dropdown options of stored grid versions, newest first: "v5 · 25 Nov 12:10 · current".

    Usage: ``version_options(services.diffs.versions())``
    """
    out = []
    for v in versions:
        taken = datetime.fromisoformat(str(v["taken_at"])).strftime("%d %b %H:%M")
        mark = " · current" if v.get("current") else ""
        out.append({"label": f"v{v['version']} · {v['snapshot_id']} · taken {taken}{mark}", "value": int(v["version"])})
    return out


def default_pair(versions: list[dict[str, Any]]) -> tuple[int | None, int | None]:
    """(from, to): the version before the current one and the current one (or the two newest)."""
    numbers = [int(v["version"]) for v in versions]
    if len(numbers) < 2:
        return None, (numbers[0] if numbers else None)
    current = next((int(v["version"]) for v in versions if v.get("current")), numbers[0])
    older = [n for n in numbers if n < current]
    return (older[0] if older else numbers[1]), current


def rows(diff: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per changed brokerage: task, broker, what changed, the first cause's sentence and its level."""
    out = []
    for t in diff.get("tasks", []):
        causes = t.get("causes", [])
        first = causes[0] if causes else {}
        more = f" (+{len(causes) - 1} more)" if len(causes) > 1 else ""
        out.append(
            {
                "task": t["task"],
                "broker": t["broker"],
                "changed": ", ".join(t["changed"]),
                "what": t["headline"].split(": ", 1)[-1],
                "because": (first.get("sentence", "") + more) if first else (t.get("note") or "not attributed"),
                "input": first.get("table", ""),
                "attributed to": LEVELS.get(first.get("level", ""), ""),
            }
        )
    return out


def cause_counts(diff: dict[str, Any]) -> str:
    """How many changed brokerages each input explains first, largest first: "job_counts 150, network 20"."""
    counts: dict[str, int] = {}
    for t in diff.get("tasks", []):
        causes = t.get("causes", [])
        label = causes[0]["table"] if causes else "not attributed"
        if causes and causes[0].get("level") == "together":
            label = "several inputs together"
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{k} {n}" for k, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def summary(diff: dict[str, Any]) -> str:
    """One sentence: how many brokerages changed, which inputs changed, and what the diff was made on."""
    inputs = ", ".join(f"{k} ({n})" for k, n in diff.get("inputs_changed", {}).items()) or "no input"
    return (
        f"{diff['changed']} of {diff['compared']} brokerages changed from grid {diff['from']} to {diff['to']} "
        f"(gdpconfig {diff['config_version']}); {len(diff.get('new', []))} new, {len(diff.get('gone', []))} gone. "
        f"Inputs that changed (row groups): {inputs}."
        + (f" Caused by: {cause_counts(diff)}." if diff.get("tasks") else "")
    )
