"""One entry point per output: render a report as CSV, JSON or HTML bytes, or stream it to a file."""

from __future__ import annotations

import gzip
import io
import re
from collections.abc import Callable
from functools import partial
from typing import IO, Literal, get_args

from brokerage.model.errors import InputError
from brokerage.report.build import Report
from brokerage.report.html import write_html
from brokerage.report.tabular import write_csv, write_json


class ReportFormatError(InputError, ValueError):
    """A report format that is not one of FORMATS."""


Format = Literal["csv", "json", "html"]
FORMATS: tuple[str, ...] = get_args(Format)
MEDIA_TYPES: dict[str, str] = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "html": "text/html; charset=utf-8",
}
_WRITERS: dict[str, Callable[[Report, IO[bytes]], None]] = {
    "csv": write_csv,
    "json": write_json,
    "json-summary": partial(write_json, full=False),
    "html": write_html,
}


def check_format(fmt: str) -> Format:
    """FMT if it is a known format, else ReportFormatError (a ValueError) listing the formats.

    Usage: ``check_format("html")``
    """
    if fmt not in FORMATS:
        raise ReportFormatError(f"unknown report format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return fmt  # type: ignore[return-value]


def summary_default(report: Report) -> bool:
    """Whether REPORT's JSON is written as the summary variant unless the full one is asked for: every waiting task.

    Usage: ``write(report, "json", f, summary=summary_default(report))``
    """
    return report.whole_grid


def write(report: Report, fmt: Format, out: IO[bytes], gzipped: bool = False, summary: bool = False) -> None:
    """Stream REPORT in format FMT to the binary stream OUT (large grid-wide CSV/JSON never sit in memory twice);
    GZIPPED compresses it (a grid-wide JSON of 150 MB shrinks about tenfold). SUMMARY writes the JSON without
    per-candidate skip rows (top candidates and skip counts per criteria); CSV and HTML ignore it.

    Usage: ``with open("r.csv", "wb") as f: write(report, "csv", f)``
    """
    writer = _WRITERS["json-summary" if summary and fmt == "json" else check_format(fmt)]
    if not gzipped:
        writer(report, out)
        return
    # mtime=0: the same report gives the same bytes
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=6, mtime=0) as z:
        writer(report, z)  # type: ignore[arg-type]


def render(report: Report, fmt: Format, summary: bool = False) -> bytes:
    """REPORT as the bytes of a CSV, JSON or HTML file (what a download serves).

    Usage: ``data = render(report, "html")``
    """
    buf = io.BytesIO()
    write(report, fmt, buf, summary=summary)
    return buf.getvalue()


def filename(report: Report, fmt: Format, summary: bool = False) -> str:
    """A download file name: ``brokerage-report-<task or all>[-summary]-<snapshot>.<fmt>``.

    Usage: ``filename(report, "csv") == "brokerage-report-task-4242-demo-s0-q700-t3000-0.csv"``
    """
    ids = report.meta.get("task_ids") or []
    scope = "all" if report.whole_grid else f"task-{ids[0]}" if len(ids) == 1 else f"{len(ids)}-tasks"
    scope += "-summary" if summary and fmt == "json" else ""
    snap = re.sub(r"[^A-Za-z0-9._-]+", "-", str(report.meta.get("snapshot", "snapshot"))).strip("-")
    return f"brokerage-report-{scope}-{snap}.{check_format(fmt)}"
