"""The brokers' task records: built without pandas' per-cell boxing, and carried between derived caches."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from brokerage.model import views
from brokerage.model.cache import GridCache, derived_cache
from brokerage.synth.demo import demo_snapshot


def _same(a: list[dict[str, Any]] | dict[int, dict[str, Any]], b: Any) -> bool:
    """Equal cell for cell: same keys in the same order, same types, equal values (NaN equal to NaN)."""
    rows_a, rows_b = (list(a.values()), list(b.values())) if isinstance(a, dict) else (a, b)
    if isinstance(a, dict) and list(a) != list(b):
        return False
    for ra, rb in zip(rows_a, rows_b, strict=True):
        if list(ra) != list(rb):
            return False
        for k in ra:
            x, y = ra[k], rb[k]
            if type(x) is not type(y) or not (x is y or x == y or (x != x and y != y)):
                return False
    return True


def test_records_equal_pandas_to_dict() -> None:
    """Each record holds what ``DataFrame.to_dict("records")`` gives: numpy scalars in object columns boxed to
    Python's, native cells (str, None, float) as they are, extension and datetime columns as pandas gives them."""
    df = pd.DataFrame({
        "mixed": np.array([np.int64(3), 2.5, None, np.float64(1.5)], dtype=object),
        "text": np.array(["a", np.str_("b"), None, "d"], dtype=object),
        "ints": pd.array([1, None, 3, 4], dtype="Int64"), "cat": pd.Categorical(["x", "y", "x", "y"]),
        "when": pd.to_datetime(["2026-01-01", None, "2026-01-02", "2026-01-03"], utc=True),
        "n": [1, 2, 3, 4], "f": [0.5, np.nan, 1.0, 2.0], "b": [True, False, True, False],
    })  # fmt: skip
    assert _same(views._records(df), df.to_dict("records"))
    assert type(views._records(df)[0]["mixed"]) is int  # a numpy int in an object column is boxed


def test_carried_records_equal_a_fresh_build() -> None:
    """A derived cache whose task table is the old one with tasks appended and cells edited (a value, and an
    object cell's type only) gets records equal to a build from scratch; only those rows are built again."""
    snap = demo_snapshot(seed=0, queues=60, tasks=300)
    old = GridCache(snap)
    first = int(snap.tasks["jeditaskid"].iloc[0])
    views.task_row(old, first)  # the records are built
    tasks = snap.tasks.copy()
    new = tasks.iloc[:5].copy()
    new["jeditaskid"] = tasks["jeditaskid"].max() + 1 + np.arange(5)
    tasks.iat[0, tasks.columns.get_loc("ramcount")] = 12345.0
    obj = next(c for c in tasks.columns if tasks[c].dtype == object and isinstance(tasks[c].iloc[1], str))
    tasks.iat[1, tasks.columns.get_loc(obj)] = np.str_(tasks[obj].iloc[1])  # equal value, another type
    snap2 = snap.replace(tasks=pd.concat([tasks, new], ignore_index=True))
    cache = derived_cache(old, snap2)
    views.carry_task_records(cache, old)
    carried = cache.peek("task_records")
    assert carried is not None and _same(carried, views._task_records(snap2))
    assert views.task_row(cache, first)["ramcount"] == 12345.0
    assert type(carried[int(tasks["jeditaskid"].iloc[1])][obj]) is np.str_
    assert carried[int(tasks["jeditaskid"].iloc[2])] is old.peek("task_records")[int(tasks["jeditaskid"].iloc[2])]


def test_records_are_not_carried_when_the_dtypes_change() -> None:
    """A task table whose column changed dtype (a concat that turned ints into floats) is built afresh."""
    snap = demo_snapshot(seed=0, queues=60, tasks=300)
    old = GridCache(snap)
    views.task_row(old, int(snap.tasks["jeditaskid"].iloc[0]))
    int_col = next(c for c in snap.tasks.columns if snap.tasks[c].dtype == np.int64 and c != "jeditaskid")
    cache = derived_cache(old, snap.replace(tasks=snap.tasks.astype({int_col: float})))
    views.carry_task_records(cache, old)
    assert cache.peek("task_records") is None
