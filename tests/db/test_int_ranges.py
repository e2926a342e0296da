"""Exact integers in the store (issue #34 item 3): the importer and from-panda path refuse what the columns cannot
hold, with the field named, and the database column of every integer can hold its whole range."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from brokerage.model.snapshot import GridSnapshot, SnapshotError, frame
from brokerage.model.tables import INT_MAX, INT_MIN, TABLES
from brokerage.store import repository
from brokerage.store.importer import ImportFileError, import_file
from brokerage.store.models import JSON_TABLES, table_of


def test_every_integer_range_fits_its_database_column() -> None:
    """An integer column whose range goes beyond -2**31..2**31-1 is stored in a BIGINT column (else PostgreSQL's
    INTEGER would overflow on import)."""
    for name, cols in TABLES.items():
        if name in JSON_TABLES:
            continue  # stored as one JSON document per row: Python ints, exact
        table = table_of(name)
        for c in cols:
            if c.type != "int" or c.name not in table.c:
                continue
            lo, hi = c.bounds()
            if lo < INT_MIN or hi > INT_MAX:
                assert isinstance(table.c[c.name].type, sa.BigInteger), (name, c.name)


def test_import_refuses_queue_order_at_2_63_and_leaves_the_grid(
    engine: Any, tmp_path: Path, small_grid: GridSnapshot
) -> None:
    """`db import` of a snapshot whose work_queues[0].queue_order is 2**63-1 is refused naming the field and its
    range (it used to crash the import); the stored grid is unchanged."""
    repository.save_snapshot(engine, small_grid)
    before = repository.load_snapshot(engine).key
    doc = small_grid.to_dict()
    doc["work_queues"][0]["queue_order"] = 2**63 - 1
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ImportFileError) as err:
        import_file(engine, path)
    assert "work_queues[0].queue_order: 9223372036854775807 is outside the allowed range" in str(err.value)
    assert repository.load_snapshot(engine).key == before


def test_a_grid_built_from_rows_with_a_wrapped_integer_is_not_stored(engine: Any, small_grid: GridSnapshot) -> None:
    """A grid built from database rows (from-panda) holding ramcount 2**63-1 is refused before storing, naming
    tasks[0].ramcount, instead of being stored as -2**63."""
    rows = small_grid.to_dict()["tasks"]
    rows[0]["ramcount"] = 2**63 - 1
    with pytest.raises(SnapshotError, match=r"tasks\[0\].ramcount: 9223372036854775807 is outside"):
        repository.save_snapshot(engine, small_grid.replace(tasks=frame("tasks", rows)))
