"""Report files made by the dashboard as jobs, written under the cache folder for the download route to serve."""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.services import work
from app.services.jobs import Jobs, JobState
from app.state import AppState

ROOT = Path(__file__).resolve().parent.parent.parent
CACHE_DIR = Path(os.environ.get("BROKERAGE_CACHE_DIR", str(ROOT / "data" / "cache")))
REPORT_DIR = CACHE_DIR / "reports"
NAME = re.compile(r"^[0-9a-f]{16}/[A-Za-z0-9._-]+$")  # token/filename: nothing else is ever served
INLINE_LIMIT = 2 * 2**20  # smaller files are pushed straight to the browser's download; bigger ones it fetches
KEEP_S = 24 * 3600  # report files older than this are removed when a new one is made
MAX_FILES = 50  # report files kept at most (the oldest go first) ...
MAX_BYTES = 1 << 30  # ... and their total size
JOB_KEEP_S = 600  # a finished report job (its bytes) is kept this long on the cluster: its file is on disk by then


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
    ) -> None:
        self.state = state
        self.jobs = jobs
        self.folder = folder
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

    def save(self, made: work.ReportFile) -> MadeReport:
        """File a finished job's report under its token (written once: a second poll of any server process finds it).

        Usage: ``reports.save(jobs.poll(job_id).result).url``
        """
        path = self.folder / made.token / made.name
        if not path.is_file():
            self._prune(time.time())
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(path.suffix + f".{os.getpid()}.part")
            tmp.write_bytes(made.data)
            tmp.replace(path)
            self._prune(time.time(), room=0, keep=path)  # the new file counts too
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
        path = self.folder / token / name
        return path if path.is_file() else None
