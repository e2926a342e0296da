"""One error tree: every error the core raises derives from BrokerageError, and the edges say each class one way."""

from __future__ import annotations

import ast
import importlib
import pickle
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from brokerage.cli.common import EXIT_USAGE, guarded, load_grid
from brokerage.crosscheck.dirac_env import DiracFailed, DiracMissing
from brokerage.crosscheck.panda import PandaFailed, PandaMissing
from brokerage.dirac.pilot import PilotError
from brokerage.model.architecture import ArchitectureError
from brokerage.model.errors import (
    BrokerageError,
    Cancelled,
    ClusterLost,
    ConfigError,
    ConflictError,
    InputError,
    SimulationError,
    StoreError,
    UnknownIdError,
)
from brokerage.model.snapshot import SnapshotError
from brokerage.model.workqueues import CriteriaError
from brokerage.report.build import UnknownTaskError
from brokerage.report.export import ReportFormatError
from brokerage.sim.commands import CommandRefused
from brokerage.sim.machines import IllegalMove
from brokerage.sim.replay import UnknownJob
from brokerage.sim.setup import SimInputError
from brokerage.sim.task_states import TransitionError
from brokerage.store.config_store import ConfigConflictError
from brokerage.store.database import make_engine
from brokerage.store.errors import DatabaseError, DatabaseFileError, StoreBusyError
from brokerage.store.importer import ImportFileError
from brokerage.store.panda_db import PandaSchemaError

ROOT = Path(__file__).resolve().parents[3]

# one instance of every error class the core defines, with the branch of the tree it belongs to
SAMPLES: list[tuple[BrokerageError, type[BrokerageError]]] = [
    (PandaMissing("PanDA 1.0.4 is not set up: run scripts/panda.sh"), InputError),
    (PandaFailed("PanDA's side stopped"), BrokerageError),
    (DiracMissing("DIRAC 9.1.22 is not set up: run scripts/dirac.sh"), InputError),
    (DiracFailed("DIRAC's side stopped"), BrokerageError),
    (SnapshotError(["queues[0].corecount: -1 is below the minimum 0"]), InputError),
    (ArchitectureError("x86_64-el9#bad: cannot read the microarchitecture"), InputError),
    (CriteriaError("cannot read '=' at character 3"), InputError),
    (PilotError("Colour", "not a pilot field"), InputError),
    (ImportFileError("grid.json", ["queues[0]: no panda_queue"]), InputError),
    (PandaSchemaError(["jedi_tasks: no column jeditaskid"]), InputError),
    (ReportFormatError("unknown report format 'pdf'"), InputError),
    (UnknownIdError("unknown queue 'NOPE': not in the snapshot (3 queues)"), InputError),
    (UnknownTaskError([42], 3), InputError),
    (ConfigError("NW_THRESHOLD", "11 is above the maximum: expected a number in [0, 10]"), ConfigError),
    (StoreError("the database holds no grid"), StoreError),
    (DatabaseFileError("the database file data/x.sqlite does not exist"), StoreError),
    (StoreBusyError(), StoreError),
    (DatabaseError("database error: disk I/O error"), StoreError),
    (ConfigConflictError({"NW_THRESHOLD": 4}, 3), StoreError),
    (SimInputError(["work_queues: empty"]), SimulationError),
    (CommandRefused("task 7 is done: finish is not allowed"), SimulationError),
    (TransitionError("task 7: done -> running is not allowed"), SimulationError),
    (UnknownJob("no job 12 in this run"), SimulationError),
    (IllegalMove("job", [12], "finished", "running"), SimulationError),
    (Cancelled("cancelled after 2 of 5 items"), BrokerageError),
    (ClusterLost("the Dask cluster lost its workers twice during this run"), BrokerageError),
]
IDS = [type(e).__name__ for e, _ in SAMPLES]


SHIM = ROOT / "brokerage" / "crosscheck" / "jedi"


def _defined_exceptions() -> set[str]:
    """Names of the exception classes defined anywhere in brokerage/ (a base ending in Error, Exception or Refused)."""
    out = set()
    for path in (ROOT / "brokerage").rglob("*.py"):
        if SHIM in path.parents:
            continue  # fakes that run inside PanDA's own environment, never imported by the core
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                (b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")).endswith(
                    ("Error", "Exception", "Refused")
                )
                for b in node.bases
            ):
                out.add(node.name)
    return out


def test_every_exception_class_of_the_core_is_in_the_tree() -> None:
    """Every exception class the core defines derives from BrokerageError (the samples cover each one)."""
    assert _defined_exceptions() - set(IDS) <= {"BrokerageError", *(c.__name__ for c in _branches())}
    for exc, branch in SAMPLES:
        assert isinstance(exc, branch) and isinstance(exc, BrokerageError), type(exc).__name__


def _branches() -> tuple[type[BrokerageError], ...]:
    return (InputError, UnknownIdError, ConfigError, StoreError, ConflictError, SimulationError, Cancelled)


def test_each_error_keeps_the_builtin_base_callers_caught() -> None:
    """Code that caught ValueError, KeyError or RuntimeError before the tree still catches the same errors."""
    for exc, _ in SAMPLES:
        if isinstance(exc, UnknownIdError):
            assert isinstance(exc, KeyError)
        elif isinstance(
            exc, Cancelled | IllegalMove | PandaMissing | PandaFailed | DiracMissing | DiracFailed | ClusterLost
        ):
            assert isinstance(exc, RuntimeError)
        else:
            assert isinstance(exc, ValueError), type(exc).__name__


@pytest.mark.parametrize(("exc", "branch"), SAMPLES, ids=IDS)
def test_each_error_class_exits_2_with_one_line(exc: BrokerageError, branch: type[BrokerageError]) -> None:
    """A command that meets any error of the tree prints one line, 'error: ' and the error's own sentence, and
    exits 2 (cli/common.EXIT_CODES)."""

    @click.command()
    @guarded
    def boom() -> None:
        raise exc

    result = CliRunner().invoke(boom, [])
    assert result.exit_code == EXIT_USAGE
    lines = result.output.strip().splitlines()
    assert lines == [f"error: {exc.line()}"] and "Traceback" not in result.output


@pytest.mark.parametrize(("exc", "branch"), SAMPLES, ids=IDS)
def test_each_error_survives_the_trip_from_a_worker(exc: BrokerageError, branch: type[BrokerageError]) -> None:
    """An error raised on a Dask worker is pickled to the caller: it arrives whole, whatever its constructor takes."""
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is type(exc) and str(back) == str(exc) and back.__dict__ == exc.__dict__


def test_unknown_ids_read_as_sentences() -> None:
    """An unknown id is a KeyError whose text is the sentence itself, without the quotes KeyError adds."""
    exc = UnknownTaskError([42], 3)
    assert str(exc) == exc.line() == "unknown task 42: not in the snapshot (3 tasks)"


def test_a_database_that_fails_is_a_store_error_at_the_store_boundary(tmp_path: Path) -> None:
    """SQLAlchemy's errors never leave the store: a file that is no database is a StoreError naming the problem."""
    path = tmp_path / "grid.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    engine = make_engine(f"sqlite:///{path}", create=False)
    from brokerage.store.database import schema_ready

    with pytest.raises(StoreError, match="database error: file is not a database"):
        schema_ready(engine)


def test_the_cli_says_a_database_failure_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command on a broken database exits 2 with 'error: database error: ...', never SQL or a traceback."""
    path = tmp_path / "grid.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{path}")

    @click.command()
    def load() -> None:
        load_grid(None)

    result = CliRunner().invoke(load, [])
    assert result.exit_code == EXIT_USAGE
    assert result.output.strip() == "error: database error: file is not a database"


def _runtime_imports(path: Path) -> list[str]:
    """Modules PATH imports when it runs: every import statement except those under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text())
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
        for n in ast.walk(node)
    }
    names = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


def test_only_the_store_imports_sqlalchemy() -> None:
    """No core module outside brokerage/store imports sqlalchemy: the store maps its errors to the tree."""
    outside = [
        f"{p.relative_to(ROOT)}: {m}"
        for p in (ROOT / "brokerage").rglob("*.py")
        if "store" not in p.relative_to(ROOT / "brokerage").parts
        for m in _runtime_imports(p)
        if m == "sqlalchemy" or m.startswith("sqlalchemy.")
    ]
    assert outside == []


def test_error_classes_import_from_their_modules() -> None:
    """The tree's classes are the ones the old import paths give (gdpconfig.ConfigError, repository.StoreError)."""
    assert importlib.import_module("brokerage.model.gdpconfig").ConfigError is ConfigError
    assert importlib.import_module("brokerage.store.errors").StoreError is StoreError
    assert importlib.import_module("brokerage.runs.chunks").Cancelled is Cancelled
