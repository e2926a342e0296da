"""Unified (ucore) queues brokered as PanDA's pseudo queues: resource types, pseudo-queue values, brokerage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from brokerage.brokers import analysis, production
from brokerage.checks import production_queues
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.pseudoqueues import pseudo_queue_columns, task_resource_type
from tests.builders import anal_queue, anal_task, grid, queue, task

QUEUEDATA = Path(__file__).parents[2] / "data" / "queuedata_CERN.json"  # pilot3's CRIC record of CERN, trimmed


def cern_row(**kw: Any) -> dict[str, Any]:
    """The queue row of the recorded CERN record (ucore, corecount 8, maxrss 32000); KW overrides columns."""
    rec = json.loads(QUEUEDATA.read_text())
    keep = ("type", "status", "capability", "corecount", "corepower", "maxrss", "minrss", "maxtime", "maxwdir")
    return queue(rec["panda_resource"], rec["atlas_site"], **{**{k: rec[k] for k in keep}, **kw})


def columns(rows: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Queue columns of ROWS as queue_arrays holds them."""
    snap = grid(rows, [task()])
    return views.queue_arrays(GridCache(snap)).col


def skip_codes(decision: Any) -> dict[str, str]:
    """Criteria code of every skipped queue."""
    return {s.candidate: s.criteria for s in decision.skipped}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"corecount": 1, "ramcount": 2000, "ramunit": "MBPerCore"}, "SCORE"),  # 1800 MB/core after x0.9
        ({"corecount": 1, "ramcount": 2300, "ramunit": "MBPerCore"}, "SCORE_HIMEM"),  # 2070 > 2000
        ({"corecount": 8, "ramcount": 2000, "ramunit": "MBPerCore"}, "MCORE"),
        ({"corecount": 8, "ramcount": 24000, "ramunit": "MB"}, "MCORE_HIMEM"),  # 24000 / 8 x 0.9 = 2700 per core
        ({"corecount": 0, "ramcount": 16000, "ramunit": "MB"}, "MCORE"),  # any-core counts as 8: 1800 per core
        ({"corecount": None, "ramcount": None}, "SCORE"),  # null corecount is one core, no RAM is 0
    ],
)
def test_task_resource_type_follows_cores_and_ram_per_core(fields: dict[str, Any], expected: str) -> None:
    """A task is SCORE/MCORE by its cores (0 = 8) and HIMEM when its RAM per core x 0.9 exceeds 2000 MB."""
    assert task_resource_type(fields) == expected


def test_pseudo_queue_values_of_cern() -> None:
    """Pseudo cores = clamp(8, type cores); maxrss = min(cores x type max RAM/core, 32000 x cores / 8)."""
    col = columns([cern_row()])
    got = {rt: [float(pseudo_queue_columns(col, rt)[c][0]) for c in ("corecount", "minrss", "maxrss")] for rt in (
        "SCORE", "SCORE_HIMEM", "MCORE", "MCORE_HIMEM")}  # fmt: skip
    assert got == {
        "SCORE": [1, 0, 2000],  # min(1 x 2000, 32000 x 1/8 = 4000)
        "SCORE_HIMEM": [1, 2001, 4000],  # minrss = 1 x 2001; maxrss = 32000 x 1/8
        "MCORE": [8, 0, 16000],  # min(8 x 2000, 32000)
        "MCORE_HIMEM": [8, 16008, 32000],  # minrss = 8 x 2001
    }


def test_only_unified_queues_change_and_single_core_unified_queues_have_no_mcore_pseudo_queue() -> None:
    """Non-ucore queues keep their values; a ucore queue with 1 core has no MCORE pseudo queue and keeps 1 core."""
    col = columns([cern_row(), queue("MC8", "S", corecount=8, maxrss=16000), cern_row(panda_queue="U1", corecount=1)])
    mcore = pseudo_queue_columns(col, "MCORE")
    assert mcore["corecount"].tolist() == [8, 8, 1]
    assert mcore["maxrss"].tolist() == [16000, 16000, 32000]  # U1 keeps its own maxrss
    assert mcore["atlas_site"] is col["atlas_site"]  # other columns are the same arrays


def test_single_core_task_passes_core_count_and_memory_checks_at_the_ucore_queue() -> None:
    """A 1-core 2000 MB task uses CERN's SCORE pseudo queue (1 core, maxrss 2000 >= 1800 MB): no skip there."""
    snap = grid([cern_row(), queue("MC8", "CERN-PROD", corecount=8, maxrss=32000)], [task()])
    decision = production.broker(snap, 1, Config())
    assert "CERN" in [c.name for c in decision.candidates]
    assert skip_codes(decision) == {"MC8": "-cpucore"}  # a plain 8-core queue still refuses it


def test_the_same_record_without_ucore_skips_single_core_tasks() -> None:
    """Without capability ucore, CERN is one 8-core queue and a 1-core task skips it with -cpucore."""
    snap = grid([cern_row(capability="mcore")], [task()])
    assert skip_codes(production.broker(snap, 1, Config())) == {"CERN": "-cpucore"}


def test_eight_core_task_uses_the_mcore_pseudo_queue() -> None:
    """An 8-core 2000 MB/core task uses MCORE (8 cores, maxrss 16000 >= 8 x 2000 x 0.9 = 14400): a candidate."""
    snap = grid([cern_row()], [task(corecount=8)])
    ctx = production_queues.make_context(snap.tasks.iloc[0].to_dict(), Config(), GridCache(snap))
    assert (ctx.qa["corecount"][0], ctx.qa["maxrss"][0]) == (8, 16000)
    assert [c.name for c in production.broker(snap, 1, Config()).candidates] == ["CERN"]


def test_explanation_names_the_unified_queue_with_its_pseudo_queue_limit() -> None:
    """A 1-core 5000 MB task is SCORE_HIMEM; 4500 MB > pseudo maxrss 4000 is skipped as CERN (-lowmemory)."""
    snap = grid([cern_row()], [task(ramcount=5000)])
    (skip,) = production.broker(snap, 1, Config()).skipped
    assert (skip.candidate, skip.criteria) == ("CERN", "-lowmemory")
    assert "maxrss=4000" in skip.reason and "4500" in skip.reason


def test_multi_core_task_fails_core_count_at_a_unified_queue_without_mcore_pseudo_queue() -> None:
    """A ucore queue with 1 core has no MCORE pseudo queue: an 8-core task is skipped there with -cpucore."""
    snap = grid([cern_row(corecount=1)], [task(corecount=8)])
    assert skip_codes(production.broker(snap, 1, Config())) == {"CERN": "-cpucore"}


def test_tasks_of_different_resource_types_do_not_share_memoised_verdicts() -> None:
    """Brokering a SCORE then an MCORE task on one snapshot and config gives each its own pseudo queue."""
    snap = grid([cern_row()], [task(1), task(2, corecount=8)])
    config = Config()
    assert [c.name for c in production.broker(snap, 1, config).candidates] == ["CERN"]
    assert [c.name for c in production.broker(snap, 2, config).candidates] == ["CERN"]
    assert [c.name for c in production.broker(snap, 1, config).candidates] == ["CERN"]


def test_analysis_brokerage_sees_the_pseudo_queue_too() -> None:
    """An analysis 1-core task at a ucore 8-core unified queue is not skipped with -cpucore."""
    q = anal_queue("CERN", "CERN-PROD", type="unified", capability="ucore", corecount=8, maxrss=32000)
    snap = grid([q], [anal_task()])
    assert "CERN" not in skip_codes(analysis.broker(snap, 1, Config()))
