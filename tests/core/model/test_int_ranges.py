"""Exact integers (issue #34 item 3): every integer column has a documented range checked wherever a grid comes in."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from brokerage.model.snapshot import GridSnapshot, check_number_ranges, frame
from brokerage.model.tables import BIG_MAX, INT_MAX, INT_MIN, TABLES, json_schema
from brokerage.model.validation import validate
from brokerage.synth.demo import demo_snapshot
from tests.builders import grid, queue, task
from tests.core.checks.helpers import decide

BASE = demo_snapshot(seed=0, queues=20, tasks=10).to_dict()
for _name in [k for k in BASE if k.startswith("dirac_")]:
    BASE[_name] = BASE[_name][:5]
INT_COLUMNS = [(name, c) for name, cols in TABLES.items() for c in cols if c.type == "int"]
# a row to hold each integer column: the first row of its table, or one made for it
_TID, _AT = BASE["tasks"][0]["jeditaskid"], BASE["taken_at"]
BASE["task_status_log"] = BASE.get("task_status_log") or [
    {"jeditaskid": _TID, "status": "defined", "modificationtime": _AT}
]
BASE["task_job_counts"] = BASE.get("task_job_counts") or [
    {"jeditaskid": _TID, "panda_queue": BASE["queues"][0]["panda_queue"], "jobstatus": "finished",
     "modificationtime": _AT, "njobs": 1}
]  # fmt: skip


def _with(name: str, col: str, value: Any) -> dict[str, Any] | None:
    doc = copy.deepcopy(BASE)
    if not doc.get(name):
        return None
    doc[name][0][col] = value
    return doc


def test_every_integer_column_has_a_range_inside_the_exact_integers() -> None:
    """Every integer column's range lies inside ±(2**53-1) (float64, JSON and JavaScript hold it exactly) and
    defaults to the database INTEGER's -2**31..2**31-1."""
    for _name, c in INT_COLUMNS:
        lo, hi = c.bounds()
        assert -BIG_MAX <= lo <= hi <= BIG_MAX
        if c.maximum is None:
            assert hi == INT_MAX and lo in (INT_MIN, c.minimum)


@pytest.mark.parametrize(("name", "col"), [(n, c.name) for n, c in INT_COLUMNS])
def test_each_integer_column_keeps_its_maximum_exactly_and_refuses_one_more(name: str, col: str) -> None:
    """An integer column's largest allowed value loads and exports unchanged (and the export validates); one more
    is refused by validate naming the field and the range, never wrapped or rounded."""
    c = next(x for x in TABLES[name] if x.name == col)
    lo, hi = c.bounds()
    doc = _with(name, col, int(hi))
    if doc is None:
        pytest.skip(f"the small demo grid has no {name} rows")
    problems = [p for p in validate(doc) if f"{name}[0].{col}" in p]
    assert problems == []
    if name != "task_status_log" and (name, col) not in {("tasks", "jeditaskid"), ("datasets", "jeditaskid")}:
        try:
            snap = GridSnapshot.from_dict(doc)
        except Exception as exc:  # references (ids that must match) may refuse the value: not a range matter
            assert "range" not in str(exc) and "minimum" not in str(exc), exc
        else:
            out = snap.to_dict()
            assert out[name][0][col] == int(hi)
            assert validate(json.loads(json.dumps(out))) == []
    over = validate(_with(name, col, int(hi) + 1))
    assert f"{name}[0].{col}: {int(hi) + 1} is outside the allowed range {int(lo)}..{int(hi)}" in over


def test_frames_built_without_validate_are_range_checked_not_wrapped() -> None:
    """A table built from rows (from-panda, CRIC imports) keeps 2**63-1 exact or refuses it: it never turns into
    -2**63; check_number_ranges names the field and range."""
    rows = [dict(r) for r in BASE["tasks"][:2]]
    rows[0]["ramcount"] = 2**63 - 1
    rows[1]["ramcount"] = 2**64
    snap = GridSnapshot.from_dict(copy.deepcopy(BASE)).replace(tasks=frame("tasks", rows))
    problems = check_number_ranges(snap)
    assert problems == [
        "tasks[0].ramcount: 9223372036854775807 is outside the allowed range 0..2147483647",
        "tasks[1].ramcount: 18446744073709551616 is outside the allowed range 0..2147483647",
    ]
    exact = frame("tasks", [dict(BASE["tasks"][0], jeditaskid=BIG_MAX)])
    assert int(exact["jeditaskid"].iloc[0]) == BIG_MAX


def test_the_largest_memory_request_stays_pending() -> None:
    """ramcount at its maximum (2**31-1 MB per core) times 8 cores is 1.7e10 MB, above any queue's maxrss: the
    task is pending with -lowmemory (2**63-1 used to wrap negative and broker the task onto every queue)."""
    snap = grid([queue("A", "S1", maxrss=4000, corecount=8)], [task(1, ramcount=INT_MAX, corecount=8)])
    d, seed = decide(snap)
    assert d.status == seed.status == "pending"
    assert [s.criteria for s in d.skipped] == ["-lowmemory"]


def test_the_schema_publishes_every_integer_range() -> None:
    """docs/snapshot.schema.json states each integer column's minimum and maximum."""
    props = json_schema()["properties"]
    for name, c in INT_COLUMNS:
        spec = props[name]["items"]["properties"][c.name]
        spec = spec["anyOf"][0] if "anyOf" in spec else spec
        assert (spec["minimum"], spec["maximum"]) == c.bounds()
