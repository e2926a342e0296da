"""`brokerage serve` (issue #19): debug mode, with its tracebacks and debugger, only ever listens on loopback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from app.serve import is_loopback, serve


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "example.org", "192.168.0.1"])
def test_debug_on_a_non_loopback_host_is_refused(host: str) -> None:
    """--debug with a host other machines can reach exits 2 and says why, before anything is served."""
    result = CliRunner().invoke(serve, ["--host", host, "--debug"])
    assert result.exit_code == 2 and "loopback" in result.output and "debugger" in result.output


def test_loopback_hosts_are_recognised() -> None:
    """127.0.0.0/8, ::1 and localhost are loopback; the wildcard and public addresses are not."""
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "8.8.8.8", "host.example"))


def test_an_api_error_answers_json_without_a_traceback(app_client, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure inside an /api/ route answers a JSON 500, never the HTML error page or a traceback."""
    from app.main import state

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(state, "job_decision", broken)
    task = int(state.snapshot().tasks["jeditaskid"].iloc[0])
    r = app_client.get(f"/api/tasks/{task}/jobs")
    assert r.status_code == 500 and r.is_json and "secret internals" not in r.get_data(as_text=True)


@pytest.fixture()
def db_app_engine_path(tmp_path, snap, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """The app on a fresh SQLite file (already opened by the app), with operator alice; yields the file's path."""
    from app.main import state
    from brokerage.store.database import make_engine
    from brokerage.store.repository import save_snapshot
    from brokerage.store.schema import upgrade

    path = tmp_path / "grid.sqlite"
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    save_snapshot(engine, snap)
    engine.dispose()
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path}")
    monkeypatch.delenv("BROKERAGE_SNAPSHOT", raising=False)
    monkeypatch.setenv("BROKERAGE_OPERATORS", "alice:s3cret")
    state.reset()
    state.config()  # the app opens the file, as a running server has
    yield path
    state.reset()


def test_a_save_into_a_deleted_database_is_refused_in_words(db_app_engine_path) -> None:
    """After the database file is deleted under the app, a save says so and nothing claims a new version."""
    from app.callbacks.tuning import save_edits

    db_app_engine_path.unlink()
    msg, redirect = save_edits({"NQUEUED_SAT_CAP": 300}, "alice", "s3cret", "after delete", 0)
    assert "was deleted" in str(msg) and "Saved as version" not in str(msg) and redirect is None
