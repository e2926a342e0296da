"""The docs cite only what this repository holds: every file path they name exists, and nothing outside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
# a path in backticks that starts at one of the repository's top folders
PATH = re.compile(r"`((?:brokerage|app|tests|docs|scripts|benchmarks|assets)/[\w./-]*\w)(?:[:#][^`]*)?`")
OUTSIDE = re.compile(r"\.\./shared|\bshared/(?:seeds|reference|design)")


def _cited(doc: Path) -> list[str]:
    return [m.group(1) for m in PATH.finditer(doc.read_text())]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_cited_paths_exist(doc: Path) -> None:
    """Every repository path a doc names in backticks is a file or folder of this repository."""
    missing = sorted({p for p in _cited(doc) if not (ROOT / p).exists() and "*" not in p})
    assert missing == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_no_citation_outside_the_repository(doc: Path) -> None:
    """No doc points at the workplace's shared folder: seeds are cited by what they say, sources by name."""
    assert OUTSIDE.findall(doc.read_text()) == []
