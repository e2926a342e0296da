"""PanDA 1.0.4's input-on-disk sizes for the production weight (switch ``data_weight_as_jedi``) and the analysis
data weight (switch ``anal_weight_as_jedi``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from brokerage.model import views
from brokerage.model.profiles import rule

GIB = 1024.0**3
MAX_FILES = 20000  # the converter describes a dataset as at most this many equal files
MAX_RECORDS = 400000  # ... and an analysis task's into event ranges while that gives at most this many records


def records_per_file(nfiles: int, nevents: float, per_job: int) -> int:
    """How many records (event ranges) JEDI's contents hold per file of a master dataset cut by nEventsPerJob
    PER_JOB: ceil(events per file / PER_JOB) when PER_JOB is below the file's events, else 1 (as the crosscheck
    converter records them; whole files beyond MAX_RECORDS records). Usage: ``records_per_file(20, 20000, 100) == 10``"""
    n = max(1, min(int(nfiles), MAX_FILES))
    nev = int(float(nevents) // n) if nevents else 0
    pieces = -(-nev // per_job) if nev and 0 < per_job < nev else 1
    return 1 if n * pieces > MAX_RECORDS else pieces


def _local_files(n: int, complete: np.ndarray, any_at: Any, tape: np.ndarray, partial: np.ndarray) -> np.ndarray:
    """Per queue the files getAvailableFiles calls local disk: all N where a complete replica is on disk, none where
    the complete replicas are on tape only, else PARTIAL (the files of its partial disk replicas)."""
    return np.where(any_at(complete), np.where(any_at(complete & ~tape), float(n), 0.0), partial)  # fmt: skip


def files_at_endpoints(reps: pd.DataFrame, datasetid: Any, ep: Any, cap: int, total: int | None = None) -> np.ndarray:
    """Per endpoint of EP the files of dataset DATASETID its replicas in REPS hold, at most CAP (the best replica
    where an endpoint has several). With TOTAL (the dataset's files) a replica's files are scaled to CAP files as the
    converter describes a dataset of more than MAX_FILES files (the same fraction, rounded).

    Usage: ``found = files_at_endpoints(reps, d["datasetid"], ctx.ep, n, int(d["nfiles"]))``
    """
    scale = cap / max(total, 1) if total is not None else 1.0
    found = np.zeros(len(ep.name))
    for r in reps[reps["datasetid"] == datasetid].to_dict("records"):
        i = ep.index.get(r["ddm_endpoint_name"])
        if i is not None:
            held = round(int(r["nfiles"]) * scale) if total is not None else int(r["nfiles"])
            found[i] = max(found[i], min(held, cap))
    return found


def jedi_local_disk(ctx: Any) -> dict[str, Any]:
    """Per queue the input JEDI's weight counts as local (AtlasDDMClient.getAvailableFiles, localdisk only): per
    dataset, a queue with a complete replica at one of its endpoints has every file local if one complete replica is
    on disk, else none (no file lookup); without a complete replica, the files of its partial disk replicas, unless
    the dataset is a secondary or ioIntensity > IO_INTENSITY_CUTOFF without pre-staging (complete replicas only). Merge jobs count any replica as
    complete. Returns ``total_gb``, ``total_files`` and per-queue ``disk_gb``, ``disk_files``.

    Usage: ``jedi_local_disk(ctx)["disk_gb"][i]``
    """
    snap, qa, ep, t = ctx.cache.snap, ctx.qa, ctx.ep, ctx.task
    tid = int(t["jeditaskid"])
    ds = snap.datasets[(snap.datasets["jeditaskid"] == tid) & (snap.datasets["nfiles"].astype(int) > 0)]
    if t.get("taskbrokeronmaster") and not rule(ctx.config, "job_broker_all_datasets"):
        ds = ds[ds["is_master"].astype(bool)]
    reps = snap.dataset_replicas[snap.dataset_replicas["jeditaskid"] == tid]
    io, cutoff = t.get("iointensity"), ctx.config["IO_INTENSITY_CUTOFF"]
    complete_only = io is not None and io == io and bool(io) and float(io) > float(cutoff)
    complete_only = complete_only and not t.get("inputprestaging")
    tape = ep["is_tape"].astype(bool)
    rq, re_ = qa.rel_queue, qa.rel_endpoint

    def any_at(mask: np.ndarray) -> np.ndarray:
        return np.bincount(rq, weights=mask[re_].astype(float), minlength=qa.n) > 0

    out = {"total_gb": 0.0, "total_files": 0.0, "disk_gb": np.zeros(qa.n), "disk_files": np.zeros(qa.n)}
    for d in ds.to_dict("records"):
        total = int(d["nfiles"])
        n = max(1, min(total, MAX_FILES))
        per_gb = float(int(float(d["size_gb"]) * GIB / n)) / GIB
        found = files_at_endpoints(reps, d["datasetid"], ep, n, total)
        complete = found > 0 if ctx.merge else found >= n
        partial = np.zeros(qa.n)
        if (
            not complete_only and bool(d["is_master"]) and len(rq)
        ):  # complete replicas only for secondaries  # complete replicas only for secondaries
            np.maximum.at(partial, rq, np.where(tape, 0.0, found)[re_])
        files = _local_files(n, complete, any_at, tape, partial)
        out["total_gb"] += n * per_gb
        out["total_files"] += n
        out["disk_files"] += files
        out["disk_gb"] += files * per_gb
    return out


def jedi_anal_local_disk(ctx: Any) -> dict[str, Any]:
    """The analysis broker's input sizes (AtlasAnalJobBroker.py:1775-1840): getAvailableFiles over the queues'
    analysis-scope endpoints, without the completeness check for merge chunks (any replica is complete) and with
    complete replicas only for secondary datasets; every record counts its file's size, so a master file cut into
    event ranges counts once per range. Returns whole GB: ``total_gb`` and per queue ``disk_gb``.

    Usage: ``jedi_anal_local_disk(ctx)["disk_gb"][i]``
    """
    snap, ep, t = ctx.cache.snap, ctx.ep, ctx.task
    tid = int(t["jeditaskid"])
    ds = snap.datasets[(snap.datasets["jeditaskid"] == tid) & (snap.datasets["nfiles"].astype(int) > 0)]
    reps = snap.dataset_replicas[snap.dataset_replicas["jeditaskid"] == tid]
    qa = views.queue_arrays(ctx.cache)
    rq, re_ = views.input_relations(qa, t.get("prodsourcelabel"))
    tape = ep["is_tape"].astype(bool)
    merge = bool(t.get("is_merge"))

    def any_at(mask: np.ndarray) -> np.ndarray:
        return np.bincount(rq, weights=mask[re_].astype(float), minlength=qa.n) > 0

    total, disk = 0, np.zeros(qa.n, dtype=np.int64)
    for d in ds.to_dict("records"):
        n = max(1, min(int(d["nfiles"]), MAX_FILES))
        fsize = int(float(d["size_gb"]) * GIB / n)
        master = bool(d["is_master"])
        pieces = records_per_file(n, float(d["nevents"]), int(t.get("chunk_nevents") or 0)) if master else 1
        found = files_at_endpoints(reps, d["datasetid"], ep, n)
        complete = found > 0 if merge else found >= n
        partial = np.zeros(qa.n)
        if master and len(rq):
            np.maximum.at(partial, rq, np.where(tape, 0.0, found)[re_])
        files = _local_files(n, complete, any_at, tape, partial)
        total += n * pieces * fsize
        disk += files.astype(np.int64) * pieces * fsize
    return {"total_gb": float(total // int(GIB)), "disk_gb": (disk // int(GIB)).astype(float)}
