"""The simulator's layout: one module per agent around one state, no agent reaching into another's privates."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from brokerage.sim import engine
from brokerage.sim.state import SimState

ROOT = Path(__file__).resolve().parents[3]
MODULES = [*sorted((ROOT / "brokerage" / "sim").glob("*.py")), ROOT / "brokerage" / "synth" / "history.py"]


def _private_uses(path: Path) -> list[str]:
    """Private names PATH takes from elsewhere: imported, or read as an attribute of anything but self/cls."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            out += [f"{path.name}:{node.lineno} imports {a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value.id if isinstance(node.value, ast.Name) else ""
            if owner not in ("self", "cls"):
                out.append(f"{path.name}:{node.lineno} reads {ast.unparse(node)}")
    return out


def test_no_module_reaches_into_another_modules_privates() -> None:
    """No sim module (nor the demo history) imports a private name or reads a private attribute of another object."""
    assert [u for p in MODULES for u in _private_uses(p)] == []


def test_every_agent_ticks_with_the_state_and_the_time() -> None:
    """Every agent of the schedule is a function tick(state, now); the schedule names each once."""
    names = [name for name, _period, _tick in engine.AGENTS]
    assert len(names) == len(set(names))
    for name, _period, tick in engine.AGENTS:
        params = list(inspect.signature(tick).parameters.values())
        assert [p.name for p in params] == ["state", "now"], name


def test_the_simulation_is_the_state_with_a_clock() -> None:
    """Simulation adds the run loop and the output to SimState, nothing else public."""
    added = {n for n in vars(engine.Simulation) if not n.startswith("_")}
    assert issubclass(engine.Simulation, SimState) and added == {"step", "run", "result"}
