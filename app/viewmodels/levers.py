"""Levers box rows: an explanation (brokerage explain --json) -> sentences and tuning-page links (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode


def tuning_href(task: int, edits: Mapping[str, Any], key: str, value: Any) -> str:
    """The tuning page of TASK with the operator's EDITS and KEY=VALUE applied (the page reads edits from its URL).

    Usage: ``tuning_href(4242, {}, "NQUEUED_SAT_CAP", 151)  # "/tuning?task=4242&NQUEUED_SAT_CAP=151"``
    """
    return "/tuning?" + urlencode({"task": task, **{k: _text(v) for k, v in edits.items()}, key: _text(value)})


def _text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def standing(expl: Mapping[str, Any]) -> str:
    """Where the candidate stands, in one sentence."""
    name = expl.get("queue") or expl.get("nucleus")
    if expl["status"] == "ranked":
        return f"{name} is ranked {expl['rank']} (weight {expl['weight']:.4g})."
    if expl["status"] == "skipped":
        b = expl["blocking"][0]
        return f"{name} is removed by the {b['stage']} ({b['criteria']}): {b['reason']}"
    return f"{name} is not considered: {'; '.join(expl.get('notes', [])) or 'not a candidate of this broker'}."


def lever_rows(expl: Mapping[str, Any], edits: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """One row per verified lever: what to change, what it does, and (gdpconfig levers) the tuning link.

    Usage: ``lever_rows(services.levers.explain(4242, "CERN"))[0]["href"]``
    """
    out = []
    for lv in expl.get("levers", []):
        if lv["kind"] == "gdpconfig":
            change = f"{lv['key']} = {lv['value']}"
            href = tuning_href(int(expl["task"]), edits or {}, lv["key"], lv["value"])
        else:
            change = f"{lv['table']}.{lv['field']} of {lv['row']} = {lv['value']}"
            href = None  # a change of the grid itself: the tuning page edits gdpconfig only
        out.append({"kind": lv["kind"], "change": change, "effect": lv["effect"], "href": href})
    return out


def versions(expl: Mapping[str, Any]) -> str:
    """The versions the levers were found on."""
    return f"grid {expl['snapshot_version']} · gdpconfig {expl['config_version']}"
