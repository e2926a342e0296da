"""Job functions for the job-service tests: plain importable functions the Dask workers unpickle by name."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any


def slow(report: Any, n: int, step: float = 0.05, log: str | None = None) -> dict[str, int]:
    """Report n steps of STEP seconds each; with LOG, append 'start' and 'end' lines (time, pid) to that file."""
    if log:
        with open(log, "a") as f:
            f.write(f"start {time.time()}\n")
    try:
        for i in range(n):
            report(int(100 * i / n), f"{i} / {n}")
            time.sleep(step)
    finally:
        if log:
            with open(log, "a") as f:
                f.write(f"end {time.time()}\n")
    return {"n": n}


def broken(report: Any) -> None:
    """Fail with a message naming a parameter."""
    report(10, "about to fail")
    raise ValueError("NQUEUED_SAT_CAP must be >= 0")


def mark_chunk(snap: Any, cache: Any, payload: tuple[str, float], items: list[int]) -> int:
    """A chunk that takes PAUSE seconds and leaves a line in the MARKS file when it ends."""
    marks, pause = payload
    time.sleep(pause)
    with open(marks, "a") as f:
        f.write(f"{len(items)}\n")
    return len(items)


def fan_out(report: Any, snap: Any, marks: str, items: int, pause: float) -> str:
    """A job that spreads ITEMS over the cluster in chunks (brokerage.runs.map_chunks), with progress."""
    from app.services.work import progress_of
    from brokerage.runs import map_chunks

    map_chunks(mark_chunk, snap, list(range(items)), (marks, pause), progress=progress_of(report, "items"))
    return "finished"


def chunks_done(marks: str) -> int:
    """Chunks that finished so far (lines of the MARKS file)."""
    path = Path(marks)
    return len(path.read_text().splitlines()) if path.exists() else 0


def slow_whatif(report: Any, snap: Any, stored: Any, config: Any) -> None:
    """Stands in for the whole-grid what-if job: 400 brokerages of 50 ms each, with progress."""
    for i in range(400):
        report(i // 4, f"{i} / 400 brokerages")
        time.sleep(0.05)


def with_parts(report: Any, log: str) -> list[Any]:
    """A job of two long parts on the cluster (as a stored-vs-what-if simulation is)."""
    from app.services.jobs import run_parts

    return run_parts(report, slow, [(400, 0.05, log), (400, 0.05, log)], lambda p: f"{p} %")


def broken_whatif(report: Any, snap: Any, stored: Any, config: Any) -> None:
    """Stands in for a whole-grid what-if job that fails."""
    report(30, "120 / 400 brokerages")
    raise ValueError("the grid could not be re-brokered: NQUEUED_SAT_CAP 311 broke it")
