"""CSV (one long table with a record column) and JSON writers of a report."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterator
from typing import IO, Any

from brokerage.model.explain import Decision
from brokerage.report.build import Report
from brokerage.report.entry import TaskEntry
from brokerage.report.summary import shares

# Stable column set: factor names differ between brokers, so the factors of a candidate are one JSON text column.
CSV_COLUMNS: tuple[str, ...] = (
    "task", "broker", "record", "name", "rank", "weight", "share", "factors", "criteria", "reason", "stage",
    "temporary", "filter", "before", "after", "status", "message",
)  # fmt: skip
# Record kinds; the nucleus broker's rows carry the same kinds prefixed with "nucleus_".
RECORDS: tuple[str, ...] = ("meta", "decision", "candidate", "skip", "funnel", "note", "error", "whatif")

Row = tuple[Any, ...]
_EMPTY = ("",) * len(CSV_COLUMNS)
_IDX = {c: i for i, c in enumerate(CSV_COLUMNS)}


def _row(**values: Any) -> Row:
    out = list(_EMPTY)
    for k, v in values.items():
        out[_IDX[k]] = v
    return tuple(out)


def _flag(b: bool) -> str:
    return "true" if b else "false"


def _text(value: Any, sort: bool = True) -> str:
    return json.dumps(value, sort_keys=sort, default=_json_default, allow_nan=False) if value is not None else ""


def _decision_rows(tid: int, d: Decision, prefix: str) -> Iterator[Row]:
    b = d.broker
    top = d.extra.get("chosen") if d.label == "nucleus" else (d.candidates[0].name if d.candidates else "")
    yield _row(task=tid, broker=b, record=prefix + "decision", name=top or "", status=d.status, message=d.message)
    share = shares(d)
    rec = prefix + "candidate"
    for c in d.candidates:
        yield _row(task=tid, broker=b, record=rec, name=c.name, rank=c.rank, weight=c.weight,
                   share=share.get(c.name, 0.0), factors=_text(_finite(c.factors), sort=False))  # fmt: skip
    rec = prefix + "skip"
    # literal tuples: skips are most of the rows of a grid-wide report. A SkipList gives plain dicts straight from
    # the filters' masks, cheaper than materialising Skip objects.
    to_dicts = getattr(d.skipped, "to_dicts", None)
    if to_dicts is not None:
        key = d.label
        for x in to_dicts(key):
            yield (tid, b, rec, x[key], "", "", "", "", x["criteria"], x["reason"], x["stage"],
                   _flag(x["temporary"]), "", "", "", "", "")  # fmt: skip
    else:
        for s in d.skipped:
            yield (tid, b, rec, s.candidate, "", "", "", "", s.criteria, s.reason, s.stage, _flag(s.temporary),
                   "", "", "", "", "")  # fmt: skip
    rec = prefix + "funnel"
    for f in d.funnel:
        yield _row(task=tid, broker=b, record=rec, filter=f.filter, before=f.before, after=f.after)
    rec = prefix + "note"
    for n in d.notes:
        yield _row(task=tid, broker=b, record=rec, name=n.candidate, stage=n.check, reason=n.text)


def csv_rows(report: Report) -> Iterator[Row]:
    """Every row of the CSV after the header: meta rows first, then per task its job and nucleus rows.

    Usage: ``rows = list(csv_rows(report))``
    """
    for key, value in report.meta.items():
        yield _row(record="meta", name=key, message=value if isinstance(value, str) else _text(value))
    for e in report.tasks:
        if e.job is not None:
            yield from _decision_rows(e.task, e.job, "")
        if e.nucleus is not None:
            yield from _decision_rows(e.task, e.nucleus, "nucleus_")
        if e.error:
            yield _row(task=e.task, record="error", message=e.error)
    if report.whatif is not None:
        yield from _whatif_rows(report)


def _whatif_rows(report: Report) -> Iterator[Row]:
    """One row per decision the what-if edits changed: top before/after, status before → after, the reasons
    (reason, "; "-joined) and the best candidates of both sides (message, JSON)."""
    assert report.whatif is not None
    for c in report.whatif.changes:
        yield _row(task=c.task, broker=c.broker, record="whatif" if c.kind == "job" else "nucleus_whatif",
                   name=c.top_after, before=c.top_before, after=c.top_after,
                   status=f"{c.status_before} → {c.status_after}", reason="; ".join(c.why),
                   message=_text({"before": c.before, "after": c.after}, sort=False))  # fmt: skip


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet read a cell as a formula


# a criteria code (-cpucore) or a plain number (-1.5): no operator, call or reference a formula could run
_INERT = re.compile(r"-[a-z0-9_]+|[+-]?[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?", re.ASCII)


def neutralised(row: Row) -> Row:
    """ROW with every text cell a spreadsheet would run as a formula (starting with = + - @, tab or CR) prefixed
    with an apostrophe; numbers, plain-number text and PanDA's criteria codes (-cpucore) stay as they are.

    Usage: ``neutralised(("=HYPERLINK(...)", 3)) == ("'=HYPERLINK(...)", 3)``
    """
    return tuple(
        "'" + v if isinstance(v, str) and v.startswith(_FORMULA_START) and not _INERT.fullmatch(v) else v for v in row
    )


def write_csv(report: Report, out: IO[bytes]) -> None:
    """Write the report as one CSV table (UTF-8, header row, columns CSV_COLUMNS) to the binary stream OUT.

    Usage: ``with open("r.csv", "wb") as f: write_csv(report, f)``
    """
    text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=False)
    try:
        w = csv.writer(text)
        w.writerow(CSV_COLUMNS)
        w.writerows(map(neutralised, csv_rows(report)))
        text.flush()
    finally:
        text.detach()


def _json_default(value: Any) -> Any:
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return _finite(item())
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def _finite(value: Any) -> Any:
    """VALUE with every NaN/inf float replaced by None, as strict JSON has no such numbers."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _decision_json(d: Decision | None) -> Any:
    if d is None:
        return None
    doc = d.to_dict()
    # skips and the funnel hold only text, ints and booleans: no need to walk their (many) rows
    return {k: v if k in ("skipped", "funnel") else _finite(v) for k, v in doc.items()}


TOP_CANDIDATES = 10  # candidates per decision in the summary variant


def _decision_summary(d: Decision | None) -> Any:
    """A decision without its per-candidate skip rows: outcome, the best candidates, skip counts per criteria."""
    if d is None:
        return None
    out: dict[str, Any] = {
        "broker": d.broker,
        "task": d.task,
        "status": d.status,
        "candidates_total": len(d.candidates),
        "top_candidates": [_finite(c.to_dict(d.label)) for c in d.candidates[:TOP_CANDIDATES]],
        "skipped_total": len(d.skipped),
        "skips_by_criteria": dict(sorted(d.criteria_counts().items(), key=lambda kv: (-kv[1], kv[0]))),
        "funnel": [f.to_dict() for f in d.funnel],
    }
    if d.pending_minutes is not None:
        out["pending_minutes"] = d.pending_minutes
    if d.message:
        out["message"] = d.message
    if d.notes:
        out["notes_total"] = len(d.notes)
    return out


def task_json(e: TaskEntry, full: bool = True) -> dict[str, Any]:
    """JSON form of one task of the report; FULL=False keeps each decision's summary only (no skip rows).

    Usage: ``task_json(report.tasks[0])["job"]["candidates"]``
    """
    decision = _decision_json if full else _decision_summary
    return {
        "task": e.task,
        "prodsourcelabel": e.label,
        "task_status": e.task_status,
        "chunk_njobs": e.njobs,
        "job": decision(e.job),
        "nucleus": decision(e.nucleus),
        "error": e.error or None,
    }


def write_json(report: Report, out: IO[bytes], full: bool = True) -> None:
    """Write ``{"meta": ..., "tasks": [...], "summary": ...[, "whatif": ...]}`` to the binary stream OUT, one task at
    a time ("whatif": the before/after of a report made with what-if edits).

    FULL=False writes the summary variant: per decision the top candidates and skip counts per criteria code
    instead of every skipped candidate (the whole grid's full JSON is ~150 MB on the demo grid).
    Usage: ``with open("r.json", "wb") as f: write_json(report, f)``
    """
    small = len(report.tasks) <= 20
    indent, sep = (2, None) if small else (None, (",", ":"))

    def dump(value: Any) -> bytes:
        return json.dumps(value, indent=indent, separators=sep, default=_json_default, allow_nan=False).encode()

    meta = {**report.meta, "detail": "full" if full else "summary"}
    out.write(b'{"meta": ' + dump(_finite(meta)) + b',\n"tasks": [\n')
    for i, e in enumerate(report.tasks):
        out.write((b",\n" if i else b"") + dump(task_json(e, full)))
    whatif = b"" if report.whatif is None else b',\n"whatif": ' + dump(_finite(report.whatif.to_dict()))
    out.write(b'\n],\n"summary": ' + dump(_finite(report.summary)) + whatif + b"}\n")
