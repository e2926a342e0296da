"""Auto-refresh choices of a view: off or every 1, 5 or 15 minutes, read from the URL's ?refresh=."""

from __future__ import annotations

from typing import Any

MINUTES: tuple[int, ...] = (0, 1, 5, 15)  # 0: off


def refresh_minutes(raw: Any) -> int:
    """The refresh interval in minutes named by RAW (?refresh=5); 0 (off) for anything else.

    Usage: ``refresh_minutes("5") == 5``
    """
    text = str(raw).strip().removesuffix("m").removesuffix("min") if raw is not None else ""
    return int(text) if text.isdigit() and int(text) in MINUTES else 0


def refresh_options() -> list[dict[str, Any]]:
    """The radio options: off, 1 min, 5 min, 15 min (values in minutes)."""
    return [{"label": " off" if m == 0 else f" {m} min", "value": m} for m in MINUTES]


def interval_ms(minutes: int) -> int:
    """The dcc.Interval period of MINUTES (one minute while off: the interval is disabled then)."""
    return max(minutes, 1) * 60_000
