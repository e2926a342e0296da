"""Grid versions in the database: every write adds one, the newest is current unless chosen, old ones are pruned."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from brokerage.cli import db as db_cli
from brokerage.model.snapshot import GridSnapshot
from brokerage.store import database, errors, repository, versions
from brokerage.store.models import SnapshotVersion
from brokerage.store.schema import upgrade
from tests.db.helpers import edge_grid, frames_equal


def later(snap: GridSnapshot, free: float) -> GridSnapshot:
    """SNAP with every endpoint's free space set to FREE (a later pull of the same grid)."""
    eps = snap.tables["ddm_endpoints"].copy()
    eps["space_free"] = free
    return snap.replace(ddm_endpoints=eps)


def test_each_import_adds_a_version_and_the_newest_is_current(engine: Any) -> None:
    """Saving a second grid keeps the first as its own version; the second, numbered higher, is current."""
    first = repository.save_snapshot(engine, edge_grid())
    second = repository.save_snapshot(engine, later(edge_grid(), 777.0))
    assert first is not None and second is not None and second > first
    found = versions.list_versions(engine)
    assert [v.version for v in found] == [second, first]
    assert [v.current for v in found] == [True, False]
    old = versions.load_version(engine, first)
    assert float(old.tables["ddm_endpoints"]["space_free"].iloc[0]) != 777.0
    # kept in the snapshot file format (times to the second), as `db export` writes it
    live = repository.load_snapshot(engine).replace(ddm_endpoints=old.tables["ddm_endpoints"])
    frames_equal(old, GridSnapshot.from_dict(live.to_dict()))
    assert float(versions.load_version(engine, second).tables["ddm_endpoints"]["space_free"].iloc[0]) == 777.0


def test_choosing_an_older_version_and_back(engine: Any) -> None:
    """`use` makes an archived version current under its own number; the next write still gets a new number."""
    first = repository.save_snapshot(engine, edge_grid())
    second = repository.save_snapshot(engine, later(edge_grid(), 777.0))
    assert versions.use_version(engine, first) == first
    assert repository.snapshot_meta(engine)[1] == first  # type: ignore[index]
    assert float(repository.load_snapshot(engine).tables["ddm_endpoints"]["space_free"].iloc[0]) != 777.0
    # a status append on the chosen grid makes a version above every stored one, never a duplicate number
    bumped = repository.append_status(engine, 7, "prepared", edge_grid().taken_at)
    assert bumped == second + 1
    assert versions.use_version(engine, None) == bumped  # the newest is the bumped, live one
    third = repository.save_snapshot(engine, later(edge_grid(), 1.0))
    assert third == bumped + 1
    assert {first, second, bumped} <= {v.version for v in versions.list_versions(engine)}


def test_prune_by_count_and_by_age_never_removes_the_current(engine: Any) -> None:
    """--keep 2 leaves the two newest; --older-than removes versions saved before the limit, not the current one."""
    made = [repository.save_snapshot(engine, later(edge_grid(), float(i))) for i in range(4)]
    assert versions.prune(engine, keep=2) == made[:2]
    assert [v.version for v in versions.list_versions(engine)] == made[:1:-1]
    with database.write_transaction(engine) as conn:  # the older remaining version is 10 days old
        conn.execute(
            sa.update(SnapshotVersion.__table__)
            .where(SnapshotVersion.version == made[2])
            .values(saved_at=datetime.now(UTC) - timedelta(days=10))
        )
    assert versions.prune(engine, older_than_days=5) == [made[2]]
    assert versions.prune(engine, older_than_days=0) == []  # only the current one is left
    assert [v.version for v in versions.list_versions(engine)] == [made[3]]


def test_unknown_version_is_named(engine: Any) -> None:
    """Loading or choosing a version that is not stored names it and the stored ones; nothing is written."""
    v = repository.save_snapshot(engine, edge_grid())
    before = repository.table_contents(engine)
    with pytest.raises(errors.StoreError, match=rf"no grid version 99 is stored \(stored: {v}\)"):
        versions.use_version(engine, 99)
    assert repository.table_contents(engine) == before


def test_cli_versions_use_prune(db_url: str) -> None:
    """`db versions`, `db use`, `db prune` work end to end; a bad prune request exits 2 naming the option."""
    eng = database.make_engine(db_url)
    upgrade(eng)
    a = repository.save_snapshot(eng, edge_grid())
    b = repository.save_snapshot(eng, later(edge_grid(), 5.0))
    eng.dispose()
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(db_cli.db, ["--database-url", db_url, *args])

    out = run("versions")
    assert out.exit_code == 0 and f"* v{b}" in out.output and f"  v{a}" in out.output
    assert run("use", str(a)).exit_code == 0
    assert f"chosen over the newest v{b}" in run("versions").output
    bad = run("prune")
    assert bad.exit_code == 2 and "exactly one of --keep N or --older-than DAYS" in bad.output
    assert run("use", "v1").exit_code == 2
    gone = run("prune", "--keep", "1")  # keeps the newest, and the chosen current one is never deleted
    assert gone.exit_code == 0 and "deleted 0 grid versions" in gone.output
    assert run("use", "latest").output.strip() == f"the current grid is now v{b}"
    gone = run("prune", "--keep", "1")
    assert gone.exit_code == 0 and f"deleted 1 grid version: v{a}" in gone.output


def test_cli_diff_reads_stored_versions(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`brokerage diff --from v1 --to v2 --json` loads both versions from DATABASE_URL; an unknown one exits 2."""
    from brokerage.cli.main import main

    eng = database.make_engine(db_url)
    upgrade(eng)
    a = repository.save_snapshot(eng, edge_grid())
    b = repository.save_snapshot(eng, later(edge_grid(), 5.0))
    eng.dispose()
    monkeypatch.setenv("DATABASE_URL", db_url)
    out = CliRunner().invoke(main, ["diff", "--from", f"v{a}", "--to", str(b), "--json"])
    assert out.exit_code == 0, out.output
    body = json.loads(out.output)
    assert body["from"].endswith(f"@{a}") and body["to"].endswith(f"@{b}")
    assert body["inputs_changed"]["ddm_endpoints"] >= 1
    bad = CliRunner().invoke(main, ["diff", "--from", "99", "--to", str(b)])
    assert bad.exit_code == 2 and "no grid version 99 is stored" in bad.output
