"""Counted nouns for messages: "1 task", "2 tasks", "1 nucleus", "3 nuclei"."""

from __future__ import annotations

_IRREGULAR = {"nucleus": "nuclei", "entry": "entries", "query": "queries", "match": "matches"}


def count(n: int, noun: str, plural: str | None = None) -> str:
    """N and NOUN in the number N asks for (PLURAL when the plural is not NOUN + "s" or a known irregular one).

    Usage: ``count(1, "task") == "1 task"``, ``count(2, "nucleus") == "2 nuclei"``
    """
    if n == 1:
        return f"{n} {noun}"
    return f"{n} {plural or _IRREGULAR.get(noun, noun + 's')}"
