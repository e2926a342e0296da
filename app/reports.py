"""Report files made by the dashboard: written under data/cache/reports and served back by a download route."""

from __future__ import annotations

import contextlib
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import Flask, abort, send_file

from app import data, gridruns
from brokerage.report import MEDIA_TYPES, build_report, filename, write

REPORT_DIR = gridruns.CACHE_DIR / "reports"
_NAME = re.compile(r"^[0-9a-f]{16}/[A-Za-z0-9._-]+$")  # token/filename: nothing else is ever served
INLINE_LIMIT = 20 * 2**20  # smaller files are also pushed straight to the browser's download
KEEP_S = 24 * 3600  # report files older than this are removed when a new one is made


def _prune(now: float) -> None:
    for f in REPORT_DIR.glob("*/*"):
        if now - f.stat().st_mtime > KEEP_S:
            f.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                f.parent.rmdir()


@dataclass(frozen=True)
class MadeReport:
    """A report written to disk: where, under which name, how big."""

    path: Path
    name: str
    url: str
    size: int
    media_type: str


def make_report(
    scope: str,
    fmt: str,
    task: int | None,
    overrides: Mapping[str, Any],
    progress: Callable[[int, int], None] | None = None,
) -> MadeReport:
    """Write the report of one task (SCOPE 'task') or every waiting task ('all') under the stored config + OVERRIDES.

    Usage: ``made = make_report("task", "html", 4242, {"NQUEUED_SAT_CAP": 300})``
    """
    if scope == "task" and task is None:
        raise ValueError("pick a task first, or choose 'every waiting task'")
    src = data.source()
    report = build_report(
        src.snap,
        src.config,
        [int(task)] if scope == "task" and task is not None else None,
        overrides=dict(overrides),
        meta={"origin": f"dashboard · {src.origin}"},
        progress=progress,
    )
    _prune(time.time())
    # the whole grid's skips run to 150 MB of JSON on the demo grid: such tables are served compressed
    gzipped = report.whole_grid and fmt in ("csv", "json")
    name = filename(report, fmt) + (".gz" if gzipped else "")  # type: ignore[arg-type]
    token = secrets.token_hex(8)
    folder = REPORT_DIR / token
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    tmp = path.with_suffix(path.suffix + ".part")
    with tmp.open("wb") as out:
        write(report, fmt, out, gzipped=gzipped)  # type: ignore[arg-type]
    tmp.replace(path)
    media = "application/gzip" if gzipped else MEDIA_TYPES[fmt]
    return MadeReport(path, name, f"/reports/{token}/{name}", path.stat().st_size, media)


def register(server: Flask) -> None:
    """Add the download route of report files to the Flask server."""

    @server.get("/reports/<token>/<name>")
    def download_report(token: str, name: str) -> Any:
        rel = f"{token}/{name}"
        if not _NAME.match(rel):
            abort(404)
        path = REPORT_DIR / token / name
        if not path.is_file():
            abort(404)
        return send_file(path, as_attachment=True, download_name=name)
