"""gdpconfig history for the tuning page: version rows, version options and diffs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.viewmodels.tuning import shown
from brokerage.model.gdpconfig import REGISTRY


def with_default(key: str, value: Any) -> str:
    """VALUE as stored, or the parameter's default marked "(default)" when the version leaves KEY unset.

    Usage: ``with_default("NQUEUED_SAT_CAP", None)  # "150 (default)"``
    """
    if value is not None:
        return shown(value)
    p = REGISTRY.get(key)
    return f"{shown(p.default)} (default)" if p is not None and p.default is not None else "unset"


def _change_text(key: str, old: str | None, new: str | None) -> str:
    return f"{key}: {with_default(key, old)} → {with_default(key, new)}"


def history_rows(versions: Iterable[Any]) -> list[dict[str, Any]]:
    """One row per saved version (from ``config_store.history``), newest first: version, who, when (UTC), comment and the keys it changed."""
    return [
        {
            "version": v.version,
            "who": v.who,
            "when": v.created_at.strftime("%Y-%m-%d %H:%M"),
            "comment": v.comment,
            "changes": "; ".join(_change_text(c.key, c.old_value, c.new_value) for c in v.changes),
        }
        for v in versions
    ]


def history_columns() -> list[dict[str, Any]]:
    """AG Grid columns of the history table."""
    return [
        {"field": "version", "headerName": "v", "minWidth": 50, "maxWidth": 60},
        {"field": "who", "minWidth": 70, "maxWidth": 100},
        {"field": "when", "headerName": "when (UTC)", "minWidth": 125, "maxWidth": 135},
        # long text wraps inside the card instead of being cut to a few letters
        {
            "field": "changes",
            "flex": 3,
            "minWidth": 160,
            "wrapText": True,
            "autoHeight": True,
            "tooltipField": "changes",
        },
        {
            "field": "comment",
            "flex": 2,
            "minWidth": 120,
            "wrapText": True,
            "autoHeight": True,
            "tooltipField": "comment",
        },
    ]


def version_options(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Dropdown options of saved versions, newest first, plus version 0 (the defaults)."""
    opts = [{"label": f"v{r['version']} · {r['who']}", "value": r["version"]} for r in rows]
    return [*opts, {"label": "v0 · defaults", "value": 0}]


def diff_rows(diff: Mapping[str, tuple[Any, Any]]) -> list[dict[str, Any]]:
    """Rows of a version diff ``{key: (value in A, value in B)}``, sorted by key."""
    return [{"key": k, "a": with_default(k, va), "b": with_default(k, vb)} for k, (va, vb) in sorted(diff.items())]
