"""Declare once, derive the rest: which rule reads which gdpconfig key is declared by the rule and nowhere else.

Filters declare their keys (``Filter.reads``, ``Filter.uses``), other steps of a broker declare theirs as ``Step``
records, the simulator's agents in ``brokerage/sim/uses.py``; the tuning page's "used by", the what-if's affected
brokers and the levers' key lists are derived from them. These tests hold the declarations to what the code reads.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from brokerage.brokers import analysis, generic, nucleus, production
from brokerage.brokers import uses as broker_uses
from brokerage.checks import generic_rules, production_queues
from brokerage.checks.context import ProdContext
from brokerage.checks.generic_rules import GenContext
from brokerage.dirac.matcher import match
from brokerage.framework import Filter, Step, declared_keys, keys_of
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import REGISTRY, Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.sim import uses as sim_uses
from brokerage.sim.engine import Simulation
from brokerage.synth.demo import demo_snapshot
from brokerage.whatif import levers, levers_nucleus
from brokerage.whatif.compare import affected_brokers
from tests.core.test_framework import recording

ROOT = Path(__file__).resolve().parents[2]
# values away from the defaults, so that branches reading more keys run too
CONFIG = Config().with_overrides({"NQUEUED_SAT_CAP": 40, "NO_PILOT_HOURS": 1, "IO_INTENSITY_CUTOFF": 10})


@dataclass(frozen=True)
class RecordingConfig(Config):
    """A Config that remembers every key read through it (``values`` and ``[]`` go through ``get``)."""

    read: set[str] = field(default_factory=set, compare=False)

    def get(self, key: str) -> Any:
        self.read.add(broker_uses.param_key(key))
        return super().get(key)

    def effective(self) -> dict[str, Any]:
        # every key, for the record a decision keeps of what was changed: not a read by a rule
        return {k: Config.get(self, k) for k in Config().effective()}


def recorder() -> RecordingConfig:
    return RecordingConfig(stored=dict(CONFIG.stored), overrides=dict(CONFIG.overrides))


@pytest.fixture(scope="module")
def demo() -> GridSnapshot:
    return demo_snapshot(seed=4, queues=120, tasks=160)


def _keys(broker: str, kind: str | None = None) -> set[str]:
    return {k for u in broker_uses.USES if u.broker == broker and kind in (None, u.kind) for k in u.keys}


def _queue_contexts(snap: GridSnapshot) -> Iterator[tuple[Any, tuple[Filter, ...]]]:
    cache = GridCache(snap, memoise=False)
    for tid in snap.tasks["jeditaskid"].tolist():
        row = views.task_row(cache, tid)
        if row.get("prodsourcelabel") == "user":
            yield analysis.make_context(row, CONFIG, cache), (*analysis.PRELIMINARY, *analysis.PERSISTENT,
                                                              *analysis.TEMPORARY)  # fmt: skip
        else:
            for hint in (False, True):
                yield production_queues.make_context(row, CONFIG, cache, hint_mode=hint), production_queues.FILTERS


def test_every_queue_filter_reads_only_the_keys_it_declares(demo: GridSnapshot) -> None:
    """Each production and analysis filter reads no gdpconfig key beyond those it declares (itself or through facts)."""
    undeclared: dict[str, set[str]] = {}
    for ctx, filters in _queue_contexts(demo):
        for f in filters:
            rec, _, _, cfg = recording(ctx)
            f.fn(rec)
            extra = cfg.read - set(declared_keys(f, type(ctx)))
            if extra:
                undeclared.setdefault(f.name, set()).update(extra)
    assert undeclared == {}


def test_every_weight_factor_reads_only_the_keys_it_declares(demo: GridSnapshot) -> None:
    """The weights of each broker read only keys their weight-factor steps declare."""
    for ctx, _ in _queue_contexts(demo):
        rec, _, _, cfg = recording(ctx)
        if isinstance(ctx, analysis.AnalContext):
            analysis.weights(rec, np.arange(ctx.n))
            broker = analysis.BROKER
        else:
            production.weights(rec)
            broker = production.BROKER
        assert cfg.read <= _keys(broker, "weight"), (broker, cfg.read - _keys(broker, "weight"))


@pytest.mark.parametrize("broker", [production.BROKER, analysis.BROKER, nucleus.BROKER])
def test_a_whole_brokerage_reads_only_declared_keys(broker: str, demo: GridSnapshot) -> None:
    """Brokering every task of the grid (contexts, filters, weights, caps, the cut) reads only keys the broker
    declares: nothing is read that no declaration names."""
    config = recorder()
    cache = GridCache(demo, memoise=False)
    labels = demo.tasks["prodsourcelabel"]
    users = demo.tasks["jeditaskid"][labels == "user"].tolist()
    others = demo.tasks["jeditaskid"][labels != "user"].tolist()
    if broker == analysis.BROKER:
        analysis.broker_many(demo, users, config, cache=cache)
    elif broker == production.BROKER:
        production.broker_many(demo, others, config, cache=cache)
    else:
        nucleus.broker_many(demo, others, config, cache=cache)
    assert config.read, "nothing recorded: the recording config was not used"
    assert config.read <= _keys(broker), sorted(config.read - _keys(broker))


def test_dirac_matching_reads_only_declared_keys(demo: GridSnapshot) -> None:
    """Building DIRAC's task queues and matching pilots reads only keys DIRAC's steps declare."""
    config = recorder()
    ces = demo.tables["dirac_ces"]
    for site, cpu in zip(ces["Site"].tolist()[:5], ces["CPUTime"].tolist()[:5], strict=True):
        match(demo, f"Site={site},CPUTime={int(cpu)}", config, seed=1, cache=GridCache(demo))
    assert config.read and config.read <= _keys(broker_uses.DIRAC)


def test_a_simulation_reads_only_declared_keys(demo: GridSnapshot) -> None:
    """Two simulated hours read only keys that some broker, DIRAC or simulator agent declares."""
    config = recorder()
    Simulation(demo, config, seed=0).run(2)
    declared = {k for u in sim_uses.USES for k in u.keys}
    assert config.read - declared == set()


def test_every_parameter_is_read_by_a_declared_rule() -> None:
    """Every gdpconfig key of the registry is declared by some filter, step, DIRAC rule or simulator agent."""
    assert [k for k in REGISTRY if not sim_uses.used_by(k)] == []


def test_used_by_is_derived_from_the_declarations() -> None:
    """used_by(key) lists exactly the rules whose declaration (through derived attributes too) names the key."""
    items: list[tuple[str, Filter | Step, type | None]] = [
        *((production.BROKER, f, ProdContext) for f in (*production_queues.FILTERS, *production.CAPS,
                                                         *production.STEPS)),
        *((analysis.BROKER, f, analysis.AnalContext) for f in (*analysis.PRELIMINARY, *analysis.PERSISTENT,
                                                               *analysis.TEMPORARY, *analysis.STEPS)),
        *((nucleus.BROKER, f, nucleus.NucleusContext) for f in (*nucleus.FILTERS, *nucleus.STEPS)),
        *((generic.BROKER, f, GenContext) for f in (*generic_rules.FILTERS, *generic.STEPS)),
    ]  # fmt: skip
    for key in REGISTRY:
        derived = {(u.broker, u.stage) for u in broker_uses.used_by(key) if u.broker != broker_uses.DIRAC}
        declared = {(b, item.name) for b, item, ctx in items if key in declared_keys(item, ctx)}
        assert derived == declared, key


def test_the_nucleus_job_check_declares_every_production_filter_key() -> None:
    """The -job check runs the production filters, so its declaration is theirs: their keys reach the task broker."""
    job = next(f for f in nucleus.FILTERS if f.name == "job check")
    assert set(job.declared.config) == set(keys_of(production_queues.FILTERS, ProdContext))
    assert affected_brokers(["NQUEUED_SAT_CAP"]) == {"production", "task"}


def test_levers_read_their_keys_from_the_declarations() -> None:
    """The levers' key lists are the stages' own declared keys: nothing is listed by hand in the lever modules."""
    for module in (levers, levers_nucleus):
        assert not hasattr(module, "STAGE_KEYS") and not hasattr(module, "WEIGHT_KEYS")
    assert broker_uses.stage_keys(production.BROKER, "queued cap") == ("QUEUED_RUNNING_RATIO_CAP",)
    assert broker_uses.stage_keys(analysis.BROKER, "queue length check") == ("ANAL_QUEUE_FLOOR",)
    assert broker_uses.stage_keys(nucleus.BROKER, "transfer backlog check") == ("NQUEUED_NUC_CAP",)
    assert set(broker_uses.weight_keys(nucleus.BROKER)) == {
        "RW_OFFSET",
        "TAPE_WEIGHT",
        "MIN_IO_INTENSITY_WITH_LOCAL_DATA",
    }
    assert levers_nucleus._keys("space check", Config(), {"gshare": "Analysis"}) == (
        "DISK_THRESHOLD",
        "OUTPUT_GB_PER_CORE_DAY",
    )


def test_weight_steps_are_the_decisions_factors(demo: GridSnapshot) -> None:
    """Each broker's weight steps are named as its decisions' weight factors, in their order."""
    cache = GridCache(demo)
    for broker, module in ((production.BROKER, production), (analysis.BROKER, analysis), (nucleus.BROKER, nucleus)):
        steps = [s.name for s in module.STEPS if s.kind == "weight"]
        label = "user" if broker == analysis.BROKER else "managed"
        tids = demo.tasks["jeditaskid"][demo.tasks["prodsourcelabel"].eq(label)].tolist()
        if broker == nucleus.BROKER:
            tids = [t for t in tids if not views.task_row(cache, t).get("nucleus")]
        decision = next(d for d in module.broker_many(demo, tids, Config(), cache=cache) if d.candidates)
        assert list(decision.candidates[0].factors) == steps, broker


def test_every_funnel_stage_is_a_declared_rule(demo: GridSnapshot) -> None:
    """Every filter a broker runs is one of its registered rules: none escapes the declarations."""
    cache = GridCache(demo)
    stages = {(u.broker, u.stage) for u in broker_uses.USES}
    extra = {"preliminary candidates", production.CAPPED_FALLBACK, "nucleus already set"}
    user = demo.tasks["prodsourcelabel"].eq("user")
    for module in (production, analysis, nucleus):
        ids = demo.tasks["jeditaskid"][user if module is analysis else ~user].tolist()
        for d in module.broker_many(demo, ids, Config(), cache=cache):
            assert {(d.broker, f.filter) for f in d.funnel if f.filter not in extra} <= stages


# --- the keys read outside the brokers: declared by DIRAC's modules and for the simulator's agents -------------------


def _literals(path: Path) -> set[str]:
    """String constants of PATH, and the constant head of each f-string (e.g. 'PENDING_TIMEOUT_')."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.add(node.value)
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            out.add(str(node.values[0].value))
    return out


def _reads_key(literals: set[str], key: str) -> bool:
    return key in literals or any(lit.startswith(key + "_") for lit in literals)


def test_simulator_keys_are_declared_under_the_module_that_reads_them() -> None:
    """Each key declared for a simulator agent is read (by name) in the module it is declared under."""
    for module, steps in sim_uses.STEPS.items():
        literals = _literals(ROOT / (module.replace(".", "/") + ".py"))
        for step in steps:
            for key in step.declared.config:
                assert _reads_key(literals, key), f"{module} does not read {key}"


@pytest.mark.parametrize("package", ["sim", "dirac"])
def test_every_key_named_outside_the_brokers_is_declared(package: str) -> None:
    """Every gdpconfig key the simulator or DIRAC's modules name is declared by one of their rules."""
    declared = {
        k
        for u in sim_uses.USES
        if u.broker == (sim_uses.SIMULATOR if package == "sim" else broker_uses.DIRAC)
        for k in u.keys
    }
    named = {
        key
        for path in (ROOT / "brokerage" / package).glob("*.py")
        if path.name != "uses.py"
        for lit in _literals(path)
        for key in REGISTRY
        if lit == key or (REGISTRY[key].family and lit.startswith(key + "_"))
    }
    # MEMORY_COMPENSATION in sim/retry.py is the retry module's own constant of that name, not the broker's key
    assert named - declared - {"MEMORY_COMPENSATION"} == set()
