"""Validation of a snapshot document: every value against its column's type, range and shape."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

from brokerage.model.architecture import ArchitectureError, parse_architecture
from brokerage.model.tables import SCHEMA_VERSION, TABLES, Col

_TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
MAX_JSON_DEPTH = 64  # snapshot documents nest 4 levels; deeper input is refused before it can recurse
# numbers are JSON numbers: "5", 1_000, " 5 " and non-ASCII digits are refused, never read as numbers
NUMBER_FORMS = "a JSON number, not a string"


def _time_problem(v: Any) -> str | None:
    """What is wrong with V as an ISO 8601 time (a real calendar date pandas can hold), or None."""
    if not (isinstance(v, str) and _TIME_RE.match(v)):
        return f"expected an ISO 8601 time like 2026-11-22T10:00:00Z, got {shown_value(v)}"
    try:
        pd.Timestamp(v)
    except (ValueError, OverflowError):
        return f"{shown_value(v)} is not a real date and time (years 1678-2261, months 1-12, days of the month)"
    return None


def shown_value(v: Any) -> str:
    """A short, printable form of a JSON value for messages (numpy scalars as plain numbers)."""
    if isinstance(v, np.generic):
        v = v.item()
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _text_problem(v: str) -> str | None:
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return f"{shown_value(v)} holds a lone surrogate (not valid Unicode text)"
    return None


def _string_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) and _text_problem(x) is None for x in v)


def _architectures_problem(v: Any) -> str | None:
    entries = [v] if isinstance(v, dict) else v
    if not isinstance(entries, list):
        return f"expected a list of objects, got {shown_value(v)}"
    for j, e in enumerate(entries):
        if not isinstance(e, dict):
            return f"[{j}]: expected an object, got {shown_value(e)}"
        for k, x in e.items():
            if not (x is None or (isinstance(x, str) and _text_problem(x) is None) or _string_list(x)):
                return f"[{j}].{k}: expected a string or a list of strings, got {shown_value(x)}"
    return None


_TAG_TEXT_KEYS = ("cmtconfig", "project", "release", "container_name", "tag")  # what the software checks read


def _tags_problem(v: Any) -> str | None:
    if not isinstance(v, list):
        return f"expected a list of objects, got {shown_value(v)}"
    for j, e in enumerate(v):
        if not isinstance(e, dict):
            return f"[{j}]: expected an object, got {shown_value(e)}"
        for k in _TAG_TEXT_KEYS:
            x = e.get(k)
            if not (x is None or (isinstance(x, str) and _text_problem(x) is None)):
                return f"[{j}].{k}: expected a string, got {shown_value(x)}"
        x = e.get("sources")
        if not (x is None or (isinstance(x, str) and _text_problem(x) is None) or _string_list(x)):
            return f"[{j}].sources: expected a list of strings, got {shown_value(x)}"
    return None


# every json-typed column names the shape it must have; brokers read these values without further checks
def _variables_problem(v: Any) -> str | None:
    if not isinstance(v, dict) or not all(
        isinstance(k, str) and isinstance(x, (str, int, float)) and not isinstance(x, bool) for k, x in v.items()
    ):
        return f"expected an object of bind variable -> string or number, got {shown_value(v)}"
    return None


_JSON_SHAPES = {"architectures": _architectures_problem, "tags": _tags_problem, "variables": _variables_problem}


def _number_problem(c: Col, v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        kind = "an integer" if c.type == "int" else "a number"
        return f"expected {kind} ({NUMBER_FORMS}), got {shown_value(v)}"
    if isinstance(v, float) and not math.isfinite(v):
        return f"expected a finite number, got {shown_value(v)}"
    if c.type == "int" and isinstance(v, float) and not v.is_integer():
        return f"expected an integer, got {shown_value(v)}"
    return range_problem(c, v)


def range_problem(c: Col, v: float) -> str | None:
    """What is wrong with number V against column C's range (Col.bounds), or None.

    Usage: ``range_problem(Col("njobs", "int", "", minimum=0), 2**31)  # '2147483648 is outside ...'``
    """
    lo, hi = c.bounds()
    if lo <= v <= hi:
        return None
    if v < lo and c.minimum is not None:
        return f"{shown_value(v)} is below the minimum {c.minimum:g}"
    bounds = f"{int(lo)}..{int(hi)}" if c.type == "int" else f"{lo:g}..{hi:g}"
    return f"{shown_value(v)} is outside the allowed range {bounds}"


def value_problem(c: Col, v: Any) -> str | None:
    """Return what is wrong with V for column C, or None."""
    if v is None:
        return None if (c.nullable or not c.required) else "required, got null"
    t = c.type
    if t == "str":
        if not isinstance(v, str):
            return f"expected a string, got {shown_value(v)}"
        if problem := _text_problem(v):
            return problem
    if t in ("int", "float") and (problem := _number_problem(c, v)):
        return problem
    if t == "bool" and not isinstance(v, bool):
        return f"expected true or false, got {shown_value(v)}"
    if t == "time" and (problem := _time_problem(v)):
        return problem
    if t == "list" and not _string_list(v):
        return f"expected a list of strings, got {shown_value(v)}"
    if t == "json" and c.name in _JSON_SHAPES and (problem := _JSON_SHAPES[c.name](v)):
        return problem
    if c.choices is not None and v not in c.choices:
        return f"{shown_value(v)} is not allowed; expected one of {', '.join(repr(x) for x in c.choices)}"
    return None


def depth_problem(data: Any) -> str | None:
    """``$: nested deeper than ...`` when DATA nests beyond MAX_JSON_DEPTH, else None (iterative: no recursion).

    Usage: ``assert depth_problem({"a": [1]}) is None``
    """
    stack = [(data, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"$: nested deeper than {MAX_JSON_DEPTH} levels"
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)
    return None


def validate(data: Any) -> list[str]:
    """Every problem in a snapshot document, as ``path: what is wrong`` lines (empty list = valid).

    Usage: ``validate({"taken_at": "2026-01-01T00:00:00Z", "queues": [{}]})``
    """
    if not isinstance(data, dict):
        return ["$: expected a JSON object with the snapshot tables"]
    if deep := depth_problem(data):
        return [deep]
    problems: list[str] = []
    if "taken_at" not in data:
        problems.append("taken_at: required (ISO 8601 time the snapshot was taken)")
    elif problem := _time_problem(data["taken_at"]):
        problems.append(f"taken_at: {problem}")
    sv = data.get("schema_version", SCHEMA_VERSION)
    if isinstance(sv, bool) or sv != SCHEMA_VERSION:
        problems.append(f"schema_version: {shown_value(sv)} is not supported; expected {SCHEMA_VERSION}")
    if problem := value_problem(Col("version", "int", "", minimum=0), data.get("version")):
        problems.append(f"version: {problem}")
    if problem := value_problem(Col("snapshot_id", "str", ""), data.get("snapshot_id")):
        problems.append(f"snapshot_id: {problem}")
    known = set(TABLES) | {"schema_version", "snapshot_id", "version", "taken_at"}
    for key in data:
        if key not in known:
            problems.append(f"{key}: unknown table; expected one of {', '.join(TABLES)}")
    for name, cols in TABLES.items():
        rows = data.get(name, [])
        if not isinstance(rows, list):
            problems.append(f"{name}: expected a list of rows")
            continue
        colmap = {c.name: c for c in cols}
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                problems.append(f"{name}[{i}]: expected an object")
                continue
            for c in cols:
                if c.required and c.name not in row:
                    problems.append(f"{name}[{i}].{c.name}: required ({c.description})")
            for k, v in row.items():
                col = colmap.get(k)
                if col is None:
                    problems.append(f"{name}[{i}].{shown_value(k)[1:-1]}: unknown column")
                    continue
                msg = value_problem(col, v)
                if msg is None and name == "tasks" and k == "architecture" and v:
                    msg = _architecture_problem(v)
                if msg:
                    problems.append(f"{name}[{i}].{k}: {msg}")
    return problems


def _architecture_problem(text: str) -> str | None:
    """The broker's own parser judges a task architecture, so validation and brokerage cannot disagree."""
    try:
        parse_architecture(text)
    except ArchitectureError as exc:
        return f"malformed: {exc}"
    return None
