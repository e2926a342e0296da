"""Numbers as a person reads them in a terminal: counts with separators, a few digits, long lists wrapped."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

WIDTH = 100  # wrap long lists here
INDENT = 29  # a wrapped list continues under its value column


def figure(value: Any) -> str:
    """VALUE for a table cell: ``118,431``, ``51.9``, ``0.42``, ``-`` for none.

    Usage: ``figure(51.895502007912704) == "51.9"``
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) >= 100):
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.3g}"
    return str(value)


def change(before: Any, after: Any) -> str:
    """AFTER - BEFORE signed, in the same style (``+1,204``, ``-3.5``), or blank when either is missing.

    Usage: ``change(100, 90) == "-10"``
    """
    if not isinstance(before, int | float) or not isinstance(after, int | float):
        return ""
    text = figure(after - before)
    return text if text.startswith("-") else f"+{text}"


def listing(items: Sequence[str], indent: int = INDENT, width: int = WIDTH) -> str:
    """ITEMS comma-separated, wrapped to WIDTH with continuation lines indented by INDENT; "none" when empty.

    Usage: ``click.echo(f"{'throttled work queues':<28} {listing(names)}")``
    """
    if not items:
        return "none"
    lines, line = [], f"{len(items)}:"
    for i, item in enumerate(items):
        piece = f" {item}" + ("," if i < len(items) - 1 else "")
        if len(line) + len(piece) > width - indent and line.strip():
            lines.append(line)
            line = piece.lstrip()
        else:
            line += piece
    lines.append(line)
    return ("\n" + " " * indent).join(lines)
