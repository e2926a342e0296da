"""Brokerage reports: decisions of one task or the whole grid as CSV, JSON or a self-contained HTML page."""

from brokerage.report.build import Report, UnknownTaskError, build_report
from brokerage.report.entry import TaskEntry
from brokerage.report.export import FORMATS, MEDIA_TYPES, Format, filename, render, summary_default, write

__all__ = [
    "FORMATS",
    "MEDIA_TYPES",
    "Format",
    "Report",
    "TaskEntry",
    "UnknownTaskError",
    "build_report",
    "filename",
    "render",
    "summary_default",
    "write",
]
