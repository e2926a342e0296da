"""The software check's shortcuts (classes of indistinguishable descriptions, per-request memo) change no verdict."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brokerage.checks.software import SoftwareVerdict, software_verdict
from brokerage.checks.software_description import SoftwareIndex, software_index
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.synth.demo import demo_snapshot
from tests.core.checks.test_software import (
    BOOL,
    CMTCONFIG,
    CMTCONFIG_SET,
    CONTAINER_SET,
    CVMFS_SET,
    FOCUSES,
    TASK_CONTAINER,
    TRANSHOME,
    desc,
    draw_architecture,
    draw_hardware_entry,
    draw_tag,
    grids,
)


def _rows(v: SoftwareVerdict, n: int) -> list[tuple[bool, str, str, str]]:
    idx = np.arange(n)
    failed = np.flatnonzero(~v.passed)
    texts = dict(zip(failed.tolist(), v.texts(failed), strict=True))
    codes = v.codes(idx)
    return [
        (bool(v.passed[i]), codes[i] if not v.passed[i] else "", texts.get(i, ""), str(v.resolved[i])) for i in range(n)
    ]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_index_agrees_with_plain_rows(data: st.DataObject) -> None:
    """Per queue, the indexed path (classes + memo) gives the plain path's pass, code, sentence and resolution."""
    focus = data.draw(st.sampled_from(FOCUSES))
    task_row, names, releases, software = data.draw(grids(focus))
    other_row, *_ = data.draw(grids(focus))
    arr = np.array(names, dtype=object)
    index = SoftwareIndex(software)
    for row in (task_row, other_row, task_row):  # the repeat is answered from the memo
        plain = software_verdict(row, arr, releases, software)
        indexed = software_verdict(row, arr, releases, index)
        assert _rows(indexed, len(names)) == _rows(plain, len(names))


@st.composite
def siblings(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[str], list[list[str]], dict[str, Any]]:
    """Tasks and 2-12 queues whose descriptions share cmtconfigs, containers, cvmfs and hardware but not tags.

    Such descriptions fall into one class unless a task's tag lookups tell them apart, which is the
    shortcut's riskiest step.
    """
    rows = []
    for _ in range(3):
        architecture = draw_architecture(draw)
        rows.append(
            {
                "architecture": architecture,
                "transhome": draw(TRANSHOME),
                "container_name": draw(TASK_CONTAINER) if draw(BOOL) else "",
                "onlytagsforfc": draw(BOOL),
            }
        )
    static = {
        "cmtconfigs": draw(CMTCONFIG_SET),
        "containers": draw(CONTAINER_SET),
        "cvmfs": draw(CVMFS_SET),
        "architectures": [draw_hardware_entry(draw) for _ in range(draw(st.integers(0, 2)))],
    }
    n = draw(st.integers(2, 12))
    names = [f"Q{i}" for i in range(n)]
    software: dict[str, Any] = {}
    for name in names:
        tags = [draw_tag(draw, draw(st.sampled_from(rows))) for _ in range(draw(st.integers(0, 3)))]
        # a regex sw_platform's tags are published under the cmtconfigs it resolves to
        tags = [{**t, "cmtconfig": draw(CMTCONFIG)} if draw(BOOL) else t for t in tags]
        software[name] = desc(**static, tags=tags)
    return rows, names, [["AUTO"]] * n, software


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(siblings())
def test_descriptions_differing_only_in_tags(case: tuple[list[dict[str, Any]], list[str], Any, Any]) -> None:
    """Descriptions that differ only in their tags keep their own verdicts under the indexed path."""
    rows, names, releases, software = case
    arr = np.array(names, dtype=object)
    index = SoftwareIndex(software)
    for row in rows:
        plain = software_verdict(row, arr, releases, software)
        indexed = software_verdict(row, arr, releases, index)
        assert _rows(indexed, len(names)) == _rows(plain, len(names))


def test_demo_grid_index_agrees_with_plain_rows() -> None:
    """Every task of a demo grid, at a size where many queues share classes: the indexed path equals the plain one."""
    snap = demo_snapshot(seed=3, queues=400, tasks=200)
    cache = GridCache(snap)
    qa = views.queue_arrays(cache)
    index = software_index(cache)
    plain = {k: dict(v) for k, v in index.items()}
    names, releases = qa.name, qa["releases"]
    for tid in snap.tasks["jeditaskid"].tolist():
        row: dict[str, Any] = views.task_row(cache, tid)
        a = software_verdict(row, names, releases, index)
        b = software_verdict(row, names, releases, plain)
        assert _rows(a, qa.n) == _rows(b, qa.n), tid
