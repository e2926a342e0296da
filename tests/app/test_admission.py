"""Admission of whole-grid work (issue #19): capped per client and in total, queued with positions, shared."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from app.services.admission import Admission, AdmissionRefused


def _running_max(admission: Admission, jobs: list[tuple[str, str]]) -> tuple[int, dict[str, int], list[int]]:
    """Run JOBS (key, client) at once, each 0.3 s; return the most running together, per client, and positions seen."""
    lock = threading.Lock()
    now: dict[str, int] = {}
    peak = {"total": 0}
    per_client_peak: dict[str, int] = {}
    positions: list[int] = []

    def work(client: str) -> str:
        with lock:
            now[client] = now.get(client, 0) + 1
            peak["total"] = max(peak["total"], sum(now.values()))
            per_client_peak[client] = max(per_client_peak.get(client, 0), now[client])
        time.sleep(0.3)
        with lock:
            now[client] -= 1
        return client

    threads = [
        threading.Thread(target=admission.run, args=(key, client, lambda c=client: work(c), positions.append))
        for key, client in jobs
    ]
    for t in threads:
        t.start()
        time.sleep(0.01)
    for t in threads:
        t.join(timeout=30)
    return peak["total"], per_client_peak, positions


def test_runs_are_capped_in_total_and_per_client_and_queued(tmp_path: Path) -> None:
    """Eight distinct runs from four clients never exceed two at once nor one per client; waiters see positions."""
    admission = Admission(tmp_path, total=2, per_client=1)
    jobs = [(f"run{i}", f"10.0.0.{i % 4}") for i in range(8)]
    total, per_client, positions = _running_max(admission, jobs)
    assert total <= 2 and max(per_client.values()) == 1
    assert positions and max(positions) >= 3


def test_identical_runs_share_one_computation(tmp_path: Path) -> None:
    """Five callers asking for the same run at once get one computation's result."""
    admission = Admission(tmp_path, total=2, per_client=2)
    calls = []

    def work() -> int:
        calls.append(1)
        time.sleep(0.3)
        return 42

    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(admission.run("same", "c", work))) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert results == [42] * 5 and len(calls) == 1


def test_a_full_queue_refuses_at_once(tmp_path: Path) -> None:
    """With every slot busy and the queue full, one more run is refused with a message instead of waiting."""
    admission = Admission(tmp_path, total=1, per_client=1, max_queued=0)
    release = threading.Event()
    busy = threading.Thread(target=admission.run, args=("a", "c1", release.wait))
    busy.start()
    time.sleep(0.3)
    try:
        with pytest.raises(AdmissionRefused, match="try again"):
            admission.run("b", "c2", lambda: None)
    finally:
        release.set()
        busy.join(timeout=10)


def test_report_files_are_bounded_in_count_and_bytes(app_client, tmp_path: Path) -> None:
    """Making more reports than the bounds allow keeps at most MAX files and at most MAX bytes on disk."""
    from app.main import state
    from app.services.reports import Reports

    reports = Reports(state, folder=tmp_path / "reports", max_files=3, max_bytes=10**9)
    task = int(state.snapshot().tasks["jeditaskid"].iloc[0])
    made = [reports.make("task", "csv", task, {"NQUEUED_SAT_CAP": 100 + i}) for i in range(5)]
    left = list((tmp_path / "reports").glob("*/*"))
    assert len(left) == 3 and made[-1].path in left
    small = Reports(state, folder=tmp_path / "small", max_files=50, max_bytes=made[0].size + 1)
    for i in range(3):
        small.make("task", "csv", task, {"NQUEUED_SAT_CAP": 200 + i})
    assert sum(f.stat().st_size for f in (tmp_path / "small").glob("*/*")) <= made[0].size * 2
