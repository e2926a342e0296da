"""AG Grid filters and sorts carried in the URL: ?q_f={"site":"CERN"} and ?q_s=nQ:desc, parsed back for a layout."""

from __future__ import annotations

import json
from typing import Any


def filter_model(text: str | None) -> dict[str, Any]:
    """An AG Grid filterModel from the URL's {column: value} JSON (numbers filter equal, text contains); {} if bad.

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
        if isinstance(v, bool) or v is None:
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
