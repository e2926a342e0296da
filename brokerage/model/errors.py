"""The core's one error tree: every error brokerage raises on purpose derives from BrokerageError.

    BrokerageError
    ├── InputError          what the caller gave is malformed or names nothing
    │   ├── UnknownIdError  (KeyError) an unknown task, queue, nucleus or task queue: UnknownTaskError
    │   └── SnapshotError, ArchitectureError, CriteriaError, PilotError, ImportFileError, PandaSchemaError,
    │       ReportFormatError (ValueError); the app's SimulationRequestError and DiffError
    ├── ConfigError         (ValueError) a gdpconfig key is unknown, or a value mistyped or out of range
    ├── StoreError          (ValueError) the database cannot do what was asked: missing, replaced, busy, failed
    │   ├── ConflictError   someone else saved first: ConfigConflictError
    │   └── DatabaseFileError, StoreBusyError, DatabaseError
    ├── SimulationError     the simulator refuses its input or a step: SimInputError, CommandRefused,
    │                       TransitionError, UnknownJob (ValueError)
    └── Cancelled        (RuntimeError) the caller cancelled a grid run

Each leaf keeps the builtin base callers caught before the tree existed (ValueError, KeyError, RuntimeError), so
``except ValueError`` still works. The CLI's exit codes (``brokerage/cli/common.py``), the API's status codes
(``app/api.py``) and the pages' inline messages (``app/components/layout.py``) each map these classes in one table;
``status_of`` picks the entry of the nearest class.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

T = TypeVar("T")


class BrokerageError(Exception):
    """Base of every error the core raises on purpose (a bug raises anything else)."""

    def line(self) -> str:
        """The one line a command prints for this error (``error: <line>``)."""
        return str(self)

    def __reduce__(self) -> tuple[object, ...]:
        # rebuilt from its attributes, not by calling __init__ again with the message: an error raised on a Dask
        # worker reaches the caller whole whatever its constructor takes
        return (_rebuild, (type(self), self.args, self.__dict__))


class InputError(BrokerageError):
    """What the caller gave (a snapshot, a file, an id, a request) is malformed or names nothing."""


class UnknownIdError(InputError, KeyError):
    """An id the snapshot or run does not hold (task, queue, nucleus, task queue, job); the message names it."""

    def __str__(self) -> str:
        # KeyError's str() quotes its argument as a dict key; this one is a sentence
        return str(self.args[0]) if self.args else "not found"


class ConfigError(BrokerageError, ValueError):
    """A gdpconfig key is unknown or a value is mistyped or out of range.

    ``key`` and ``message`` name the first problem; ``problems`` maps every refused key to its message (several
    when a set of edits is refused at once).
    """

    def __init__(self, key: str, message: str, problems: Mapping[str, str] | None = None) -> None:
        self.problems: dict[str, str] = dict(problems) if problems else {key: message}
        super().__init__("; ".join(f"{k}: {m}" for k, m in self.problems.items()))
        self.key = key
        self.message = message

    def line(self) -> str:
        """Unknown keys name themselves (with a "did you mean"), refused values say "bad gdpconfig value".

        Usage: ``fail(exc.line())``
        """
        return "; ".join(
            f"{k}: {m}" if m.startswith(UNKNOWN_KEY) else f"bad gdpconfig value: {k}: {m}"
            for k, m in self.problems.items()
        )


UNKNOWN_KEY = "unknown gdpconfig key"


class StoreError(BrokerageError, ValueError):
    """A store operation refers to something the database does not hold, or the database cannot do it."""


class ConflictError(StoreError):
    """What is being saved was changed by someone else since the version it started from: nothing was written."""


class SimulationError(BrokerageError):
    """The simulator refuses its input or a step it was asked to take."""


class Cancelled(BrokerageError, RuntimeError):
    """The caller cancelled the run; its chunks on the cluster were cancelled too."""


class ClusterLost(BrokerageError, RuntimeError):
    """The Dask cluster lost its workers (and the data they held) during a run, again after the grid was sent anew."""


def _rebuild(cls: type[BrokerageError], args: tuple[object, ...], state: dict[str, object]) -> BrokerageError:
    exc = cls.__new__(cls, *args)
    exc.args = args
    exc.__dict__.update(state)
    return exc


def status_of(exc: BaseException, table: Mapping[type[BaseException], T], default: T) -> T:
    """The entry of TABLE for EXC's nearest class (walking its MRO), else DEFAULT.

    Usage: ``status_of(ConfigError("K", "bad"), {InputError: 400, ConfigError: 422}, 500) == 422``
    """
    for cls in type(exc).__mro__:
        if cls in table:
            return table[cls]
    return default
