"""gdpconfig history for the tuning page: version rows, version options and diffs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.viewmodels.tuning import shown


def _change_text(key: str, old: str | None, new: str | None) -> str:
    return f"{key}: {'unset' if old is None else old} → {'unset' if new is None else new}"


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
        {"field": "version", "maxWidth": 90},
        {"field": "who", "maxWidth": 110},
        {"field": "when", "headerName": "when (UTC)", "maxWidth": 140},
        {"field": "changes", "tooltipField": "changes"},
        {"field": "comment", "tooltipField": "comment"},
    ]


def version_options(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Dropdown options of saved versions, newest first, plus version 0 (the defaults)."""
    opts = [{"label": f"v{r['version']} · {r['who']}", "value": r["version"]} for r in rows]
    return [*opts, {"label": "v0 · defaults", "value": 0}]


def diff_rows(diff: Mapping[str, tuple[Any, Any]]) -> list[dict[str, Any]]:
    """Rows of a version diff ``{key: (value in A, value in B)}``, sorted by key."""
    return [{"key": k, "a": shown(va), "b": shown(vb)} for k, (va, vb) in sorted(diff.items())]
