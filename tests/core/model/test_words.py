"""Counted nouns in messages agree with their number."""

from __future__ import annotations

from brokerage.model.words import count


def test_count_uses_singular_for_one_and_known_plurals() -> None:
    """One task is "1 task"; nuclei and entries get their irregular plurals; an explicit plural wins."""
    assert count(1, "task") == "1 task" and count(0, "task") == "0 tasks" and count(2, "task") == "2 tasks"
    assert count(3, "nucleus") == "3 nuclei" and count(1, "nucleus") == "1 nucleus"
    assert count(2, "entry") == "2 entries" and count(2, "box", "boxes") == "2 boxes"
