"""Long tasks on the cluster, one per item, each reporting its steps done while it runs (a Dask Variable each)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from distributed import Client, Future, Variable, get_client

from brokerage.model.snapshot import GridSnapshot
from brokerage.runs import engine
from brokerage.runs.chunks import Cancelled, snapshot_future

Report = Callable[[int, int], None]  # (steps done, steps in total) of one item
Progress = Callable[[int, int], None]  # (steps done over all items, total)
Cancel = Callable[[], bool]
POLL_S = 0.25  # how often the caller reads the workers' counters
REPORT_EVERY = 5  # steps between two counter updates of a worker


def _tracked_call(fn: Callable[..., Any], snap: GridSnapshot, key: str, args: Sequence[Any]) -> Any:
    """Worker side: FN(snap, *ARGS, report) with report writing the steps done under the Variable KEY."""
    var = Variable(key, client=get_client())

    def report(done: int, total: int) -> None:
        if done % REPORT_EVERY == 0 or done == total:
            var.set(done)

    return fn(snap, *args, report)


def run_tracked(
    fn: Callable[..., Any],
    snap: GridSnapshot,
    items: Sequence[Sequence[Any]],
    *,
    steps: int,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    client: Client | None = None,
) -> list[Any]:
    """``[fn(snap, *item, report) for item in items]``, each item a task of its own on the cluster (the snapshot
    sent once); PROGRESS gets the steps done over all items from the first second (each item makes STEPS steps);
    CANCEL() returning True cancels every task and raises ``Cancelled``.

    Usage: ``run_tracked(simulate, snap, [(cfg, 24.0) for cfg in configs], steps=1440, progress=bar)``
    """
    client = client or engine.get_client()
    snap_fut = snapshot_future(client, snap)
    keys = [f"brokerage-tracked-{uuid.uuid4().hex}" for _ in items]
    counters = [Variable(key, client=client) for key in keys]
    for c in counters:
        c.set(0)  # set before the tasks start, so reading it never waits (an unset Variable's get times out noisily)
    total = steps * len(items)
    if progress:
        progress(0, total)  # the bar is there from the start; it moves once the workers have set up
    futures = [
        client.submit(_tracked_call, fn, snap_fut, key, list(item), pure=False)
        for item, key in zip(items, keys, strict=True)
    ]
    try:
        while not all(f.done() for f in futures):
            if cancel and cancel():
                raise Cancelled("cancelled on the cluster")
            if progress:
                progress(sum(_steps_done(c, f, steps) for c, f in zip(counters, futures, strict=True)), total)
            time.sleep(POLL_S)
        results = client.gather(futures)
    except BaseException:
        client.cancel(futures)
        raise
    finally:
        for c in counters:
            c.delete()
    if progress:
        progress(total, total)
    return list(results)


def _steps_done(counter: Variable, fut: Future, steps: int) -> int:
    return steps if fut.done() else int(counter.get(timeout=1))
