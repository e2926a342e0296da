"""Task and queue detail pages: attributes, history, job counts and stabilizer rows."""

from __future__ import annotations

import difflib
import json
from typing import Any

import pandas as pd

from app.viewmodels.common import plain, records
from app.viewmodels.queues import queue_rows
from brokerage.model.errors import UnknownIdError
from brokerage.model.snapshot import GridSnapshot


def task_attributes(snap: GridSnapshot, task_id: int) -> list[tuple[str, Any]]:
    """(field, value) pairs of one task; KeyError when unknown."""
    t = snap.tasks[snap.tasks["jeditaskid"] == task_id]
    if t.empty:
        raise UnknownIdError(f"unknown task {task_id}")
    return [(k, plain(v)) for k, v in t.iloc[0].items() if plain(v) not in (None, "", [])]


def queue_attributes(snap: GridSnapshot, name: str) -> list[tuple[str, Any]]:
    """(field, value) pairs of one queue; KeyError when unknown."""
    q = snap.queues[snap.queues["panda_queue"] == name]
    if q.empty:
        raise UnknownIdError(f"unknown queue {name!r}: {unknown_queue_text(snap, name)}")
    return [(k, plain(v)) for k, v in q.iloc[0].items() if plain(v) not in (None, "", [])]


def queue_job_counts(snap: GridSnapshot, name: str) -> list[dict[str, Any]]:
    """Jobs at the queue per global share and status."""
    jc = snap.job_counts
    d = jc[jc["panda_queue"] == name]
    if d.empty:
        return []
    piv = d.pivot_table(index="gshare", columns="jobstatus", values="njobs", aggfunc="sum", fill_value=0).reset_index()
    return records(piv)


def unknown_queue_text(snap: GridSnapshot, name: str) -> str | None:
    """A sentence saying NAME is no queue of the snapshot (with close names), or None when it is one.

    Usage: ``unknown_queue_text(snap, "CERN_MCOR")  # "No queue is named 'CERN_MCOR' ... Did you mean CERN_MCORE?"``
    """
    names = [str(n) for n in snap.queues["panda_queue"]]
    if name in names:
        return None
    close = sorted(difflib.get_close_matches(name, names, n=3, cutoff=0.6))
    hint = f" Did you mean {', '.join(close)}?" if close else " The Queues page lists every queue."
    return f"No queue is named {name!r} in this snapshot.{hint}"


def rollup(snap: GridSnapshot, name: str) -> list[dict[str, Any]]:
    """Job totals of queue NAME beside those of its site and its cloud (rows: level, name, queues, job counts, href).

    Usage: ``rollup(snap, "CERN_MCORE")[2]["cloud"]``
    """

    df = pd.DataFrame(queue_rows(snap))
    me = df[df["panda_queue"] == name]
    if me.empty:
        return []
    site, cloud = str(me.iloc[0]["atlas_site"]), str(me.iloc[0]["cloud"])
    # the states an operator compares across levels; the queue table has every state
    counts = [c for c in ("running", "activated", "assigned", "transferring") if c in df.columns]
    out = []
    for level, part, href in (
        ("queue", me, f"/queue?name={name}"),
        (f"site {site}", df[df["atlas_site"] == site], f"/queues?site={site}"),
        (f"cloud {cloud}", df[df["cloud"] == cloud], "/queues?q_f=" + json.dumps({"cloud": cloud})),
    ):
        out.append({"level": level, "queues": len(part), **{c: int(part[c].sum()) for c in counts}, "href": href})
    return out
