"""Grid-version diffs for the dashboard: stored versions, and diffs of two of them kept on disk per config."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.services.admission import Admission
from app.services.roles import client_address
from app.services.runs import GridRuns
from app.state import AppState
from brokerage.model.errors import InputError

DIFF_TTL_S = 24 * 3600  # a diff is keyed on both grids' identities and the config: the TTL only bounds disk use


class DiffError(InputError, ValueError):
    """A diff request names something the database does not hold (the message says what is allowed)."""


class Diffs:
    """Stored grid versions and their diffs (``brokerage.diff``), admitted like other whole-grid runs.

    Usage: ``diffs.diff(3, 4)["tasks"][0]["causes"][0]["sentence"]``
    """

    def __init__(self, state: AppState, runs: GridRuns, admission: Admission | None = None) -> None:
        self.state = state
        self.runs = runs
        self.admission = admission

    def versions(self) -> list[dict[str, Any]]:
        """The stored grid versions, newest first (empty when the grid does not come from a database)."""
        engine = self.state.engine()
        if engine is None:
            return []
        from brokerage.store.versions import list_versions

        return [v.to_dict() for v in list_versions(engine)]

    def diff(
        self, old: int, new: int, task: int | None = None, progress: Callable[[str], None] | None = None
    ) -> dict[str, Any]:
        """``brokerage diff --from OLD --to NEW [--task TASK] --json`` under the stored gdpconfig, as a dict.

        Raises DiffError naming an unknown version or task.
        """
        known = {int(v["version"]): v for v in self.versions()}
        if not known:
            raise DiffError("grid versions live in the database; this dashboard reads a snapshot file")
        for label, v in (("from", old), ("to", new)):
            if v not in known:
                shown = ", ".join(str(k) for k in sorted(known, reverse=True)[:10])
                raise DiffError(f"{label}: no grid version {v} is stored (stored: {shown})")
        config = self.state.config()
        ident = f"{known[old]['snapshot_id']}@{old}:{known[new]['snapshot_id']}@{new}"
        key = f"diff:{ident}:{task}:{config.fingerprint()}"
        hit = self.runs.disk().get(key)
        if hit is not None:
            return dict(hit)

        def compute() -> dict[str, Any]:
            from brokerage.diff.attribute import diff_grids
            from brokerage.model.cache import GridCache
            from brokerage.model.views import task_row
            from brokerage.store.versions import load_version

            engine = self.state.engine()
            a, b = load_version(engine, old), load_version(engine, new)
            if task is not None:
                try:
                    task_row(GridCache(a), task)
                except KeyError as exc:
                    raise DiffError(f"task: {exc.args[0]}") from exc
            out = diff_grids(a, b, config, task_ids=None if task is None else [task], progress=progress).to_dict()
            self.runs.disk().set(key, out, expire=DIFF_TTL_S)
            return out

        if self.admission is None:
            return compute()
        return self.admission.run(("diff", key), client_address(), compute)
