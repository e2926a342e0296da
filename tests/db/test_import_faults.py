"""`brokerage db import` on hostile files (issue #34 item 10): exit 2 with one line naming the problem, never a
traceback, and the stored grid unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from brokerage.cli import db as db_cli
from brokerage.model.snapshot import GridSnapshot
from brokerage.store import repository

CASES = {
    "non-UTF-8 bytes": (b'{"taken_at": "2026-01-01T00:00:00Z", "snapshot_id": "\xff\xfe"}', "not UTF-8 text: byte"),
    "a 5,000-digit integer": (b'{"taken_at": "2026-01-01T00:00:00Z", "version": ' + b"9" * 5000 + b"}", "not JSON"),
    "100,000 levels of nesting": (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 64 levels"),
    "200 levels of nesting": (b'{"queues": ' + b"[" * 200 + b"]" * 200 + b"}", "nested deeper than 64 levels"),
    "queue_order 2**63-1": (None, "work_queues[0].queue_order: 9223372036854775807 is outside the allowed range"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_db_import_of_a_hostile_file_exits_2_and_changes_nothing(
    engine: Any, db_url: str, tmp_path: Path, small_grid: GridSnapshot, case: str
) -> None:
    """A non-UTF-8 file, an integer beyond Python's 4,300-digit limit, JSON nested past 64 levels or an integer
    beyond its column's range: exit 2, the problem named in one line, no traceback, the stored grid unchanged."""
    repository.save_snapshot(engine, small_grid)
    before = repository.load_snapshot(engine).key
    raw, words = CASES[case]
    if raw is None:
        doc = small_grid.to_dict()
        doc["work_queues"][0]["queue_order"] = 2**63 - 1
        raw = json.dumps(doc).encode()
    path = tmp_path / "hostile.json"
    path.write_bytes(raw)
    result = CliRunner().invoke(db_cli.db, ["--database-url", db_url, "import", str(path)])
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert words in result.output and "Traceback" not in result.output
    assert repository.load_snapshot(engine).key == before
