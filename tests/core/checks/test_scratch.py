"""Scratch disk (brokerage/checks/scratch.py): maxwdir divided by the queue's coreCount must exceed the job's expected
disk usage (-disk); the input counts only where the job copies it to scratch (no direct access)."""

from __future__ import annotations

import pytest

from tests.builders import anal_queue, anal_task, grid, queue, task
from tests.core.checks.helpers import assert_codes, codes, run


def test_scratch_disk_per_event_output() -> None:
    """inputDiskCount + max(0.5 GB, outDiskCount x nEvents) + workDiskCount must be below maxwdir / coreCount."""
    # copy-to-scratch: 3000 + max(512, 500 kB x 2000 / 1024 = 976.5625) + 1000 = 4976.5625 MB
    # direct access:      0 + 976.5625 + 1000 = 1976.5625 MB
    t = task(
        1, corecount=8, chunk_input_mb=3000.0, outdiskcount=500.0, outdiskunit="kBPerEvent", chunk_nevents=2000,
        workdiskcount=1000,
    )  # fmt: skip
    qs = [
        queue("A", "S1", corecount=8, maxrss=0, maxwdir=40000),  # 5000 > 4976.5625
        queue("B", "S1", corecount=8, maxrss=0, maxwdir=39800),  # 4975 < 4976.5625
        queue("C", "S1", corecount=8, maxrss=0, maxwdir=16000, direct_access_lan=True),  # 2000 > 1976.5625
        queue("D", "S1", corecount=8, maxrss=0, maxwdir=15800, direct_access_lan=True),  # 1975 < 1976.5625
        queue("E", "S1", corecount=8, maxrss=0, maxwdir=0),  # no limit published
    ]
    assert_codes(grid(qs, [t]), {"A": None, "B": "-disk", "C": None, "D": "-disk", "E": None})


@pytest.mark.parametrize(
    ("outdiskcount", "expected"),
    [
        # 3000 + max(512, 0.1 x 3000 = 300) + 0 = 3512 MB: 3512 is not larger than 3512
        pytest.param(0.1, {"A": None, "B": "-disk", "C": None}, id="-disk:output-floor-0.5-GB"),
        # 3000 + max(512, 0.5 x 3000 = 1500) + 0 = 4500 MB
        pytest.param(0.5, {"A": "-disk", "B": "-disk", "C": None}, id="-disk:output-per-input-size"),
    ],
)
def test_scratch_disk_output_per_input_size_and_floor(outdiskcount: float, expected: dict[str, str | None]) -> None:
    """Without PerEvent the output is outDiskCount x inputDiskCount, and at least 0.5 GB; usage must be smaller."""
    qs = [queue("A", "S1", maxwdir=3513), queue("B", "S1", maxwdir=3512), queue("C", "S1", maxwdir=4501)]
    t = task(1, chunk_input_mb=3000.0, outdiskcount=outdiskcount, outdiskunit="kB")
    assert_codes(grid(qs, [t]), expected)


def test_analysis_scratch_disk() -> None:
    """Analysis: (0 or inputDiskCount) + outDiskCount × inputDiskCount + workDiskCount must be < maxwdir / coreCount."""
    t = anal_task(1, chunk_input_mb=1000.0, outdiskcount=0.5, workdiskcount=200)  # 1700 MB, 700 MB direct
    qs = [
        anal_queue("SMALL", "S1", maxwdir=1700),
        anal_queue("OK", "S2", maxwdir=1701),
        anal_queue("DIRECT", "S3", maxwdir=701, direct_access_lan=True),
        anal_queue("PERCORE", "S4", maxwdir=8000, corecount=8, maxrss=64000),
    ]
    t["corecount"] = 0
    d = run(grid(qs, [t]))
    assert codes(d) == {"SMALL": "-disk", "PERCORE": "-disk"}
    assert "1700" in d.skip_of("SMALL").reason
