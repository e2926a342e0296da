"""AG Grid filters and sorts carried in the URL: ?q_f={"site":"CERN"} and ?q_s=nQ:desc, parsed back for a layout."""

from __future__ import annotations

import json
import re
from typing import Any

# the query-parameter prefix of every table whose filters and sort live in the URL (grid(..., url_param=))
URL_GRIDS = {
    "q": "Queues: every queue",
    "r": "Queues: ranked candidates",
    "k": "Queues: skipped queues",
    "p": "Pending tasks",
    "s": "Stabilizer: (PQ, user) pairs",
    "l": "Network: most congested links",
    "n": "Nuclei: every nucleus",
    "nr": "Nuclei: kept nuclei",
    "nk": "Nuclei: skipped nuclei",
    "i": "Tuning: tasks whose brokerage moved",
    "d": "DIRAC: task queues",
    "o": "Overview: skip criteria",
}
_PARAM = re.compile(r"([a-z]+)_[fs]")


def is_grid_param(name: str) -> bool:
    """True for a table's filter or sort parameter (``q_f``, ``p_s``): page state, never a gdpconfig key."""
    m = _PARAM.fullmatch(name)
    return bool(m) and m.group(1) in URL_GRIDS


def filter_model(text: str | None) -> dict[str, Any]:
    """An AG Grid filterModel from the URL's {column: value} JSON (numbers filter equal, text contains); {} if bad.

    A value may also be {"type": "greaterThan", "filter": 5} for another comparison.

    Usage: ``filter_model('{"atlas_site": "CERN-PROD"}')``
    """
    try:
        raw = json.loads(text) if text else {}
    except ValueError:
        return {}
    if not isinstance(raw, dict):
        return {}
    out: dict[str, Any] = {}
    for col, v in raw.items():
        if isinstance(v, dict) and isinstance(v.get("type"), str) and "filter" in v:
            kind = "number" if isinstance(v["filter"], int | float) and not isinstance(v["filter"], bool) else "text"
            out[str(col)] = {"filterType": kind, "type": v["type"], "filter": v["filter"]}
            continue
        if isinstance(v, bool) or v is None or isinstance(v, dict | list):
            continue
        if isinstance(v, (int, float)):
            out[str(col)] = {"filterType": "number", "type": "equals", "filter": v}
        else:
            out[str(col)] = {"filterType": "text", "type": "contains", "filter": str(v)}
    return out


def with_sort(columns: list[dict[str, Any]], text: str | None) -> list[dict[str, Any]]:
    """COLUMNS with the URL's "column:asc,other:desc" sort applied (unknown columns and directions ignored)."""
    wanted: dict[str, str] = {}
    for part in (text or "").split(","):
        col, _, direction = part.partition(":")
        if col and direction in ("asc", "desc"):
            wanted[col] = direction
    if not wanted:
        return columns
    return [{**c, "sort": wanted[c["field"]]} if c.get("field") in wanted else {k: v for k, v in c.items() if k != "sort"}
            for c in columns]  # fmt: skip
