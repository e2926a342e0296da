"""Report files made by the dashboard as jobs, written under the cache folder for the download route to serve."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.services import work
from app.services.jobs import Jobs, JobState
from app.services.roles import client_address
from app.state import AppState
from brokerage.model.errors import InputError

ROOT = Path(__file__).resolve().parent.parent.parent
CACHE_DIR = Path(os.environ.get("BROKERAGE_CACHE_DIR", str(ROOT / "data" / "cache")))
REPORT_DIR = CACHE_DIR / "reports"
NAME = re.compile(r"^[0-9a-f]{16}/[A-Za-z0-9._-]+$")  # token/filename: nothing else is ever served
INLINE_LIMIT = 2 * 2**20  # smaller files are pushed straight to the browser's download; bigger ones it fetches
KEEP_S = 24 * 3600  # report files older than this are removed when a new one is made
# each client address keeps at most MAX_FILES report files of at most MAX_BYTES together (its own oldest go first);
# all clients together at most TOTAL_BYTES: beyond that a new report is refused, never paid for with others' files
MAX_FILES = 10
MAX_BYTES = 256 * 2**20
TOTAL_BYTES = 1 << 30
JOB_KEEP_S = 600  # a finished report job (its bytes) is kept this long on the cluster: its file is on disk by then


class ReportRefused(InputError):
    """A report file cannot be kept within the storage bounds; nothing was written."""


def owner_of(client: str) -> str:
    """The folder name of CLIENT's report files (a digest: addresses are not written to disk).

    Usage: ``owner_of("10.0.0.7")``
    """
    return hashlib.sha256(client.encode("utf-8", "backslashreplace")).hexdigest()[:16]


@dataclass(frozen=True)
class MadeReport:
    """A report written to disk: where, under which name, how big."""

    path: Path
    name: str
    url: str
    size: int
    media_type: str


class Reports:
    """Makes reports of the state's grid as jobs and files them under REPORT_DIR, one random token per file.

    Usage: ``job_id, state = reports.start("all", "csv", None, {}, "10.0.0.7")``, later ``reports.save(state.result)``
    """

    def __init__(
        self,
        state: AppState,
        jobs: Jobs,
        folder: Path = REPORT_DIR,
        max_files: int = MAX_FILES,
        max_bytes: int = MAX_BYTES,
        total_bytes: int = TOTAL_BYTES,
    ) -> None:
        self.state = state
        self.jobs = jobs
        self.folder = folder
        self.max_files, self.max_bytes, self.total_bytes = max_files, max_bytes, total_bytes

    def _files(self, pattern: str) -> list[tuple[float, int, Path]]:
        files = []
        for f in self.folder.glob(pattern):
            with contextlib.suppress(OSError):
                st = f.stat()
                files.append((st.st_mtime, st.st_size, f))
        return sorted(files)

    def _drop(self, f: Path) -> None:
        f.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            f.parent.rmdir()

    def _make_room(self, owner: str, size: int, now: float) -> None:
        """Drop every file older than KEEP_S, then OWNER's own oldest until a file of SIZE bytes fits OWNER's
        bounds; raise ReportRefused when it cannot fit them, or the total bound, without others' files."""
        if size > self.max_bytes:
            raise ReportRefused(
                f"the report is {size / 2**20:.1f} MiB, more than the {self.max_bytes / 2**20:.0f} MiB a user may keep; "
                "narrow it (one task, or CSV) and try again"
            )
        for mtime, _, f in self._files("*/*/*"):
            if now - mtime > KEEP_S:
                self._drop(f)
        mine = self._files(f"{owner}/*/*")
        total_mine = sum(s for _, s, _ in mine)
        while mine and (len(mine) + 1 > self.max_files or total_mine + size > self.max_bytes):
            _, s, f = mine.pop(0)
            self._drop(f)
            total_mine -= s
        everyone = sum(s for _, s, _ in self._files("*/*/*"))
        if everyone + size > self.total_bytes:
            raise ReportRefused(
                "report storage is full with other users' reports; try again later (they expire after a day)"
            )

    def job_id(self, scope: str, fmt: str, task: int | None, overrides: Mapping[str, Any]) -> str:
        """The report job of a request on the current snapshot: identical requests share one job."""
        snap_key, _ = self.state.keys()
        fp = self.state.effective_config(overrides).fingerprint()
        return f"report:{snap_key}:{fp}:{scope}:{fmt}:{task if scope == 'task' else ''}"

    def start(
        self, scope: str, fmt: str, task: int | None, overrides: Mapping[str, Any], client: str = "local"
    ) -> tuple[str, JobState]:
        """Start (or join) the job that writes the report of one task (SCOPE 'task') or every waiting task ('all')
        under the stored config + OVERRIDES; a whole-grid report waits its turn among the long jobs.

        Usage: ``job_id, state = reports.start("all", "csv", None, {}, "10.0.0.7")``
        """
        if scope == "task" and task is None:
            raise ValueError("pick a task first, or choose 'every waiting task'")
        src = self.state.source()
        self.state.effective_config(overrides)  # a bad value is refused here, before any job
        snap_future = self.jobs.snapshot(src.snap)
        job_id = self.job_id(scope, fmt, task, overrides)
        state = self.jobs.start(
            job_id, work.report_file, snap_future, src.config, int(task) if scope == "task" else None, fmt,
            dict(overrides), src.origin, admit=client if scope == "all" else None, keep_s=JOB_KEEP_S,
        )  # fmt: skip
        return job_id, state

    def save(self, made: work.ReportFile, client: str | None = None) -> MadeReport:
        """File a finished job's report under CLIENT's folder and its token (written once: a second poll of any
        server process finds it); CLIENT defaults to the requesting address. Raises ReportRefused beyond the bounds.

        Usage: ``reports.save(jobs.poll(job_id).result).url``
        """
        found = self.path_of(made.token, made.name)
        path = found or self.folder / owner_of(client or client_address()) / made.token / made.name
        if found is None:
            self._make_room(path.parent.parent.name, len(made.data), time.time())
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(path.suffix + f".{os.getpid()}.part")
            try:
                tmp.write_bytes(made.data)
                tmp.replace(path)
            except OSError as exc:
                tmp.unlink(missing_ok=True)
                raise ReportRefused(f"the report could not be written ({exc.strerror}); nothing was kept") from exc
        return MadeReport(path, made.name, f"/reports/{made.token}/{made.name}", path.stat().st_size, made.media_type)

    def make(
        self, scope: str, fmt: str, task: int | None, overrides: Mapping[str, Any], timeout_s: float | None = None
    ) -> MadeReport:
        """Start (or join) the report job, wait for it and file its report.

        Usage: ``made = reports.make("all", "csv", None, {})``
        """
        job_id, _ = self.start(scope, fmt, task, overrides)
        return self.save(self.jobs.result(job_id, timeout_s))

    def path_of(self, token: str, name: str) -> Path | None:
        """The file behind a download link, or None for anything that is not one of ours."""
        if not NAME.match(f"{token}/{name}"):
            return None
        for path in self.folder.glob(f"*/{token}/{name}"):
            if path.is_file():
                return path
        return None
