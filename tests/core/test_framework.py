"""The broker framework: declared filters, memo keys derived from declared reads, caches that change nothing."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from brokerage.brokers import analysis, analysis_context, analysis_filters, nucleus, nucleus_filters, production
from brokerage.checks import cores, diskio, pilot, production_queues, scratch, walltime
from brokerage.checks.context import QueueContext
from brokerage.framework import Derived, Filter, Reads, expand
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.synth.demo import demo_snapshot
from tests.core.brokers.test_batch_production import _snapshot, explained, shared_grids

ROOT = Path(__file__).resolve().parents[2]
# context attributes that are the same for every task of one view of the grid
GRID_ATTRS = {"cache", "snap", "qa", "ep", "n", "names", "view", "derived", "DEPENDS"}
DERIVED = (
    cores.JOB_CORES,
    diskio.DISKIO_LIMITS,
    pilot.INACTIVE_QUEUES,
    walltime._SCOUT_WALLTIME,
    scratch.SCRATCH_PER_CORE,
    production.RUNNING_TERMS,
    production.RUNNING_TERMS_JEDI,
)


class RecordingTask(dict):
    """A task row that remembers which fields were read."""

    def __init__(self, row: dict[str, Any]) -> None:
        super().__init__(row)
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)


class RecordingConfig:
    """A Config that remembers which keys were read."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return self._config[key]

    def get(self, key: str) -> Any:
        self.read.add(key)
        return self._config.get(key)

    def values(self, keys: tuple[str, ...]) -> tuple[Any, ...]:
        self.read.update(keys)
        return self._config.values(keys)


def recording(ctx: QueueContext) -> tuple[QueueContext, set[str], RecordingTask, RecordingConfig]:
    """A copy of CTX whose attribute, task-field and config-key reads are recorded."""
    attrs: set[str] = set()

    class Recorder(type(ctx)):  # type: ignore[misc]
        def __getattribute__(self, name: str) -> Any:
            if not name.startswith("__"):
                attrs.add(name)
            return object.__getattribute__(self, name)

    rec = copy.copy(ctx)
    task, config = RecordingTask(ctx.task), RecordingConfig(ctx.config)
    rec.task, rec.config = task, config  # type: ignore[assignment]
    rec.__class__ = Recorder
    return rec, attrs, task, config


def contexts(snap: GridSnapshot, config: Config, kinds: str) -> Iterator[QueueContext]:
    """Production (with and without a nucleus) and/or analysis contexts of every task of SNAP, memo off."""
    cache = GridCache(snap, memoise=False)
    for tid in snap.tasks["jeditaskid"].tolist():
        row = views.task_row(cache, tid)
        if row.get("prodsourcelabel") == "user":
            if "analysis" in kinds:
                yield analysis_context.make_context(row, config, cache)
        elif "production" in kinds:
            yield production_queues.make_context(row, config, cache)
            yield production_queues.make_context(row, config, cache, hint_mode=True)


def memoised() -> list[tuple[Filter | Derived[Any], str]]:
    """Every filter and shared value that the framework memoises, with the brokers whose contexts it sees."""
    prod = [(f, "production") for f in production_queues.FILTERS if f.reads is not None]
    anal = [
        (f, "analysis")
        for f in (*analysis_filters.PRELIMINARY, *analysis_filters.PERSISTENT, *analysis_filters.TEMPORARY)
        if f.reads
    ]
    own = (production.RUNNING_TERMS, production.RUNNING_TERMS_JEDI)
    shared = [(d, "production analysis") for d in DERIVED if d not in own]
    return prod + anal + shared + [(d, "production") for d in own]


@pytest.fixture(scope="module")
def demo() -> GridSnapshot:
    return demo_snapshot(seed=4, queues=120, tasks=160)


@pytest.mark.parametrize(("item", "kinds"), memoised(), ids=lambda f: getattr(f, "name", f))
def test_memoised_functions_read_only_what_they_declare(
    item: Filter | Derived[Any], kinds: str, demo: GridSnapshot
) -> None:
    """A memoised verdict or value reads no task field, gdpconfig key or per-task attribute it does not declare."""
    config = Config().with_overrides({"NQUEUED_SAT_CAP": 40, "NO_PILOT_HOURS": 1})
    reads = item.reads
    assert reads is not None
    ran = 0
    for ctx in contexts(demo, config, kinds):
        flat = expand(reads, type(ctx).DEPENDS)
        rec, attrs, task, cfg = recording(ctx)
        item.fn(rec)
        ran += 1
        undeclared_fields = task.read - set(flat.task)
        undeclared_keys = cfg.read - set(flat.config)
        undeclared_attrs = attrs - GRID_ATTRS - {"task", "config"} - set(reads.facts) - set(flat.facts)
        assert not undeclared_fields, f"{item.name} reads task fields {undeclared_fields}"
        assert not undeclared_keys, f"{item.name} reads gdpconfig keys {undeclared_keys}"
        assert not undeclared_attrs, f"{item.name} reads context attributes {undeclared_attrs}"
    assert ran > 0


def test_expand_replaces_derived_attributes_by_their_inputs() -> None:
    """A derived attribute in a declaration stands for what it is derived from (network weights: keys and nucleus;
    job counts: the task's share and VO)."""
    flat = expand(Reads(config=("NQUEUED_SAT_CAP",), facts=("nw", "counts")), production_queues.ProdContext.DEPENDS)
    assert "NQUEUED_SAT_CAP" in flat.config and "NW_QUEUE_IMPORTANCE" in flat.config
    assert set(flat.task) == {"gshare", "vo"} and set(flat.facts) == {"nucleus", "express"}  # counts: the VO's


def test_every_filter_declares_its_criteria_codes_and_rule() -> None:
    """Each filter names the codes it can give and the seed rule it implements; its codes appear in its module."""
    filters = [
        *production_queues.FILTERS,
        *analysis_filters.PRELIMINARY,
        *analysis_filters.PERSISTENT,
        *analysis_filters.TEMPORARY,
        *nucleus_filters.FILTERS,
    ]
    for f in filters:
        assert f.codes and all(re.fullmatch(r"-[A-Za-z_0-9]+", c) for c in f.codes), f.name
        assert len(f.rule) > 20, f.name
        source = Path(f.fn.__code__.co_filename).read_text()
        for code in f.codes:
            assert f'"{code}"' in source, (f.name, code)


def test_emitted_codes_are_declared(demo: GridSnapshot) -> None:
    """Every skip's criteria code is one its filter declares (the explanation and the declaration agree)."""
    declared: dict[str, set[str]] = {}
    for f in [
        *production_queues.FILTERS,
        *analysis_filters.PRELIMINARY,
        *analysis_filters.PERSISTENT,
        *analysis_filters.TEMPORARY,
    ]:
        declared.setdefault(f.name, set()).update(f.codes)
    cache = GridCache(demo)
    seen = 0
    for tid in demo.tasks["jeditaskid"].tolist():
        row = views.task_row(cache, tid)
        broker = analysis if row.get("prodsourcelabel") == "user" else production
        for s in broker.broker(demo, tid, Config(), cache=cache).skipped:
            if s.stage in declared:
                assert s.criteria in declared[s.stage], (tid, s.stage, s.criteria)
                seen += 1
    assert seen > 1000


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(shared_grids())
def test_decisions_are_the_same_with_caches_on_and_off(case: tuple[dict[str, Any], list[int], Config]) -> None:
    """Random grids, tasks and configs: sharing verdicts through the cache changes no decision of any broker."""
    tables, ids, config = case
    snap = _snapshot(tables)
    shared = GridCache(snap)
    for tid in ids:
        off = GridCache(snap, memoise=False)
        for broker in (production, analysis):
            assert explained(broker.broker(snap, tid, config, cache=shared)) == explained(
                broker.broker(snap, tid, config, cache=off)
            ), (broker.BROKER, tid)
        with_cache = nucleus.broker(snap, tid, config, cache=shared).to_dict()
        assert with_cache == nucleus.broker(snap, tid, config, cache=off).to_dict(), tid


def test_cache_of_another_snapshot_is_refused() -> None:
    """A cache belongs to one snapshot: handing it to a broker with another snapshot is an error, not a wrong answer."""
    a, b = demo_snapshot(seed=1, queues=20, tasks=5), demo_snapshot(seed=2, queues=20, tasks=5)
    with pytest.raises(ValueError, match="belongs to snapshot"):
        production.broker(b, int(b.tasks["jeditaskid"].iloc[0]), Config(), cache=GridCache(a))


def test_cache_is_bounded() -> None:
    """The verdict memo keeps at most its capacity, however many distinct keys arrive."""
    cache = GridCache(demo_snapshot(seed=1, queues=20, tasks=5))
    for i in range(20_000):
        cache.memo(("k", i), lambda: 0)
    assert cache.sizes()["memo"] <= 8192


def test_no_broker_imports_another_and_no_global_state() -> None:
    """analysis and nucleus do not import production; no `global` and no `type: ignore` in brokers/ or checks/."""
    for path in [
        *(ROOT / "brokerage" / "brokers").glob("analysis*.py"),
        *(ROOT / "brokerage" / "brokers").glob("nucleus*.py"),
    ]:
        text = path.read_text()
        assert "brokers import production" not in text and "brokers.production" not in text, path.name
    for folder in ("brokerage/brokers", "brokerage/checks"):
        for path in (ROOT / folder).glob("*.py"):
            text = path.read_text()
            assert "type: ignore" not in text, path
            assert not re.search(r"^\s*global\s", text, re.M), path
    for folder in ("brokerage", "app"):
        for path in (ROOT / folder).rglob("*.py"):
            assert not re.search(r"^\s*global\s", path.read_text(), re.M), path
