"""Input movement and disk IO (brokerage/checks/diskio.py): IO-intensive tasks avoid queues that would move too much
input (-io); queues over their diskIO per core limit avoid tasks over it too (-diskIO)."""

from __future__ import annotations

from typing import Any

import pytest

from brokerage.model.snapshot import GridSnapshot
from tests.builders import anal_queue, anal_task, grid, queue, task
from tests.core.checks.helpers import assert_codes, run


def _input_grid(t: dict[str, Any], held: dict[str, tuple[float, int]], qs: list[dict[str, Any]]) -> GridSnapshot:
    """Task 1 reads one dataset of 150 files / 20 GB; HELD maps a site to the (GB, files) its DATADISK holds."""
    replicas = [
        {"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": f"{s}_DATADISK", "size_gb": gb, "nfiles": n}
        for s, (gb, n) in held.items()
    ]
    ds = [{"jeditaskid": 1, "datasetid": 1, "nfiles": 150, "size_gb": 20.0}]
    return grid(qs, [t], datasets=ds, dataset_replicas=replicas)


IO_EXPECTED = {"Q1": None, "Q2": None, "Q3": "-io", "Q4": "-io", "Q5": "-io"}


@pytest.mark.parametrize(
    ("iointensity", "overrides", "expected"),
    [
        pytest.param(300.0, {}, IO_EXPECTED, id="-io"),
        # ioIntensity 200 is not larger than the cutoff: no IO check
        pytest.param(200.0, {}, dict.fromkeys(IO_EXPECTED), id="-io:ioIntensity-at-the-cutoff"),
        pytest.param(200.0, {"IO_INTENSITY_CUTOFF": 199}, IO_EXPECTED, id="-io:IO_INTENSITY_CUTOFF=199"),
    ],
)
def test_io_intensity_cutoff(iointensity: float, overrides: dict[str, Any], expected: dict[str, str | None]) -> None:
    """ioIntensity > IO_INTENSITY_CUTOFF (200): missing input must be < 10 GB and < 100 files."""
    qs = [queue(f"Q{i}", f"S{i}") for i in range(1, 6)]
    held = {
        "S1": (20.0, 150),  # missing 0 GB, 0 files
        "S2": (15.0, 145),  # missing 5 GB, 5 files
        # S3 holds nothing: missing 20 GB, 150 files
        "S4": (19.0, 40),  # missing 1 GB, 110 files >= 100
        "S5": (10.0, 150),  # missing exactly 10 GB: not less than 10
    }
    assert_codes(_input_grid(task(1, iointensity=iointensity), held, qs), expected, **overrides)


@pytest.mark.parametrize(
    ("diskio", "overrides", "expected"),
    [
        pytest.param(120.0, {}, {"A": "-diskIO", "B": None, "C": None}, id="-diskIO"),
        pytest.param(90.0, {}, {"A": None, "B": None, "C": None}, id="-diskIO:task-under-the-limit"),
        pytest.param(2000.0, {"MAX_DISKIO_DEFAULT": 1000}, {"A": "-diskIO", "C": "-diskIO"},
                     id="-diskIO:MAX_DISKIO_DEFAULT=1000"),
    ],
)  # fmt: skip
def test_disk_io_limit(diskio: float, overrides: dict[str, Any], expected: dict[str, str | None]) -> None:
    """Queues whose running jobs average more diskIO per core than the limit exclude tasks above the limit."""
    qs = [
        queue("A", "S1", maxdiskio=100, diskio_avg=150.0),
        queue("B", "S1", maxdiskio=100, diskio_avg=90.0),
        queue("C", "S1", maxdiskio=0, diskio_avg=5000.0),  # MAX_DISKIO_DEFAULT = 1e10
    ]
    d = assert_codes(grid(qs, [task(1, diskio=diskio)]), expected, **overrides)
    assert all(d.skip_of(q).temporary for q, c in expected.items() if c)


def test_analysis_diskio_is_a_persistent_skip() -> None:
    """Analysis: a queue over its diskIO limit is skipped for tasks whose diskIO is also over it (-diskIO, persistent)."""
    qs = [anal_queue("A", "S1"), anal_queue("B", "S2", maxdiskio=100, diskio_avg=150.0)]
    snap = grid(qs, [anal_task(1, diskio=120.0)])
    s = run(snap).skip_of("B")
    assert s is not None and s.criteria == "-diskIO" and not s.temporary
