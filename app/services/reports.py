"""Report files made by the dashboard, written under the cache folder for the download route to serve."""

from __future__ import annotations

import contextlib
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.services.runs import CACHE_DIR
from app.state import AppState
from brokerage.report import MEDIA_TYPES, build_report, filename, write

REPORT_DIR = CACHE_DIR / "reports"
NAME = re.compile(r"^[0-9a-f]{16}/[A-Za-z0-9._-]+$")  # token/filename: nothing else is ever served
INLINE_LIMIT = 20 * 2**20  # smaller files are also pushed straight to the browser's download
KEEP_S = 24 * 3600  # report files older than this are removed when a new one is made


@dataclass(frozen=True)
class MadeReport:
    """A report written to disk: where, under which name, how big."""

    path: Path
    name: str
    url: str
    size: int
    media_type: str


class Reports:
    """Writes reports of the state's grid into REPORT_DIR under a random token per file.

    Usage: ``Reports(state).make("task", "html", 4242, {"NQUEUED_SAT_CAP": 300}).url``
    """

    def __init__(self, state: AppState, folder: Path = REPORT_DIR) -> None:
        self.state = state
        self.folder = folder

    def _prune(self, now: float) -> None:
        for f in self.folder.glob("*/*"):
            if now - f.stat().st_mtime > KEEP_S:
                f.unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    f.parent.rmdir()

    def make(
        self,
        scope: str,
        fmt: str,
        task: int | None,
        overrides: Mapping[str, Any],
        progress: Callable[[int, int], None] | None = None,
    ) -> MadeReport:
        """Write the report of one task (SCOPE 'task') or every waiting task ('all') under the stored config + OVERRIDES.

        Usage: ``made = reports.make("all", "csv", None, {})``
        """
        if scope == "task" and task is None:
            raise ValueError("pick a task first, or choose 'every waiting task'")
        src = self.state.source()
        report = build_report(
            src.snap,
            src.config,
            [int(task)] if scope == "task" and task is not None else None,
            overrides=dict(overrides),
            meta={"origin": f"dashboard · {src.origin}"},
            progress=progress,
            cache=src.grid,
        )
        self._prune(time.time())
        # the whole grid's skips run to 150 MB of JSON on the demo grid: such tables are served compressed
        gzipped = report.whole_grid and fmt in ("csv", "json")
        name = filename(report, fmt) + (".gz" if gzipped else "")  # type: ignore[arg-type]
        token = secrets.token_hex(8)
        folder = self.folder / token
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        tmp = path.with_suffix(path.suffix + ".part")
        with tmp.open("wb") as out:
            write(report, fmt, out, gzipped=gzipped)  # type: ignore[arg-type]
        tmp.replace(path)
        media = "application/gzip" if gzipped else MEDIA_TYPES[fmt]
        return MadeReport(path, name, f"/reports/{token}/{name}", path.stat().st_size, media)

    def path_of(self, token: str, name: str) -> Path | None:
        """The file behind a download link, or None for anything that is not one of ours."""
        if not NAME.match(f"{token}/{name}"):
            return None
        path = self.folder / token / name
        return path if path.is_file() else None
