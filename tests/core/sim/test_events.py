"""The event log's counts kept as the run goes equal the counts of its full frame."""

from __future__ import annotations

import numpy as np

from brokerage.sim import events
from brokerage.sim.events import EventLog, aggregate
from brokerage.sim.jobs import S
from tests.core.sim.conftest import small_sim


def _log() -> EventLog:
    log = EventLog()
    log.add(0.0, np.array([1, 2, 3]), "-", "activated", "generate", np.array([0.5, 0.25, 0.25]), 2000.0)
    log.add(60.0, np.array([1, 2]), "activated", "running", "dispatch", 4.0)
    log.add(3600.0, np.array([3, 4, 5]), np.array([S["activated"], S["running"], S["activated"]]), "closed", "R8")
    log.add(7260.0, np.array([42]), np.array(["running"], dtype=object), "finished", "task")
    log.add(7260.0, np.array([], np.int64), "-", "activated", "generate")
    return log


def test_counts_equal_the_frames_aggregate() -> None:
    """Hand-made log: events by (hour, rule, from, to) counted as they come equal aggregate(frame()) row for row
    (hour 1 holds R8's 2 activated -> closed and 1 running -> closed)."""
    log = _log()
    kept = log.aggregated()
    assert kept.to_dict("records") == aggregate(log.frame()).to_dict("records")
    r8 = kept[kept["rule"] == "R8"].set_index("from")["count"].to_dict()
    assert r8 == {"activated": 2, "running": 1} and set(kept.loc[kept["rule"] == "R8", "bucket"]) == {1}
    assert log.n == 9


def test_totals_and_ids_read_the_counts_and_columns() -> None:
    """Totals by rule and by the status moved to, and one rule's ids in order, without the frame: 3 generated,
    1 moved to finished (a task), 3 closed, generate's ids 1, 2, 3."""
    log = _log()
    assert log.total(rules=("generate",)) == 3 and log.total(rules=("dispatch",)) == 2
    assert log.total(to=("finished",)) == 1 and log.total(to=("closed",)) == 3 and log.total(to=("failed",)) == 0
    assert log.total(rules=("retry_ram", "retry_task_ram")) == 0
    assert log.ids("generate").tolist() == [1, 2, 3]


def test_compaction_keeps_every_row_in_order(monkeypatch) -> None:
    """Joining the small batches into one chunk keeps every event, in order: the frame is the same."""
    plain = _log().frame()
    monkeypatch.setattr(events, "COMPACT_PARTS", 2)
    joined = _log()
    assert len(joined.parts) < 4
    assert joined.frame().equals(plain)


def test_run_headline_matches_the_frame() -> None:
    """A 3 h run of the small grid: the headline read from the counts equals the counts of the frame."""
    sim = small_sim().run(3)
    h, ev = sim.result()["headline"], sim.log.frame()
    assert h["jobs_generated"] == int((ev["rule"] == "generate").sum()) > 0
    assert h["jobs_started"] == int((ev["rule"] == "dispatch").sum())
    assert h["jobs_finished"] == int((ev["to"] == "finished").sum())
    assert h["jobs_closed_reassigned"] == int((ev["to"] == "closed").sum())
    assert sim.result()["events"] == aggregate(ev).assign(**{"from": lambda d: d["from"].astype(str)}).to_dict(
        "records"
    )


def test_compact_chunks_are_smaller_and_exact(monkeypatch) -> None:
    """A compact chunk stores ids as int32 and each batch's time, rule and to as runs: 1,000 events of 10 batches
    take under 12 bytes an event (26 as plain columns), and give back every column bit for bit, NaN included."""
    monkeypatch.setattr(events, "COMPACT_PARTS", 10)
    log = EventLog()
    for i in range(10):
        ids = np.arange(100 * i, 100 * i + 100) + 1
        log.add(60.0 * i, ids, "activated", "running", "dispatch", np.arange(100) % 7)
    assert len(log.parts) == 1
    size = sum(c.nbytes if isinstance(c, np.ndarray) else c[0].nbytes + c[1].nbytes for c in log.parts[0].values())
    assert size < 12 * 1000
    assert log.column("id").tolist() == list(range(1, 1001)) and log.column("id").dtype == np.int64
    assert np.isnan(log.column("threshold")).all() and log.column("time")[::100].tolist() == [
        60.0 * i for i in range(10)
    ]
    assert log.column("value").tolist() == [float(x % 7) for _ in range(10) for x in range(100)]
