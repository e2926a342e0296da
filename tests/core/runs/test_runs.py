"""Whole-grid runs on dask.distributed: embedded and external clusters give the serial run's results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from distributed import Client, LocalCluster

from brokerage import runs
from brokerage.brokers import batch
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.waiting import waiting_task_ids
from brokerage.runs import chunks, engine
from brokerage.synth.demo import demo_snapshot
from tests.dask_cluster import START_TIMEOUT_S, external_cluster


@pytest.fixture(scope="module")
def demo() -> GridSnapshot:
    """A demo grid of 200 queues and 800 tasks: 497 waiting tasks, cut into as many chunks (16 for 2 workers) as
    the full demo grid's 1,915, at a fifth of its serial run's cost (the grid's size changes no rule checked here)."""
    snap = demo_snapshot(seed=0, queues=200, tasks=800)
    assert len(chunks.split(waiting_task_ids(snap), 2)) == 2 * chunks.CHUNKS_PER_WORKER
    return snap


@pytest.fixture(scope="module")
def serial(demo: GridSnapshot) -> batch.GridRun:
    """The serial grid run of the demo grid under the default config."""
    return batch.run_grid_serial(demo, Config(), cache=GridCache(demo))


@pytest.fixture(scope="module")
def local_client() -> Iterator[Client]:
    """A LocalCluster of 2 worker processes on 127.0.0.1."""
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as lc,
        Client(lc, set_as_default=False) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def external(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """A `dask scheduler` and two `dask worker` processes on 127.0.0.1: (scheduler address, worker processes)."""
    with external_cluster(tmp_path_factory.mktemp("dask")) as cluster:
        yield cluster


def test_split_cuts_contiguous_chunks_that_cover_every_item() -> None:
    """Chunks are contiguous, in order, cover every item once, and there are several per worker."""
    items = list(range(1000))
    parts = chunks.split(items, 2)
    assert [x for p in parts for x in p] == items
    assert len(parts) == 2 * chunks.CHUNKS_PER_WORKER and min(len(p) for p in parts) >= chunks.MIN_CHUNK
    assert chunks.split(list(range(5)), 4) == [[0, 1, 2, 3, 4]] and chunks.split([], 2) == []


def test_big_runs_get_short_chunks() -> None:
    """A run of many items is cut into chunks of at most MAX_CHUNK, so the workers finish together."""
    items = list(range(25_000))
    parts = chunks.split(items, 2)
    assert [x for p in parts for x in p] == items
    assert max(len(p) for p in parts) <= chunks.MAX_CHUNK and len(parts) == 63


def test_small_runs_stay_in_process_without_starting_a_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below MIN_CLUSTER_TASKS work items the run happens here and no client is started."""
    snap = demo_snapshot(seed=0, queues=60, tasks=40)
    monkeypatch.setattr(engine, "get_client", lambda: pytest.fail("a small run started a cluster"))
    keys, _ = batch.plan_grid(GridCache(snap), waiting_task_ids(snap))
    assert len(keys) < runs.MIN_CLUSTER_TASKS
    seen: list[tuple[int, int]] = []
    run = runs.run_grid(snap, Config(), progress=lambda d, t: seen.append((d, t)))
    assert run.outcomes == batch.run_grid_serial(snap, Config()).outcomes and seen[-1] == (len(keys), len(keys))


def test_local_cluster_grid_run_equals_the_serial_run(
    demo: GridSnapshot, serial: batch.GridRun, local_client: Client
) -> None:
    """A LocalCluster with 2 workers gives the serial run's outcomes, in the same order, for a whole demo grid."""
    seen: list[tuple[int, int]] = []
    run = runs.run_grid(demo, Config(), client=local_client, progress=lambda d, t: seen.append((d, t)))
    assert run.outcomes == serial.outcomes and list(run.outcomes) == list(serial.outcomes)
    assert run.errors == serial.errors and run.recomputed == serial.recomputed
    assert len(seen) > 4 and seen[-1] == (serial.recomputed, serial.recomputed)  # the bar moves chunk by chunk


def test_a_sweep_on_the_cluster_equals_one_serial_run_per_config(demo: GridSnapshot, local_client: Client) -> None:
    """A sweep of 3 configs of one parameter on the cluster gives each config's serial grid run."""
    configs = [Config().with_overrides({"NQUEUED_SAT_CAP": v}) for v in (50, 200, 1000)]
    ids = waiting_task_ids(demo)[:250]
    swept = runs.sweep(demo, configs, task_ids=ids, client=local_client)
    for cfg, run in zip(configs, swept, strict=True):
        serial = batch.run_grid_serial(demo, cfg, task_ids=ids)
        assert run.outcomes == serial.outcomes and list(run.outcomes) == list(serial.outcomes)


def test_local_cluster_decisions_equal_the_serial_ones(demo: GridSnapshot, local_client: Client) -> None:
    """Decisions brokered on the cluster (for reports) equal the serial ones: status, ranking, weights and skips."""
    cache = GridCache(demo)
    keys = batch.plan(cache, waiting_task_ids(demo)[:300])
    here = list(batch.run(demo, Config(), keys, cache=cache, keep_failures=True))
    there = runs.decide_all(demo, Config(), keys, client=local_client)
    assert [k for k, _ in there] == [k for k, _ in here]
    for (_, a), (_, b) in zip(here, there, strict=True):
        assert (a.status, a.ranked_names, [c.weight for c in a.candidates]) == (
            b.status,
            b.ranked_names,
            [c.weight for c in b.candidates],
        )
        assert [(s.candidate, s.criteria, s.reason) for s in a.skipped] == [
            (s.candidate, s.criteria, s.reason) for s in b.skipped
        ]


def test_the_snapshot_is_sent_once_per_version_and_shared_by_clients(demo: GridSnapshot, local_client: Client) -> None:
    """The snapshot is scattered once and published: the same client and a second client reuse its one key."""
    fut = runs.snapshot_future(local_client, demo)
    assert runs.snapshot_future(local_client, demo) is fut
    with Client(local_client.scheduler.address, set_as_default=False) as other:
        assert runs.snapshot_future(other, demo).key == fut.key
        chunks.forget(other)
    # the snapshot is held by the cluster under that one key (broadcast to the workers present at the time; a
    # worker that joined later fetches it from a peer), and a run on it needs no second copy from the client
    assert len(local_client.who_has(fut).get(fut.key, ())) >= 1
    assert runs.snapshot_future(local_client, demo).key == fut.key


def test_a_cancelled_run_stops_and_cancels_its_chunks(demo: GridSnapshot, local_client: Client) -> None:
    """CANCEL returning True after the first chunk raises Cancelled and leaves no chunk running."""
    with pytest.raises(runs.Cancelled):
        runs.run_grid(demo, Config(), client=local_client, cancel=lambda: True)
    deadline = time.monotonic() + 20
    while local_client.processing() and any(local_client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(local_client.processing().values())


def test_external_scheduler_gives_the_serial_run(
    demo: GridSnapshot, serial: batch.GridRun, external: tuple[str, list[subprocess.Popen[bytes]]]
) -> None:
    """A `dask scheduler` and two `dask worker` processes reached by address give the serial outcomes."""
    with Client(external[0], set_as_default=False) as client:
        run = runs.run_grid(demo, Config(), client=client)
        chunks.forget(client)
    assert run.outcomes == serial.outcomes and list(run.outcomes) == list(serial.outcomes)


def test_killing_a_worker_mid_run_still_gives_the_serial_run(
    demo: GridSnapshot, serial: batch.GridRun, external: tuple[str, list[subprocess.Popen[bytes]]]
) -> None:
    """Killing one of two workers in the middle of a run: its chunks are recomputed and the result is identical."""
    address, workers = external
    first_chunk = threading.Event()
    killed: list[int] = []

    def progress(done: int, total: int) -> None:
        first_chunk.set()
        if not killed:  # wait for the kill, so that chunks are certainly still out on the killed worker
            assert first_chunk.wait(10)
            deadline = time.monotonic() + 10
            while not killed and time.monotonic() < deadline:
                time.sleep(0.01)

    def kill() -> None:
        assert first_chunk.wait(START_TIMEOUT_S)
        os.kill(workers[0].pid, signal.SIGKILL)
        workers[0].wait(timeout=20)
        killed.append(workers[0].pid)

    killer = threading.Thread(target=kill)
    killer.start()
    with Client(address, set_as_default=False) as client:
        run = runs.run_grid(demo, Config(), client=client, progress=progress)
        assert len(client.scheduler_info()["workers"]) == 1
        chunks.forget(client)
    killer.join(timeout=30)
    assert killed and run.outcomes == serial.outcomes and list(run.outcomes) == list(serial.outcomes)


def test_the_embedded_engine_starts_once_per_process_and_closes(monkeypatch: pytest.MonkeyPatch) -> None:
    """get_client() starts one embedded LocalCluster (configured worker count) and returns it until close()."""
    monkeypatch.delenv(engine.SCHEDULER_ENV, raising=False)
    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=1))
    client = runs.get_client()
    try:
        assert runs.get_client() is client and runs.running_client() is client
        assert len(client.scheduler_info()["workers"]) == 1 and client.scheduler.address.startswith("tls://127.0.0.1:")
        with pytest.raises(RuntimeError):
            runs.configure(workers=2)
    finally:
        runs.close()
    assert runs.running_client() is None


def _child_run(snap: GridSnapshot, out: Any) -> None:
    """In a forked child: a cluster grid run, and whether the child started a cluster of its own."""
    run = runs.run_grid(snap, Config())
    client = runs.running_client()
    out.put((run.outcomes, client is not None and client.cluster is None, client.scheduler.address))


def test_a_forked_child_reaches_its_parents_embedded_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """A forked child (as a Dash background job) connects to the parent's embedded cluster instead of starting one."""
    import multiprocessing

    snap = demo_snapshot(seed=0, queues=60, tasks=40)
    monkeypatch.delenv(engine.SCHEDULER_ENV, raising=False)
    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=1))
    monkeypatch.setattr(chunks, "MIN_CLUSTER_TASKS", 1)
    parent = runs.get_client()
    try:
        ctx = multiprocessing.get_context("fork")
        out = ctx.Queue()
        child = ctx.Process(target=_child_run, args=(snap, out))
        child.start()
        outcomes, connected, address = out.get(timeout=120)
        child.join(timeout=30)
        assert child.exitcode == 0 and connected and address == parent.scheduler.address
        assert outcomes == batch.run_grid_serial(snap, Config()).outcomes
    finally:
        runs.close()


def _report(snapshot: Path, out: Path, *args: str) -> dict[str, Any]:
    from click.testing import CliRunner

    from brokerage.cli.main import main

    cmd = ["report", "--snapshot", str(snapshot), "--all", "--quiet", "--format", "json", "--out", str(out), *args]
    result = CliRunner().invoke(main, cmd, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    for volatile in ("generated_at", "seconds"):
        doc["meta"].pop(volatile)
    return doc


def test_report_all_takes_scheduler_and_workers_options(
    external: tuple[str, list[subprocess.Popen[bytes]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`report --all --scheduler ADDRESS` brokers on that cluster and writes what `--workers 0` (in-process) writes."""
    snap = demo_snapshot(seed=0, queues=60, tasks=40)
    path = tmp_path / "grid.json"
    snap.to_json(path)
    monkeypatch.delenv(engine.SCHEDULER_ENV, raising=False)
    monkeypatch.setattr(chunks, "MIN_CLUSTER_TASKS", 1)
    monkeypatch.setattr(engine, "_engine", engine._Engine())
    here = _report(path, tmp_path / "here.json", "--workers", "0")
    assert runs.running_client() is None  # --workers 0: no cluster at all
    monkeypatch.setattr(engine, "_engine", engine._Engine())
    try:
        there = _report(path, tmp_path / "there.json", "--scheduler", external[0])
        assert runs.running_client() is not None and runs.running_client().scheduler.address == external[0]
    finally:
        runs.close()
    assert there == here and len(here["tasks"]) == len(waiting_task_ids(snap))


def test_dask_is_imported_only_by_a_whole_grid_run() -> None:
    """Importing the core, its CLI and the report builder does not import dask; only brokerage.runs' modules do."""
    code = (
        "import sys, brokerage.cli.main, brokerage.report, brokerage.whatif.compare, brokerage.runs; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'dask', 'distributed'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
