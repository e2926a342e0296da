"""Every criteria code a filter of brokerage/checks can give is a test id in tests/core/checks.

A case of one filter carries its criteria code as its pytest id, ``<code>`` or ``<code>:<what differs>`` (several
codes asserted by one case: ``<code>,<code>:<what differs>``), so ``pytest -k " -cpucore"`` selects the cases of a
rule and a failure report names the rule. The ids are read from the ``parametrize`` marks (``pytest.param(...,
id=...)`` or literal ``ids=[...]``) of the test modules here; the codes from the Filter declarations.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import brokerage.checks
import tests.core.checks
from brokerage.framework import Filter


def _modules(package: ModuleType) -> list[ModuleType]:
    """Every module of PACKAGE (imported)."""
    return [importlib.import_module(f"{package.__name__}.{m.name}") for m in pkgutil.iter_modules(package.__path__)]


def declared_codes() -> dict[str, set[str]]:
    """Criteria code -> names of the filters in brokerage/checks that declare it (module level or in a tuple)."""
    out: dict[str, set[str]] = {}
    for module in _modules(brokerage.checks):
        for value in vars(module).values():
            items = value if isinstance(value, tuple | list) else (value,)
            for f in items:
                if isinstance(f, Filter):
                    for code in f.codes:
                        out.setdefault(code, set()).add(f.name)
    return out


def case_ids() -> dict[str, str]:
    """Every parametrize id of the test modules in tests/core/checks -> its test ('module::function')."""
    out: dict[str, str] = {}
    for module in _modules(tests.core.checks):
        for name, fn in vars(module).items():
            if not (name.startswith("test_") and callable(fn)):
                continue
            for mark in getattr(fn, "pytestmark", []):
                if mark.name != "parametrize":
                    continue
                ids = [getattr(p, "id", None) for p in mark.args[1]]
                literal = mark.kwargs.get("ids")
                if isinstance(literal, list | tuple):
                    ids += list(literal)
                for i in ids:
                    if isinstance(i, str):
                        out[i] = f"{module.__name__.rsplit('.', 1)[-1]}::{name}"
    return out


def codes_of_id(test_id: str) -> list[str]:
    """The criteria codes a test id names: '-es,-eshigh:scout' -> ['-es', '-eshigh']."""
    return [c for c in test_id.split(":", 1)[0].split(",") if c.startswith("-")]


def test_the_filters_of_checks_declare_codes() -> None:
    """The collection below sees the filters: the core count filter's two codes are among them."""
    codes = declared_codes()
    assert {"-cpucore", "-max_cpucore", "-status", "-disk", "-read_wan_blacklist"} <= codes.keys()


def test_every_criteria_code_is_a_test_id() -> None:
    """Each criteria code a filter in brokerage/checks declares names at least one test case in tests/core/checks."""
    covered = {c for i in case_ids() for c in codes_of_id(i)}
    missing = {code: sorted(names) for code, names in declared_codes().items() if code not in covered}
    assert missing == {}, f"criteria codes without a test id in tests/core/checks: {missing}"


def test_every_code_in_a_test_id_is_declared() -> None:
    """A test id names only criteria codes some filter of brokerage/checks declares (no typos, no stale codes)."""
    declared = declared_codes()
    unknown = {i: t for i, t in case_ids().items() if any(c not in declared for c in codes_of_id(i))}
    assert unknown == {}, f"test ids naming codes no filter in brokerage/checks declares: {unknown}"
