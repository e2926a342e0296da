"""Grid-version diffs for the dashboard: stored versions, and the diff of two of them per config, as a job."""

from __future__ import annotations

from typing import Any

from app.services import work
from app.services.jobs import Jobs, JobState
from app.services.roles import client_address
from app.state import AppState

DIFF_KEEP_S = 24 * 3600  # a diff is keyed on both grids' identities and the config: kept a day on the cluster
DiffError = work.DiffError


class Diffs:
    """Stored grid versions and their diffs (``brokerage.diff``), run as jobs admitted like other long work.

    Usage: ``diffs.diff(3, 4)["tasks"][0]["causes"][0]["sentence"]``
    """

    def __init__(self, state: AppState, jobs: Jobs) -> None:
        self.state = state
        self.jobs = jobs

    def versions(self) -> list[dict[str, Any]]:
        """The stored grid versions, newest first (empty when the grid does not come from a database)."""
        engine = self.state.engine()
        if engine is None:
            return []
        from brokerage.store.versions import list_versions

        return [v.to_dict() for v in list_versions(engine)]

    def start(self, old: int, new: int, task: int | None = None, client: str | None = None) -> tuple[str, JobState]:
        """Start (or join) the job of ``brokerage diff --from OLD --to NEW [--task TASK] --json`` under the stored
        gdpconfig; CLIENT is the requesting address (the current request's when None). Raises DiffError naming an
        unknown version.

        Usage: ``job_id, state = diffs.start(3, 4, None, "10.0.0.7")``
        """
        known = {int(v["version"]): v for v in self.versions()}
        if not known:
            raise DiffError("grid versions live in the database; this dashboard reads a snapshot file")
        for label, v in (("from", old), ("to", new)):
            if v not in known:
                shown = ", ".join(str(k) for k in sorted(known, reverse=True)[:10])
                raise DiffError(f"{label}: no grid version {v} is stored (stored: {shown})")
        config = self.state.config()
        engine = self.state.engine()
        ident = f"{known[old]['snapshot_id']}@{old}:{known[new]['snapshot_id']}@{new}"
        job_id = f"diff:{ident}:{task}:{config.fingerprint()}"
        url = engine.url.render_as_string(hide_password=False)
        state = self.jobs.start(
            job_id, work.grid_diff, url, old, new, task, config, admit=client or client_address(), keep_s=DIFF_KEEP_S
        )  # fmt: skip
        return job_id, state

    def diff(self, old: int, new: int, task: int | None = None, client: str | None = None) -> dict[str, Any]:
        """The diff as a dict (start or join its job and wait for it); DiffError naming an unknown version or task.

        Usage: ``diffs.diff(3, 4)["summary"]``
        """
        job_id, _ = self.start(old, new, task, client)
        return dict(self.jobs.result(job_id))
