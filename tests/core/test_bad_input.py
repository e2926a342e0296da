"""Bad input (issue #19): every malformed snapshot or value is refused with exit 2 naming the field, never a crash."""

from __future__ import annotations

import copy
import json
import random
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from brokerage.cli.main import main
from brokerage.model.gdpconfig import ConfigError, check_family_members, parse_assignments, parse_value
from brokerage.model.snapshot import GridSnapshot, SnapshotError
from brokerage.model.validation import validate
from brokerage.store.database import make_engine
from brokerage.store.schema import upgrade
from brokerage.synth.demo import demo_snapshot


def _small_doc() -> dict[str, Any]:
    doc = demo_snapshot(seed=0, queues=20, tasks=10).to_dict()
    for name in [k for k in doc if k.startswith("dirac_")]:
        doc[name] = doc[name][:20]
    return doc


BASE = _small_doc()
TASK = BASE["tasks"][0]["jeditaskid"]


def mutated(change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """A deep copy of the small valid snapshot with CHANGE applied."""
    doc = copy.deepcopy(BASE)
    change(doc)
    return doc


def invoke(args: list[str], env: dict[str, str] | None = None) -> Result:
    """Run the CLI in-process; exceptions other than SystemExit stay in the result."""
    return CliRunner().invoke(main, args, env=env)


def no_traceback(result: Result) -> bool:
    """The run ended by exit status, not by an exception."""
    return result.exception is None or isinstance(result.exception, SystemExit)


def run_jobs(tmp_path: Path, doc: Any = None, raw: bytes | None = None, command: str = "jobs") -> Result:
    """Write DOC (or RAW bytes) to a file and run ``brokerage jobs|nucleus --snapshot FILE --task TASK``."""
    path = tmp_path / "grid.json"
    path.write_bytes(raw if raw is not None else json.dumps(doc).encode())
    return invoke([command, "--snapshot", str(path), "--task", str(TASK)])


CRASHED_BEFORE = {
    "version is a string": (lambda d: d.update(version="x"), "version"),
    "version is a list": (lambda d: d.update(version=[1]), "version"),
    "minrss is null": (lambda d: d["queues"][0].update(minrss=None), None),
    "a string where a number is expected": (lambda d: d["tasks"][0].update(ramcount="5"), "tasks[0].ramcount"),
    "February 30": (lambda d: d["tasks"][0].update(frozentime="2026-02-30T00:00:00Z"), "tasks[0].frozentime"),
    "month 13 in taken_at": (lambda d: d.update(taken_at="2026-13-01T00:00:00Z"), "taken_at"),
    "duplicated datasets row": (lambda d: d["datasets"].append(dict(d["datasets"][0])), "datasets["),
    "lone surrogate in a name": (lambda d: d["tasks"][0].update(taskname="a\ud800b"), "tasks[0].taskname"),
    "architectures = -1": (
        lambda d: d["queue_software"][0].update(architectures=-1),
        "queue_software[0].architectures",
    ),
    "tags = 1": (lambda d: d["queue_software"][0].update(tags=1), "queue_software[0].tags"),
    "ramcount = 2**63": (lambda d: d["tasks"][0].update(ramcount=2**63), "tasks[0].ramcount"),
    "bad architecture string": (lambda d: d["tasks"][0].update(architecture="x86_64@"), "tasks[0].architecture"),
}


@pytest.mark.parametrize("case", sorted(CRASHED_BEFORE))
@pytest.mark.parametrize("command", ["jobs", "nucleus"])
def test_each_formerly_crashing_snapshot_exits_2_naming_the_field(tmp_path: Path, case: str, command: str) -> None:
    """A snapshot that used to raise inside the CLI now exits 2 with one line naming the bad field."""
    change, field = CRASHED_BEFORE[case]
    result = run_jobs(tmp_path, mutated(change), command=command)
    if field is None:  # null in an optional column means "the default": the run goes on
        assert result.exit_code == 0 and no_traceback(result), result.output
        return
    assert result.exit_code == 2 and no_traceback(result), result.output
    assert field in result.output and "Traceback" not in result.output


def test_non_utf8_and_deeply_nested_files_exit_2(tmp_path: Path) -> None:
    """A file that is not UTF-8, or JSON nested 100,000 deep, is refused with exit 2 instead of a crash."""
    for raw, words in ((b'{"taken_at": "\xff\xfe"}', "not UTF-8"), (b"[" * 100_000 + b"]" * 100_000, "nested")):
        result = run_jobs(tmp_path, raw=raw)
        assert result.exit_code == 2 and no_traceback(result) and words in result.output


def test_integers_outside_the_column_range_are_refused_with_the_range() -> None:
    """2**31, 2**63 and 10**40 are refused as outside ramcount's range 0..2**31-1, not wrapped to a negative number."""
    for big in (2**31, 2**63, 10**40):
        problems = validate(mutated(lambda d, big=big: d["tasks"][0].update(ramcount=big)))
        assert problems == [f"tasks[0].ramcount: {big} is outside the allowed range 0..2147483647"]


def test_json_columns_are_validated_by_shape() -> None:
    """architectures and tags must be lists of objects whose fields are strings (or lists of strings)."""
    bad = {
        "architectures": [-1, [1], [{"arch": 5}], [{"arch": [1]}]],
        "tags": [1, [1], [{"release": 2}], [{"sources": "x"}], [{"sources": [3]}]],
    }
    for column, values in bad.items():
        for v in values:
            if column == "tags" and v == [{"sources": "x"}]:
                continue  # a single source string is read as a one-element list
            problems = validate(mutated(lambda d, c=column, v=v: d["queue_software"][0].update({c: v})))
            assert problems and problems[0].startswith(f"queue_software[0].{column}"), (column, v)


def test_report_that_cannot_broker_a_task_exits_2_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report in which a task's brokerage failed is refused (exit 2), not written with exit 0."""
    from brokerage.brokers import batch

    def failing(_snap: Any, _config: Any, keys: Any, **_: Any) -> Any:
        for key in keys:
            yield key, batch.TaskFailure(key, "RuntimeError: broken broker")

    monkeypatch.setattr(batch, "run", failing)
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(BASE))
    out = tmp_path / "r.csv"
    result = invoke(["report", "--snapshot", str(path), "--all", "--out", str(out), "--quiet"])
    assert result.exit_code == 2 and "brokerage failed" in result.output and not out.exists()


def test_database_url_errors_exit_2(tmp_path: Path) -> None:
    """DATABASE_URL=notaurl and an unreachable PostgreSQL give exit 2 with one line, never a traceback."""
    for url in ("notaurl", "postgresql+psycopg://nobody@127.0.0.1:9/none?connect_timeout=2"):
        for args in (["jobs", "--task", "1"], ["db", "config-history"]):
            result = invoke(args, env={"DATABASE_URL": url})
            assert result.exit_code == 2 and no_traceback(result), (url, args, result.output)
            assert "notaurl" not in result.output


def test_number_forms_are_plain_ascii() -> None:
    """1_000, ' 5 ' and Arabic-Indic digits are refused as numbers; the message says which forms are allowed."""
    for raw in ("1_000", " 5 ", "\u0665", "5 0", "0x10"):
        with pytest.raises(ConfigError, match="ASCII digits"):
            parse_value("NQUEUED_SAT_CAP", raw)
    assert parse_value("NQUEUED_SAT_CAP", "300") == 300 and parse_value("NW_QUEUE_IMPORTANCE", "5e-1") == 0.5


def test_config_messages_print_plain_numbers() -> None:
    """A numpy value in a refused edit is shown as a number, never as np.int64(...)."""
    import numpy as np

    with pytest.raises(ConfigError) as err:
        parse_value("NW_QUEUE_IMPORTANCE", np.float64(7.0))
    assert "np." not in str(err.value)


def test_family_keys_must_name_a_member_of_the_grid(tmp_path: Path) -> None:
    """DISK_THRESHOLD_<gshare> is accepted only for a gshare of the grid; another suffix exits 2 naming it."""
    gshares = {g["gshare"] for g in BASE["gshares"]}
    check_family_members(parse_assignments([f"DISK_THRESHOLD_{sorted(gshares)[0]}=50"]), lambda t, c: gshares)
    with pytest.raises(ConfigError, match="not a gshare"):
        check_family_members(["DISK_THRESHOLD_anything"], lambda t, c: gshares)
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(BASE))
    result = invoke(["jobs", "--snapshot", str(path), "--task", str(TASK), "--set", "DISK_THRESHOLD_nope=5"])
    assert result.exit_code == 2 and "DISK_THRESHOLD_nope" in result.output


def test_validate_refuses_what_the_broker_refuses() -> None:
    """A task architecture the broker's parser refuses is reported by validate, naming the task row."""
    problems = validate(mutated(lambda d: d["tasks"][1].update(architecture="x86_64-el9#")))
    assert problems and problems[0].startswith("tasks[1].architecture: malformed")


# --- the fuzz test: a seeded mutator over the small valid snapshot ---------------------------------------------

NASTY: list[Any] = [
    None, "x", "", -1, 0, 1.5, 2**63, -(2**63) - 1, 10**40, 1e308, True, [], {}, [1], {"a": 1}, "5",
    "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "9999-12-31T00:00:00Z", "a\ud800", "\u0665", "1_000",
]  # fmt: skip


def _mutate(rng: random.Random, doc: dict[str, Any]) -> None:
    tables = [k for k, v in doc.items() if isinstance(v, list) and v]
    kind = rng.random()
    if kind < 0.15:
        key = rng.choice(["version", "taken_at", "snapshot_id", "schema_version", rng.choice(tables)])
        doc[key] = rng.choice(NASTY)
        return
    name = rng.choice(tables)
    rows = doc[name]
    i = rng.randrange(len(rows))
    if not isinstance(rows[i], dict) or not rows[i]:
        return
    if kind < 0.25:
        rows.append(copy.deepcopy(rows[i]))
    elif kind < 0.3:
        rows[i].pop(rng.choice(list(rows[i])), None)
    elif kind < 0.35:
        rows[i] = rng.choice(NASTY)
    else:
        rows[i][rng.choice(list(rows[i]))] = rng.choice(NASTY)


def _raw(rng: random.Random, doc: dict[str, Any]) -> bytes:
    text = json.dumps(doc).encode("utf-8", "surrogatepass")
    if rng.random() < 0.1:
        cut = rng.randrange(len(text))
        return text[:cut] + bytes([rng.randrange(256)]) + text[cut + 1 :]
    return text


def test_fuzzed_snapshots_exit_0_or_2_without_a_traceback(tmp_path: Path) -> None:
    """Every CLI run that reads a snapshot (jobs, nucleus, validate, report, simulate, db import) over a randomly
    mutated snapshot exits 0 or 2 and never ends in an exception."""
    rng = random.Random(19)
    db = f"sqlite:///{tmp_path / 'fuzz.sqlite'}"
    upgrade(make_engine(db))
    path = tmp_path / "m.json"
    commands = [
        ["jobs", "--snapshot", str(path), "--task", str(TASK)],
        ["nucleus", "--snapshot", str(path), "--task", str(TASK)],
        ["snapshot", "validate", str(path)],
        ["report", "--snapshot", str(path), "--all", "--format", "csv", "--quiet", "--out", str(tmp_path / "r.csv")],
        ["simulate", "--snapshot", str(path), "--hours", "0.25", "--quiet", "--no-store"],
        ["db", "--database-url", db, "import", str(path)],
    ]
    deadline = time.monotonic() + 40  # bounded in time: as many mutants as fit, at least 60
    runs = 0
    while runs < 60 or (time.monotonic() < deadline and runs < 400):
        doc = copy.deepcopy(BASE)
        for _ in range(rng.randint(1, 3)):
            _mutate(rng, doc)
        path.write_bytes(_raw(rng, doc))
        full = commands[runs % len(commands)]  # each command as often
        result = invoke(full)
        detail = "" if no_traceback(result) else "".join(traceback.format_exception(*result.exc_info))
        assert result.exit_code in (0, 2) and not detail, (runs, full, result.output[-500:], detail[-1500:])
        runs += 1


def test_the_small_snapshot_is_valid() -> None:
    """The fuzz base is a valid snapshot (so every refusal comes from a mutation)."""
    assert GridSnapshot.from_dict(copy.deepcopy(BASE)).tasks.shape[0] == 10
    with pytest.raises(SnapshotError):
        GridSnapshot.from_dict(mutated(lambda d: d.update(version="x")))
