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
from brokerage.model.tables import DEFAULT_VO, JOB_STATUSES


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


def _queue_counts(snap: GridSnapshot, name: str) -> pd.DataFrame:
    """The job count rows of queue NAME, each with its VO (rows naming none are atlas')."""
    jc = snap.job_counts
    d = jc[(jc["panda_queue"] == name) & (jc["njobs"] > 0)]
    return d.assign(vo=d["vo"].fillna(DEFAULT_VO) if "vo" in d else DEFAULT_VO)


def queue_job_counts(snap: GridSnapshot, name: str) -> list[dict[str, Any]]:
    """Jobs at the queue per global share and status, per VO and share when jobs of several VOs are there (JEDI
    counts each VO's apart).

    Usage: ``queue_job_counts(snap, "CERN_MCORE")[0]["gshare"]``
    """
    d = _queue_counts(snap, name)
    if d.empty:
        return []
    index = ["vo", "gshare"] if d["vo"].nunique() > 1 else "gshare"
    piv = d.pivot_table(index=index, columns="jobstatus", values="njobs", aggfunc="sum", fill_value=0).reset_index()
    return records(piv)


def queue_vo_counts(snap: GridSnapshot, name: str) -> list[dict[str, Any]]:
    """Jobs at the queue per VO and status (with a total), one row per VO, atlas first; [] when one VO or none has
    jobs there (the queues table's counts then need no breakdown).

    Usage: ``queue_vo_counts(snap, "SHARED_QUEUE")  # [{"vo": "atlas", "running": 10, ..., "total": 12}, ...]``
    """
    d = _queue_counts(snap, name)
    if d["vo"].nunique() < 2:
        return []
    piv = d.pivot_table(index="vo", columns="jobstatus", values="njobs", aggfunc="sum", fill_value=0)
    statuses = [s for s in JOB_STATUSES if s in piv.columns]
    piv = piv[statuses].assign(total=piv[statuses].sum(axis=1))
    piv = piv.loc[sorted(piv.index, key=lambda v: (v != DEFAULT_VO, v))].reset_index()
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
