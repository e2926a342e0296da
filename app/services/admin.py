"""Config administration: save edits as a version and restore one (operator role), history and diffs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from app.services.roles import check_operator
from app.state import AppState
from app.viewmodels import history as hvm
from brokerage.model.gdpconfig import parse_edits

Level = Literal["success", "refused", "warning", "note"]


class NoDatabaseError(RuntimeError):
    """The grid comes from a file or the demo generator, which keep no gdpconfig versions."""

    def __init__(self) -> None:
        super().__init__("this grid does not come from a database")


@dataclass(frozen=True)
class Outcome:
    """What a save or restore did: a sentence, how it reads (LEVEL), and where to send the page (or None)."""

    level: Level
    message: str
    redirect: str | None = None
    role_refused: bool = False  # a save refused for want of the operator role


class ConfigAdmin:
    """Writes gdpconfig versions of the state's database and reloads the state's config after each write.

    Usage: ``ConfigAdmin(state).save({"NQUEUED_SAT_CAP": 300}, "alice", "s3cret", "more files", 0).message``
    """

    def __init__(self, state: AppState) -> None:
        self.state = state

    def can_save(self) -> bool:
        """Whether the grid comes from a database (files and the demo grid keep no versions)."""
        return self.state.engine() is not None

    def save(
        self, overrides: Mapping[str, Any], user: str | None, secret: str | None, comment: str | None, base: int | None
    ) -> Outcome:
        """Store OVERRIDES as a new version if USER holds the operator role and says why.

        Usage: ``admin.save({"NW_ACTIVE": False}, "alice", "s3cret", "network test", base=3)``
        """
        from brokerage.store.config_store import ConfigConflictError, save_changes
        from brokerage.store.errors import StoreError

        engine = self.state.engine()
        if engine is None:
            raise NoDatabaseError
        verdict = check_operator(user, secret)
        if not verdict.allowed:
            return Outcome("refused", f"Not saved: {verdict.why}.", role_refused=True)
        if not overrides:
            return Outcome("note", "Nothing to save: no value differs from the stored config.")
        if not (comment or "").strip():
            return Outcome("warning", "Not saved: say why in the comment (it is kept in the history).")
        try:
            version = save_changes(
                engine, dict(overrides), verdict.who, (comment or "").strip(), base_version=int(base or 0)
            )
        except ConfigConflictError as exc:
            return Outcome("refused", f"Not saved: {exc}")
        except StoreError as exc:  # a missing, replaced or busy database: a plain sentence, never SQL text
            return Outcome("refused", f"Not saved: {exc}.")
        self.state.reload_config()
        return Outcome("success", f"Saved as version {version}.", f"/tuning?saved={version}")

    def save_raw(
        self, raw: Mapping[str, Any], user: str | None, secret: str | None, comment: str | None, base: int | None
    ) -> Outcome:
        """Save the editor's raw edits, refusing the whole set while any edit is invalid."""
        edits = parse_edits(raw, self.state.config(), variants=False)
        if edits.errors:
            return Outcome("refused", f"Not saved: fix the refused edits first ({', '.join(sorted(edits.errors))}).")
        return self.save(edits.overrides, user, secret, comment, base)

    def restore(self, version: int, user: str | None, secret: str | None, comment: str = "") -> Outcome:
        """Make VERSION's values current again as a new version (operator role required).

        Usage: ``admin.restore(0, "alice", "s3cret").redirect``
        """
        from brokerage.store.config_store import restore_version
        from brokerage.store.errors import StoreError

        engine = self.state.engine()
        if engine is None:
            raise NoDatabaseError
        verdict = check_operator(user, secret)
        if not verdict.allowed:
            return Outcome("refused", f"Not restored: {verdict.why}.")
        try:
            new = restore_version(engine, int(version), verdict.who, (comment or "").strip())
        except StoreError as exc:
            return Outcome("refused", f"Not restored: {exc}.")
        self.state.reload_config()
        return Outcome("success", f"Restored version {version} as version {new}.", f"/tuning?restored={new}")

    def history_rows(self) -> list[dict[str, Any]]:
        """Every saved version, newest first (empty without a database)."""
        from brokerage.store.config_store import history

        engine = self.state.engine()
        return hvm.history_rows(history(engine)) if engine is not None else []

    def diff_rows(self, a: int, b: int) -> list[dict[str, Any]]:
        """Keys whose stored value differs between versions A and B."""
        from brokerage.store.config_store import diff_versions

        engine = self.state.engine()
        if engine is None:
            raise NoDatabaseError
        return hvm.diff_rows(diff_versions(engine, int(a), int(b)))
