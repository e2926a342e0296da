"""gc_paused turns the cyclic collector off for a batch and back on when the last overlapping batch ends."""

from __future__ import annotations

import gc
import threading

import pytest

from brokerage.brokers import production
from brokerage.model.gcpause import gc_paused
from tests.builders import grid, queue, task


def test_nested_and_concurrent_pauses_restore_the_collector() -> None:
    """Inside any pause the collector is off; it is on again only after the outermost (or last concurrent) pause."""
    assert gc.isenabled()
    inside = threading.Event()
    leave = threading.Event()

    def other() -> None:
        with gc_paused():
            inside.set()
            leave.wait(5)

    t = threading.Thread(target=other)
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
        t.start()
        inside.wait(5)
    assert not gc.isenabled()  # the other thread's batch still runs
    leave.set()
    t.join(5)
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    """A caller that had turned the collector off finds it off after a pause too."""
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_broker_many_leaves_the_collector_on_even_when_a_task_is_unknown() -> None:
    """A batch that raises (an unknown task id) still turns the collector back on."""
    snap = grid([queue("A", "S1")], [task(1)])
    assert len(production.broker_many(snap, [1])) == 1 and gc.isenabled()
    with pytest.raises(KeyError):
        production.broker_many(snap, [1, 999])
    assert gc.isenabled()
