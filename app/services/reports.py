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

from app.services.admission import Admission
from app.services.roles import client_address
from app.services.runs import CACHE_DIR
from app.state import AppState
from brokerage.report import MEDIA_TYPES, build_report, filename, summary_default, write

REPORT_DIR = CACHE_DIR / "reports"
NAME = re.compile(r"^[0-9a-f]{16}/[A-Za-z0-9._-]+$")  # token/filename: nothing else is ever served
INLINE_LIMIT = 20 * 2**20  # smaller files are also pushed straight to the browser's download
KEEP_S = 24 * 3600  # report files older than this are removed when a new one is made
MAX_FILES = 50  # report files kept at most (the oldest go first) ...
MAX_BYTES = 1 << 30  # ... and their total size


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

    def __init__(
        self,
        state: AppState,
        folder: Path = REPORT_DIR,
        admission: Admission | None = None,
        max_files: int = MAX_FILES,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.state = state
        self.folder = folder
        self.admission = admission
        self.max_files, self.max_bytes = max_files, max_bytes

    def _prune(self, now: float, room: int = 1, keep: Path | None = None) -> None:
        """Drop files older than KEEP_S, then the oldest until ROOM more files fit within the count and size bounds
        (KEEP, the file just made, always stays)."""
        files = []
        for f in self.folder.glob("*/*"):
            if f == keep:
                continue
            with contextlib.suppress(OSError):
                st = f.stat()
                files.append((st.st_mtime, st.st_size, f))
        files.sort()
        total = sum(size for _, size, _ in files)
        for i, (mtime, size, f) in enumerate(files):
            too_many = len(files) - i + room + (keep is not None) > self.max_files
            if now - mtime > KEEP_S or too_many or total > self.max_bytes:
                f.unlink(missing_ok=True)
                total -= size
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
        if scope == "all" and self.admission is not None:
            # a whole-grid report is whole-grid work: it takes a slot like a what-if run
            key = ("report", self.state.keys(), fmt, tuple(sorted((k, repr(v)) for k, v in overrides.items())))
            return self.admission.run(key, client_address(), lambda: self._make(scope, fmt, task, overrides, progress))
        return self._make(scope, fmt, task, overrides, progress)

    def _make(
        self,
        scope: str,
        fmt: str,
        task: int | None,
        overrides: Mapping[str, Any],
        progress: Callable[[int, int], None] | None,
    ) -> MadeReport:
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
        summary = fmt == "json" and summary_default(report)  # every waiting task: top candidates and skip counts
        name = filename(report, fmt, summary) + (".gz" if gzipped else "")  # type: ignore[arg-type]
        token = secrets.token_hex(8)
        folder = self.folder / token
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        tmp = path.with_suffix(path.suffix + ".part")
        with tmp.open("wb") as out:
            write(report, fmt, out, gzipped=gzipped, summary=summary)  # type: ignore[arg-type]
        tmp.replace(path)
        self._prune(time.time(), room=0, keep=path)  # the new file counts too
        media = "application/gzip" if gzipped else MEDIA_TYPES[fmt]
        return MadeReport(path, name, f"/reports/{token}/{name}", path.stat().st_size, media)

    def path_of(self, token: str, name: str) -> Path | None:
        """The file behind a download link, or None for anything that is not one of ours."""
        if not NAME.match(f"{token}/{name}"):
            return None
        path = self.folder / token / name
        return path if path.is_file() else None
