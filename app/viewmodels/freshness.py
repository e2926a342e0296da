"""How old the shown grid is, and whether the database holds a newer version (pure; no dash, no I/O)."""

from __future__ import annotations

from datetime import UTC, datetime


def age_text(taken_at: datetime, now: datetime | None = None) -> str:
    """'snapshot taken 2026-11-24 10:00Z (2 h ago)': when the grid's data was taken and how long ago.

    Usage: ``age_text(snap.taken_at)``
    """
    now = now or datetime.now(UTC)
    taken = taken_at if taken_at.tzinfo else taken_at.replace(tzinfo=UTC)
    seconds = max((now - taken).total_seconds(), 0.0)
    if seconds < 90:
        ago = "just now"
    elif seconds < 90 * 60:
        ago = f"{round(seconds / 60)} min ago"
    elif seconds < 48 * 3600:
        ago = f"{round(seconds / 3600)} h ago"
    else:
        ago = f"{round(seconds / 86400)} d ago"
    return f"snapshot taken {taken.astimezone(UTC):%Y-%m-%d %H:%M}Z ({ago})"


def newer_version_text(shown_key: str | None, stored: tuple[str, int, datetime] | None) -> str | None:
    """The offer to reload when the stored grid (snapshot_id, version, taken_at) is not the one shown, else None.

    Usage: ``newer_version_text("demo@3", ("demo", 4, taken))``
    """
    if not shown_key or stored is None or f"{stored[0]}@{stored[1]}" == shown_key:
        return None
    return f"A newer grid is stored (version {stored[1]}, {age_text(stored[2])})."
