"""gdpconfig in the database: typed CONFIG rows, versions, conflicts, history, diff and restore."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from brokerage.model.gdpconfig import ConfigError
from brokerage.store import config_store as cs
from brokerage.store import database, repository


def _config_rows(engine: Any) -> dict[str, Any]:
    return {r.key: r for r in cs.config_rows(engine)}


def test_values_are_stored_with_panda_typing(engine: Any) -> None:
    """Each key is written at its registry coordinates with TYPE int/float/bool/str and VALUE in CONFIG's text form."""
    version = cs.save_changes(
        engine,
        {"NQUEUED_SAT_CAP": "300", "NW_QUEUE_IMPORTANCE": 0.25, "NW_ACTIVE": False, "ANAL_BASIC_WEIGHT": "new"},
        "alice",
        "typed",
        0,
    )
    rows = _config_rows(engine)
    assert version == 1
    assert (rows["NQUEUED_SAT_CAP"].type, rows["NQUEUED_SAT_CAP"].value) == ("int", "300")
    assert (rows["NW_QUEUE_IMPORTANCE"].type, rows["NW_QUEUE_IMPORTANCE"].value) == ("float", "0.25")
    assert (rows["NW_ACTIVE"].type, rows["NW_ACTIVE"].value) == ("bool", "False")
    assert (rows["ANAL_BASIC_WEIGHT"].type, rows["ANAL_BASIC_WEIGHT"].value) == ("str", "new")
    assert (rows["NQUEUED_SAT_CAP"].app, rows["NQUEUED_SAT_CAP"].component) == ("jedi", "jobbroker")
    assert rows["NQUEUED_SAT_CAP"].vo == "atlas"
    assert rows["NQUEUED_SAT_CAP"].descr  # the registry's description travels with the row


def test_vo_less_keys_read_back_as_none(engine: Any) -> None:
    """A parameter without VO is stored with '' in the key column and read back with vo None."""
    cs.save_changes(engine, {"NQUEUED_NUC_CAP": 2500, "CAP_RUNNING_USER_JOBS": 40}, "alice", "", 0)
    rows = _config_rows(engine)
    assert rows["NQUEUED_NUC_CAP"].vo is None
    assert (rows["CAP_RUNNING_USER_JOBS"].app, rows["CAP_RUNNING_USER_JOBS"].vo) == ("pandaserver", None)
    config = cs.load_config(engine, vo="atlas")
    assert config.get("NQUEUED_NUC_CAP") == 2500 and config.get("CAP_RUNNING_USER_JOBS") == 40


def test_load_config_carries_the_version(engine: Any) -> None:
    """load_config returns the stored values layered over the defaults, tagged with the current version."""
    assert cs.load_config(engine).version == 0
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": 300}, "alice", "", 0)
    cs.save_changes(engine, {"NW_THRESHOLD": 2.5}, "bob", "", 1)
    config = cs.load_config(engine)
    assert config.version == cs.current_version(engine) == 2
    assert (config.get("NQUEUED_SAT_CAP"), config.get("NW_THRESHOLD"), config.get("NW_ACTIVE")) == (300, 2.5, True)


def test_family_keys_are_stored_under_their_own_name(engine: Any) -> None:
    """A family member such as DISK_THRESHOLD_<share> is its own CONFIG row and overrides only that share."""
    cs.save_changes(engine, {"DISK_THRESHOLD_Analysis": 5}, "alice", "", 0)
    config = cs.load_config(engine)
    assert config.get("DISK_THRESHOLD_Analysis") == 5
    assert config.get("DISK_THRESHOLD_Other") == config.get("DISK_THRESHOLD") == 100


def test_a_bad_value_writes_nothing(engine: Any) -> None:
    """One out-of-range value refuses the whole change set before anything is written, naming key and range."""
    before = repository.table_contents(engine)
    with pytest.raises(ConfigError) as err:
        cs.save_changes(engine, {"NQUEUED_SAT_CAP": 300, "NW_QUEUE_IMPORTANCE": 1.5}, "alice", "", 0)
    assert err.value.key == "NW_QUEUE_IMPORTANCE" and "[0, 1]" in str(err.value)
    assert repository.table_contents(engine) == before


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"NO_SUCH_KEY": 1}, "NO_SUCH_KEY"),
        ({"NW_ACTIVE": "maybe"}, "NW_ACTIVE"),
        ({"NQUEUED_SAT_CAP": 1.5}, "NQUEUED_SAT_CAP"),
    ],
)
def test_unknown_keys_and_mistyped_values_are_refused(engine: Any, changes: dict[str, Any], key: str) -> None:
    """Unknown keys and values of the wrong type are refused with a ConfigError naming the key."""
    with pytest.raises(ConfigError) as err:
        cs.save_changes(engine, changes, "alice", "", 0)
    assert err.value.key == key
    assert cs.current_version(engine) == 0


def test_stale_edit_of_the_same_key_is_refused(engine: Any) -> None:
    """A change based on an old version is refused when its keys changed since, naming key and version."""
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": 300}, "alice", "", 0)
    before = repository.table_contents(engine)
    with pytest.raises(cs.ConfigConflictError) as err:
        cs.save_changes(engine, {"NQUEUED_SAT_CAP": 400, "NW_THRESHOLD": 2.0}, "bob", "", 0)
    assert err.value.conflicts == {"NQUEUED_SAT_CAP": 1}
    assert "NQUEUED_SAT_CAP (changed in version 1)" in str(err.value)
    assert repository.table_contents(engine) == before


def test_stale_edit_of_other_keys_is_accepted(engine: Any) -> None:
    """Two editors starting from the same version may both save when they touch different keys."""
    assert cs.save_changes(engine, {"NQUEUED_SAT_CAP": 300}, "alice", "", 0) == 1
    assert cs.save_changes(engine, {"NW_THRESHOLD": 2.0}, "bob", "", 0) == 2
    assert cs.values_at(engine, 2) == {"NQUEUED_SAT_CAP": 300, "NW_THRESHOLD": 2.0}


def test_base_version_from_the_future_is_refused(engine: Any) -> None:
    """A base version that does not exist yet is an error, not a free pass."""
    with pytest.raises(ConfigError, match="does not exist"):
        cs.save_changes(engine, {"NQUEUED_SAT_CAP": 300}, "alice", "", 5)


def _race(db_url: str, edits: list[tuple[str, dict[str, Any]]], base: int) -> dict[str, Any]:
    """Run save_changes for each (who, changes) at the same moment, each on its own engine; who -> version or error."""
    barrier = threading.Barrier(len(edits))
    outcome: dict[str, Any] = {}

    def edit(who: str, changes: dict[str, Any]) -> None:
        own = database.make_engine(db_url)  # a separate pool: a real second client
        try:
            barrier.wait(timeout=30)
            outcome[who] = cs.save_changes(own, changes, who, "race", base)
        except cs.ConfigConflictError as exc:
            outcome[who] = exc
        finally:
            own.dispose()

    threads = [threading.Thread(target=edit, args=e) for e in edits]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return outcome


def test_concurrent_edits_one_wins(db_url: str, engine: Any) -> None:
    """Two editors on separate connections saving the same key from the same version: one wins, one is refused."""
    for round_no in range(3):
        base = cs.current_version(engine)
        edits = [("alice", {"NQUEUED_SAT_CAP": 300 + round_no}), ("bob", {"NQUEUED_SAT_CAP": 500 + round_no})]
        outcome = _race(db_url, edits, base)
        winners = [w for w, r in outcome.items() if isinstance(r, int)]
        losers = [w for w, r in outcome.items() if isinstance(r, cs.ConfigConflictError)]
        assert len(winners) == 1 and len(losers) == 1, outcome
        assert outcome[winners[0]] == base + 1
        assert outcome[losers[0]].conflicts == {"NQUEUED_SAT_CAP": base + 1}
        assert cs.current_version(engine) == base + 1
        assert cs.history(engine)[0].who == winners[0]


def test_concurrent_edits_of_different_keys_both_land(db_url: str, engine: Any) -> None:
    """Concurrent editors of different keys both get their own version; no change is lost."""
    outcome = _race(db_url, [("alice", {"NW_THRESHOLD": 2.0}), ("bob", {"NW_QUEUE_IMPORTANCE": 0.3})], 0)
    assert sorted(outcome.values()) == [1, 2]
    assert cs.values_at(engine, 2) == {"NW_THRESHOLD": 2.0, "NW_QUEUE_IMPORTANCE": 0.3}


def test_history_lists_versions_newest_first(engine: Any) -> None:
    """history() gives every version newest first with who, comment, parent and each key's old and new value."""
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": 300, "NW_ACTIVE": False}, "alice", "first", 0)
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": 400}, "bob", "second", 1)
    records = cs.history(engine)
    assert [(r.version, r.parent_version, r.who, r.comment) for r in records] == [
        (2, 1, "bob", "second"),
        (1, 0, "alice", "first"),
    ]
    assert [(c.key, c.old_value, c.new_value) for c in records[0].changes] == [("NQUEUED_SAT_CAP", "300", "400")]
    assert {(c.key, c.old_value, c.new_value) for c in records[1].changes} == {
        ("NQUEUED_SAT_CAP", None, "300"),
        ("NW_ACTIVE", None, "False"),
    }
    assert records[0].created_at.tzinfo is not None


def test_unchanged_values_make_no_version(engine: Any) -> None:
    """Saving values that are already stored creates no empty version."""
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": 300}, "alice", "", 0)
    assert cs.save_changes(engine, {"NQUEUED_SAT_CAP": "300"}, "bob", "", 1) == 1
    assert len(cs.history(engine)) == 1


def test_none_removes_the_stored_value(engine: Any) -> None:
    """A None value deletes the CONFIG row so the default applies again, and history records the removal."""
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": 300}, "alice", "", 0)
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": None}, "alice", "back to default", 1)
    assert "NQUEUED_SAT_CAP" not in _config_rows(engine)
    assert cs.load_config(engine).get("NQUEUED_SAT_CAP") == 150
    assert [(c.old_value, c.new_value) for c in cs.history(engine)[0].changes] == [("300", None)]


def test_values_at_and_diff(engine: Any) -> None:
    """values_at replays history up to a version; diff_versions lists the keys that differ with both values."""
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": 300}, "alice", "", 0)
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": 400, "NW_THRESHOLD": 2.0}, "bob", "", 1)
    cs.save_changes(engine, {"NW_THRESHOLD": None}, "carol", "", 2)
    assert cs.values_at(engine, 0) == {}
    assert cs.values_at(engine, 1) == {"NQUEUED_SAT_CAP": 300}
    assert cs.values_at(engine, 2) == {"NQUEUED_SAT_CAP": 400, "NW_THRESHOLD": 2.0}
    assert cs.diff_versions(engine, 1, 3) == {"NQUEUED_SAT_CAP": (300, 400)}
    assert cs.diff_versions(engine, 2, 3) == {"NW_THRESHOLD": (2.0, None)}
    assert cs.diff_versions(engine, 3, 3) == {}
    with pytest.raises(ConfigError, match="does not exist"):
        cs.values_at(engine, 9)


def test_restore_makes_a_new_version_with_old_values(engine: Any) -> None:
    """Restoring version V appends a version whose values equal V's: changed keys reset, later keys removed."""
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": 300, "NW_ACTIVE": False}, "alice", "", 0)
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": 400, "CAP_RUNNING_USER_JOBS": 50}, "bob", "", 1)
    new = cs.restore_version(engine, 1, "carol", "undo bob")
    assert new == 3
    assert cs.values_at(engine, 3) == cs.values_at(engine, 1) == {"NQUEUED_SAT_CAP": 300, "NW_ACTIVE": False}
    assert cs.load_config(engine).get("CAP_RUNNING_USER_JOBS") is None
    top = cs.history(engine)[0]
    assert (top.who, top.comment, top.parent_version) == ("carol", "restore version 1: undo bob", 2)
    assert cs.restore_version(engine, 1, "carol") == 3  # already equal: nothing to do


def test_restore_to_zero_clears_everything(engine: Any) -> None:
    """Restoring version 0 removes every stored value: all parameters are back at their defaults."""
    cs.save_changes(engine, {"NQUEUED_SAT_CAP": 300, "NW_ACTIVE": False}, "alice", "", 0)
    cs.restore_version(engine, 0, "bob")
    assert cs.config_rows(engine) == []
    assert cs.load_config(engine).stored == {}
